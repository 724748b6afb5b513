import { connectionResetError } from './faults.js';

/** The body's declared `content-length`, when it is a plain non-negative integer. */
export function declaredLength(request: Request): number | undefined {
  const raw = request.headers.get('content-length');
  if (raw === null || !/^\d+$/.test(raw.trim())) return undefined;
  return Number(raw);
}

/**
 * Yields the body's chunks, counting as it goes: as soon as more than
 * `maxBytes` have arrived it stops reading (cancels the body) and yields
 * nothing more, returning `'too_large'`. A body that breaks (the caller went
 * away) rejects as a reset connection, so it is not answered.
 */
export async function* boundedChunks(request: Request, maxBytes: number): AsyncGenerator<Uint8Array, 'ok' | 'too_large'> {
  if (!request.body) return 'ok';
  const reader = request.body.getReader();
  let size = 0;
  try {
    for (;;) {
      let result: Awaited<ReturnType<typeof reader.read>>;
      try {
        result = await reader.read();
      } catch {
        throw connectionResetError('before_response');
      }
      if (result.done) return 'ok';
      size += result.value.byteLength;
      if (size > maxBytes) return 'too_large';
      yield result.value;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** Reads a whole body of at most `maxBytes` (a small one: a JSON request). */
export async function readBounded(request: Request, maxBytes: number): Promise<Buffer | 'too_large'> {
  const chunks: Uint8Array[] = [];
  const it = boundedChunks(request, maxBytes);
  for (;;) {
    const next = await it.next();
    if (next.done) return next.value === 'too_large' ? 'too_large' : Buffer.concat(chunks);
    chunks.push(next.value);
  }
}
