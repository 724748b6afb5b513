/** The body's declared `content-length`, when it is a plain non-negative integer. */
export function declaredLength(request: Request): number | undefined {
  const raw = request.headers.get('content-length');
  if (raw === null || !/^\d+$/.test(raw.trim())) return undefined;
  return Number(raw);
}

/** What a body is read from: a request a server took, or the response a `fetch` got. */
export type WithBody = Pick<Request, 'body'> | Pick<Response, 'body'>;

/**
 * What a body that breaks mid-read rejects with, given the error it broke with: every reader says (a server that must
 * not answer such a request turns it into a reset connection; a reader of a response keeps fetch's error as it is,
 * with its code: `(error) => error`).
 */
export type BrokenBody = (error: unknown) => unknown;

/** `cut`: a body past the limit gives its first `maxBytes` (the start of an error page says what went wrong) instead of nothing. */
export interface BoundedReadOptions {
  cut?: boolean | undefined;
}

/**
 * Yields the body's chunks, counting as it goes: as soon as more than
 * `maxBytes` have arrived it stops reading (cancels the body) and yields
 * nothing more — with `cut`, the part of that chunk within the limit first —
 * returning `'too_large'`. A body that breaks rejects with `broken`'s error.
 */
export async function* boundedChunks(from: WithBody, maxBytes: number, broken: BrokenBody, options: BoundedReadOptions = {}): AsyncGenerator<Uint8Array, 'ok' | 'too_large'> {
  if (!from.body) return 'ok';
  const reader = from.body.getReader();
  let size = 0;
  try {
    for (;;) {
      let result: Awaited<ReturnType<typeof reader.read>>;
      try {
        result = await reader.read();
      } catch (error) {
        throw broken(error);
      }
      if (result.done) return 'ok';
      size += result.value.byteLength;
      if (size > maxBytes) {
        if (options.cut) yield result.value.subarray(0, result.value.byteLength - (size - maxBytes));
        return 'too_large';
      }
      yield result.value;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/**
 * Reads a whole body of at most `maxBytes` (a small one: a JSON request, a JSON answer, an error answer); `broken` as
 * for `boundedChunks`. A longer one is `'too_large'`, or with `cut` its first `maxBytes`.
 */
export async function readBounded(from: WithBody, maxBytes: number, broken: BrokenBody, options: BoundedReadOptions & { cut: true }): Promise<Buffer>;
export async function readBounded(from: WithBody, maxBytes: number, broken: BrokenBody, options?: BoundedReadOptions): Promise<Buffer | 'too_large'>;
export async function readBounded(from: WithBody, maxBytes: number, broken: BrokenBody, options: BoundedReadOptions = {}): Promise<Buffer | 'too_large'> {
  const chunks: Uint8Array[] = [];
  const it = boundedChunks(from, maxBytes, broken, options);
  for (;;) {
    const next = await it.next();
    if (next.done) return next.value === 'too_large' && !options.cut ? 'too_large' : Buffer.concat(chunks);
    chunks.push(next.value);
  }
}
