import type { REST } from 'discord.js';
import { isDmScope } from '../runner/index.js';
import { botSpaces } from '../state/index.js';
import type { BotContext } from './bot-context.js';
import type { JobRecord } from './JobRecordStore.js';
import { loggableError } from './loggable-error.js';
import { JobView, type Completed } from './JobView.js';
import { headerOf, renderInterrupted, renderResultGone, type JobHeader } from './render-job.js';
import { ReplyTarget } from './ReplyTarget.js';

/** How long the images of a Discord job are kept (the images space's TTL). */
const KEPT_IMAGES_MS = botSpaces().discordImages.ttlMs;

/**
 * At start: jobs a dead process left pending or running still show
 * "Drawing…" and a Cancel button. Each reply is edited to say the job was
 * interrupted, with Retry — through the saved interaction token while it is
 * valid (15 minutes), else as a short channel message mentioning the
 * requester. A job that finished, its images saved, before its result was
 * shown gets that result instead (a Retry would charge again); when its
 * images are no longer kept, it says so. Returns how many were swept.
 */
export async function sweepInterrupted(ctx: BotContext, botRest: REST, records: readonly JobRecord[]): Promise<number> {
  for (const record of records) {
    const header = headerOf(record);
    const target = new ReplyTarget({
      webhookRest: ctx.webhookRest,
      botRest,
      applicationId: record.reply?.applicationId ?? '',
      token: record.reply?.token ?? '',
      // Without a saved token, only the channel is left.
      issuedAt: record.reply?.issuedAt ?? 0,
      channelId: record.requester.channelId,
      userId: record.requester.userId,
      locale: header.locale,
      // A DM or user-install job: the bot may not post in that channel, so by DM; a private job is not for the channel either.
      fallback: isDmScope(record.requester.scopeId) || record.private === true ? 'dm' : 'channel',
      ephemeral: record.private === true,
      logger: ctx.logger,
      finalAttempts: 2,
    });
    // Its result was made (and charged) and saved — its facts, its images or both — but the process stopped before the
    // result reached Discord: a Retry would charge again, even when no image could be kept (every write failed).
    if (record.result !== undefined || record.outputs.length > 0) {
      // Older than its images can be kept: most likely shown long ago by a process that could not mark it ended, and
      // anything said now (its result again, or "no longer kept") would come out of the blue — it is only marked.
      if (Date.now() - (record.reply?.issuedAt ?? record.createdAt) > KEPT_IMAGES_MS) {
        await ctx.store.update(record.key, { status: record.result ? 'completed' : 'failed' });
        ctx.logger.info({ jobKey: record.key }, 'marked ended, saying nothing, a job older than its kept images that the last stop left with its result');
        continue;
      }
      await showKeptResult(ctx, record, header, target);
      continue;
    }
    try {
      const shown = await target.final([renderInterrupted(header)]);
      ctx.logger.info({ jobKey: record.key, shown, via: target.mode }, 'marked a job interrupted by the last stop');
    } catch (error) {
      ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not mark a job interrupted by the last stop');
    }
    await ctx.store.update(record.key, { status: 'failed' });
  }
  return records.length;
}

/** A finished job's saved result as its final message (as the process that ran it would have shown it), or, its images gone, a line saying they were made. */
async function showKeptResult(ctx: BotContext, record: JobRecord, header: JobHeader, target: ReplyTarget): Promise<void> {
  const images: Buffer[] = [];
  for (const index of record.outputs.keys()) {
    const image = await ctx.store.readOutput(record.key, index).catch(() => undefined);
    if (image) images.push(image.data);
  }
  const { result } = record;
  if (result && images.length > 0 && images.length === record.outputs.length) {
    const { attachmentSizeLimit, ...facts } = result;
    const view = new JobView({ target, header, store: ctx.store, attachmentSizeLimit, logger: ctx.logger });
    const completed: Completed = { type: 'completed', jobId: record.runnerJobId ?? '', images, usage: undefined, ...facts };
    try {
      await view.showResult(completed);
      ctx.logger.info({ jobKey: record.key, images: images.length, via: target.mode }, 'showed the result of a job the last stop left unshown');
    } catch (error) {
      if (view.resultShown) ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'showed the result of a job the last stop left unshown, but could not mark it ended');
      else ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not show the result of a job the last stop left unshown');
    }
    if (view.resultShown) {
      // The runner keeps a job in the member's history once its final update is shown, which never happened: kept here.
      const { key, kind, prompt, options, requester } = record;
      await ctx.runner.history?.recordEnd(requester, { key, kind, prompt, options, private: record.private === true }, completed);
      return;
    }
  } else {
    try {
      await target.final([renderResultGone(header)]);
      ctx.logger.info({ jobKey: record.key, via: target.mode }, 'said a job the last stop left unshown has its images no longer kept');
    } catch (error) {
      ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not say a job the last stop left unshown has its images no longer kept');
    }
  }
  await ctx.store.update(record.key, { status: 'failed' });
}
