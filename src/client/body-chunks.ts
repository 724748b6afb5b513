/**
 * How a body's read ended when it did not end cleanly: the error its read threw (a reset, a body cut short of its
 * length or its last chunk, an idle timeout, the request's abort with its reason).
 */
export interface BrokenOff {
  error: unknown;
}

/**
 * The chunks of a response body as they come. A read that breaks ends them, its error handed back as the
 * generator's return value (`BrokenOff`) rather than thrown: the reader tells the body's own failure from one of its
 * own, and can first hand on what came whole before it (a paid image). A body that ends cleanly returns undefined.
 */
export async function* bodyChunks(body: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer, BrokenOff | undefined, undefined> {
  try {
    for await (const chunk of body) yield chunk as Buffer;
  } catch (error) {
    return { error };
  }
  return undefined;
}
