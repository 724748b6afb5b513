import { createHash } from 'node:crypto';
import { ImageLimiter } from '../../../src/core/image-limiter.js';
import { normalizeBaseURL } from '../../../src/client/base-url.js';

/** Which account and limits a throttle stands for. */
export interface ThrottleKey {
  baseURL: string;
  apiKey: string;
  /** Undefined: no pacing by images (429s still pause everyone sharing the limiter). */
  imagesPerMinute: number | undefined;
  maxConcurrent: number;
}

/**
 * One limiter per account and limits for the whole n8n process: every
 * execution of every workflow that uses the same credential and limits shares
 * it, so 50 items, or several workflows at once, stay under the account limit.
 */
const limiters = new Map<string, ImageLimiter>();

/** The registry key: base URL, a hash of the key (never the key itself), and the limits. */
export function throttleId(key: ThrottleKey): string {
  const keyHash = createHash('sha256').update(key.apiKey).digest('hex').slice(0, 16);
  return [normalizeBaseURL(key.baseURL), keyHash, key.imagesPerMinute ?? 'unpaced', key.maxConcurrent].join('|');
}

/** The shared limiter for these settings, made on first use. The only place limiters are created. */
export function limiterFor(key: ThrottleKey): ImageLimiter {
  const id = throttleId(key);
  let limiter = limiters.get(id);
  if (!limiter) {
    limiter = new ImageLimiter({
      id: `n8n-nodes-pictor|${id}`,
      imagesPerMinute: key.imagesPerMinute,
      maxConcurrent: key.maxConcurrent,
      // Our bucket refills in steps, the service's continuously: one image of headroom keeps us from running ahead of it.
      headroomImages: 1,
    });
    limiters.set(id, limiter);
  }
  return limiter;
}
