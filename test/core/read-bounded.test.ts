import { describe, expect, it } from 'vitest';
import { readBounded } from '../../src/core/read-bounded.js';

/** A body of `chunks` (each `size` bytes), then its end or, with `breakWith`, that error; counts what was pulled and whether it was cancelled. */
function body(chunks: number, size: number, breakWith?: Error) {
  const seen = { pulled: 0, cancelled: false };
  let left = chunks;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (left-- > 0) {
        seen.pulled += size;
        return controller.enqueue(new Uint8Array(size));
      }
      if (breakWith) controller.error(breakWith);
      else controller.close();
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { from: { body: stream }, seen };
}

const asIs = (error: unknown) => error;

describe('a bounded read of a body', () => {
  it('gives the whole body when it is within the limit', async () => {
    const { from } = body(3, 10);
    expect(await readBounded(from, 30, asIs)).toHaveLength(30);
  });

  it('stops as soon as the body passes the limit, cancelling the rest: too_large', async () => {
    const { from, seen } = body(1_000, 1024);
    expect(await readBounded(from, 4 * 1024, asIs)).toBe('too_large');
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThan(16 * 1024);
  });

  it('keeps the first maxBytes of a body past the limit when asked to cut it, cancelling the rest', async () => {
    const { from, seen } = body(1_000, 1000);
    const read = await readBounded(from, 4 * 1024, asIs, { cut: true });
    expect(read).toHaveLength(4 * 1024);
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThan(16 * 1024);
    // Within the limit, cutting changes nothing.
    expect(await readBounded(body(3, 10).from, 30, asIs, { cut: true })).toHaveLength(30);
  });

  it('rejects a body that breaks with what its reader makes of the error', async () => {
    const broke = new Error('the connection broke');
    const { from } = body(2, 10, broke);
    await expect(readBounded(from, 1024, asIs)).rejects.toBe(broke);
    await expect(readBounded(body(2, 10, broke).from, 1024, () => new Error('reset'))).rejects.toThrow('reset');
  });

  it('reads a body that is not there as empty', async () => {
    expect(await readBounded({ body: null }, 10, asIs)).toHaveLength(0);
  });
});
