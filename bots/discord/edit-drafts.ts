import type { InputImage } from '../runner/index.js';
import type { BotContext } from './bot-context.js';
import { downloadImages, type AttachmentSource } from './download-images.js';

/** How long a finished draft download stays in memory for its modal (the store keeps the images anyway). */
const KEEP_IN_MEMORY_MS = 15 * 60_000;

/** Starts downloading a draft's images while the user types the prompt; the modal's submit awaits it. */
export function fetchDraftImages(ctx: BotContext, key: string, sources: readonly AttachmentSource[]): void {
  const download = (async () => {
    const images = await downloadImages(sources, ctx.downloadPolicy);
    await ctx.store.setInputs(key, images);
    return images;
  })();
  ctx.pendingDownloads.set(key, download);
  // A refusal is shown when the modal is submitted; until then it must not count as unhandled.
  download.catch(() => {});
  void download.finally(() => setTimeout(() => ctx.pendingDownloads.delete(key), KEEP_IN_MEMORY_MS).unref()).catch(() => {});
}

/** A draft's images: the download under way, the saved copies, or (after a restart mid-download) a new download. */
export async function draftImages(ctx: BotContext, key: string): Promise<InputImage[]> {
  const pending = ctx.pendingDownloads.get(key);
  if (pending) return pending;
  const record = ctx.store.get(key);
  if (record && record.inputs.length) return ctx.store.readInputs(key);
  const images = await downloadImages(record?.sources ?? [], ctx.downloadPolicy);
  await ctx.store.setInputs(key, images);
  return images;
}
