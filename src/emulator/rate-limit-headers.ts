import type { TokenBucket } from './token-bucket.js';

/**
 * A duration the way the service writes `x-ratelimit-reset-*` (Go style):
 * `17ms`, `1s`, `1.5s`, `6m0s`, `1h2m3s`.
 */
export function formatResetDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const secondsMs = total % 60_000;
  const seconds = `${(secondsMs / 1000).toFixed(3).replace(/\.?0+$/, '')}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}

/** The `x-ratelimit-*-requests` headers sent on every answer while a limit is set. */
export function rateLimitHeaders(bucket: TokenBucket): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(bucket.capacity),
    'x-ratelimit-remaining-requests': String(bucket.remaining()),
    'x-ratelimit-reset-requests': formatResetDuration(bucket.msUntilFull()),
  };
}
