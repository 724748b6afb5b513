import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { measureEditMemory } from '../../helpers/edit-memory.js';

const MiB = 1024 * 1024;
/** What the docs promise a bot process holds for edits: idle, plus 1.2 × the input images held, plus 64 MB (uncollected garbage: at this reduced scale, 145–152 MiB above idle for 96 MiB held on a quiet machine, 163 MiB under a load of 12). */
const allowedAboveIdle = (heldBytes: number) => 1.2 * heldBytes + 64 * MiB;

describe.skipIf(!existsSync('/proc/self/status'))('what a bot process holds while it runs edits (its own process, VmHWM)', () => {
  it('holds each input image about once: peak RSS within idle + 1.2 × the input bytes held + 64 MB, and the bytes held within the bound', async () => {
    // Reduced from the defaults (512 MB, bench/edit-memory.ts) so it stays quick: three members at once, 16 images of 2 MiB each.
    const bound = 96 * MiB;
    const result = await measureEditMemory({ edits: [1, 2, 3].map(() => ({ images: 16, imageBytes: 2 * MiB })), maxQueuedInputBytes: bound, latencyMs: 100 });
    expect(result.completed).toBe(3);
    expect(result.maxInputBytesHeld).toBeGreaterThan(0);
    expect(result.maxInputBytesHeld).toBeLessThanOrEqual(bound);
    expect(result.peakRss - result.idleRss).toBeLessThanOrEqual(allowedAboveIdle(result.maxInputBytesHeld));
  }, 120_000);
});
