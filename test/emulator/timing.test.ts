import { describe, expect, it } from 'vitest';
import { describeTiming, imageTimeMs, SERVICE_LIKE_LATENCY_MS } from '../../src/emulator/timing.js';
import { createEmulator } from '../../src/emulator/index.js';

describe('emulator timing', () => {
  it('is flat unless scaled: every image takes latencyMs', () => {
    expect(imageTimeMs(1000, false, '1536x1024', 'high')).toBe(1000);
  });

  it('scales the base time with quality and with pixels when service-like', () => {
    expect(imageTimeMs(1000, true, '1024x1024', 'medium')).toBe(1000);
    expect(imageTimeMs(1000, true, '1024x1024', 'auto')).toBe(1000);
    expect(imageTimeMs(1000, true, 'auto', 'low')).toBe(500);
    expect(imageTimeMs(1000, true, '1024x1024', 'high')).toBe(2000);
    expect(imageTimeMs(1000, true, '1536x1024', 'high')).toBe(3000);
    expect(imageTimeMs(0, true, '1536x1024', 'high')).toBe(0);
  });

  it('stays instant by default for the library (tests), service-like only where an entry point asks', () => {
    const emulator = createEmulator();
    expect(emulator.settings).toMatchObject({ latencyMs: 0, latencyScales: false });
    expect(SERVICE_LIKE_LATENCY_MS).toBeGreaterThanOrEqual(3000);
  });

  it('says in its start banner how long an image takes as every time taken is said: never "0 s" for a latency under a second, nor "6.0 s" for 6 s', () => {
    expect(describeTiming(30, false)).toBe('takes 30 ms per image');
    expect(describeTiming(40, true)).toBe('takes about 40 ms per medium 1024x1024 image (low 20 ms, high 80 ms), partial images spread across it');
    expect(describeTiming(1_500, false)).toBe('takes 1.5 s per image');
    expect(describeTiming(2_000, false)).toBe('takes 2 s per image');
    expect(describeTiming(SERVICE_LIKE_LATENCY_MS, true)).toBe('takes about 6 s per medium 1024x1024 image (low 3 s, high 12 s), partial images spread across it');
    expect(describeTiming(0, true)).toBe('answers instantly (latency 0)');
  });
});
