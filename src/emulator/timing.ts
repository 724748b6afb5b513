import { describeElapsed } from '../core/describe-duration.js';
import type { Quality } from '../spec/index.js';
import { resolveQuality, type ConcreteQuality } from './usage.js';

/**
 * The service-like base time per image, in ms, that the entry points use when
 * nothing is configured: a medium-quality 1024×1024 image takes 6 s (low 3 s,
 * high 12 s), so partial images are seen arriving.
 */
export const SERVICE_LIKE_LATENCY_MS = 6000;

const QUALITY_FACTOR: Record<ConcreteQuality, number> = { low: 0.5, medium: 1, high: 2 };
const BASE_PIXELS = 1024 * 1024;

/**
 * How long one image takes. Flat, it is `latencyMs` whatever was asked. Scaled
 * (service-like), `latencyMs` is the time of a medium-quality 1024×1024 image:
 * low takes half, high twice; other sizes in proportion to their pixels
 * (`auto` counts as 1024×1024).
 */
export function imageTimeMs(latencyMs: number, scaled: boolean, size: string, quality: Quality): number {
  if (!scaled || latencyMs === 0) return latencyMs;
  const resolved = resolveQuality(quality);
  const factor = QUALITY_FACTOR[resolved];
  const match = /^(\d+)x(\d+)$/.exec(size);
  const pixels = match ? Number(match[1]) * Number(match[2]) : BASE_PIXELS;
  return Math.round(latencyMs * factor * (pixels / BASE_PIXELS));
}

/** One line saying how fast an emulator with these settings answers, for start banners. */
export function describeTiming(latencyMs: number, scaled: boolean): string {
  if (latencyMs === 0) return 'answers instantly (latency 0)';
  // Said as every time taken is (`30 ms`, `1.5 s`, `6 s`): never "0 s" for a latency under 50 ms.
  const s = describeElapsed;
  if (!scaled) return `takes ${s(latencyMs)} per image`;
  return `takes about ${s(latencyMs)} per medium 1024x1024 image (low ${s(latencyMs * 0.5)}, high ${s(latencyMs * 2)}), partial images spread across it`;
}
