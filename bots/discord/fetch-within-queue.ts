import type { InputImage, Requester } from '../runner/index.js';
import type { BotContext } from './bot-context.js';

/**
 * Fetches an edit's images (a download, or a read of kept images) while the
 * runner holds room for them in its queue, sized by what Discord or the store
 * reported (`declaredBytes`). When the queue has no room the job is refused
 * before anything is fetched: the runner's `queue_full` refusal is returned and
 * `fetch` is never called. Once the images are here the room is handed over to
 * them: their real bytes count until `submit` counts them as its job's (and
 * checks the queue again with them).
 */
export async function fetchWithinQueue(
  ctx: BotContext,
  requester: Requester,
  declaredBytes: number,
  fetch: () => Promise<InputImage[]>,
): Promise<{ images: InputImage[] } | { refusal: Error }> {
  const room = ctx.runner.holdInputRoom?.(requester, declaredBytes);
  if (room instanceof Error) return { refusal: room };
  let images: InputImage[];
  try {
    images = await fetch();
  } catch (error) {
    room?.release();
    throw error;
  }
  // Their own bytes count now, until the job's submit counts them (never uncounted on the way).
  room?.handOver(images);
  return { images };
}

/** The bytes of images as reported before they are fetched (an unknown size counts as 0: the real bytes are checked at submit). */
export function declaredBytesOf(images: readonly { size?: number | null | undefined; bytes?: number | undefined }[]): number {
  return images.reduce((sum, img) => sum + (img.size ?? img.bytes ?? 0), 0);
}
