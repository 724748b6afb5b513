import { describe, expect, it } from 'vitest';
import { backoffDelay, parseResetDuration, serviceWaitFromHeaders } from '../../src/internal.js';

// The wait the service named is read by one rule (`serviceWaitFromHeaders`): its retry-after forms first.
describe('retry timing', () => {
  it('prefers retry-after-ms to retry-after', () => {
    expect(serviceWaitFromHeaders({ 'retry-after-ms': '250', 'retry-after': '9' })).toBe(250);
  });

  it('reads retry-after in seconds', () => {
    expect(serviceWaitFromHeaders({ 'retry-after': '2' })).toBe(2000);
    expect(serviceWaitFromHeaders({ 'retry-after': '0' })).toBe(0);
  });

  it('reads retry-after as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(serviceWaitFromHeaders({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }, now)).toBe(5000);
  });

  it('says nothing when there is no usable header', () => {
    expect(serviceWaitFromHeaders({})).toBeUndefined();
    expect(serviceWaitFromHeaders({ 'retry-after': 'soon' })).toBeUndefined();
  });

  it('reports a very long wait as it is, for the caller to weigh against its timeout', () => {
    expect(serviceWaitFromHeaders({ 'retry-after': '86400' })).toBe(86_400_000);
  });

  it.each(['-5', 'abc 12', '12abc', '1e3', '', ' ', 'NaN', 'Infinity', '-1.5'])('ignores the garbage retry-after %j', (value) => {
    expect(serviceWaitFromHeaders({ 'retry-after': value })).toBeUndefined();
    expect(serviceWaitFromHeaders({ 'retry-after-ms': value })).toBeUndefined();
  });

  it('falls back from a garbage retry-after-ms to a valid retry-after', () => {
    expect(serviceWaitFromHeaders({ 'retry-after-ms': '-5', 'retry-after': '3' })).toBe(3000);
  });

  it('backs off exponentially from half a second to eight seconds, with jitter taken off', () => {
    expect(backoffDelay(0, () => 0)).toBe(500);
    expect(backoffDelay(1, () => 0)).toBe(1000);
    expect(backoffDelay(10, () => 0)).toBe(8000);
    expect(backoffDelay(0, () => 1)).toBe(375);
  });

  it('parses rate-limit reset durations', () => {
    expect(parseResetDuration('1s')).toBe(1000);
    expect(parseResetDuration('6m0s')).toBe(360_000);
    expect(parseResetDuration('250ms')).toBe(250);
    expect(parseResetDuration('1h2m3.5s')).toBe(3_723_500);
    expect(parseResetDuration('never')).toBeUndefined();
  });

  describe('the wait the service named', () => {
    it('is retry-after-ms, then retry-after, before the reset of the requests limit', () => {
      expect(serviceWaitFromHeaders({ 'retry-after-ms': '250', 'retry-after': '9', 'x-ratelimit-reset-requests': '6m0s' })).toBe(250);
      expect(serviceWaitFromHeaders({ 'retry-after': '9', 'x-ratelimit-reset-requests': '6m0s' })).toBe(9000);
    });

    it('is the reset of the requests limit when the answer names no retry-after', () => {
      expect(serviceWaitFromHeaders({ 'x-ratelimit-reset-requests': '6m0s' })).toBe(360_000);
      expect(serviceWaitFromHeaders({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1.5s' })).toBe(1500);
    });

    it('is not the reset of a requests limit that still has requests left, nor one it cannot read', () => {
      expect(serviceWaitFromHeaders({ 'x-ratelimit-remaining-requests': '12', 'x-ratelimit-reset-requests': '6m0s' })).toBeUndefined();
      expect(serviceWaitFromHeaders({ 'x-ratelimit-reset-requests': 'soon' })).toBeUndefined();
      expect(serviceWaitFromHeaders({})).toBeUndefined();
    });
  });
});
