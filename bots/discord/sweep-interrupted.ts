import type { REST } from 'discord.js';
import { isDmScope } from '../runner/index.js';
import type { BotContext } from './bot-context.js';
import type { JobRecord } from './JobRecordStore.js';
import { loggableError } from './loggable-error.js';
import { headerOf, renderInterrupted } from './render-job.js';
import { ReplyTarget } from './ReplyTarget.js';

/**
 * At start: jobs a dead process left pending or running still show
 * "Drawing…" and a Cancel button. Each reply is edited to say the job was
 * interrupted, with Retry — through the saved interaction token while it is
 * valid (15 minutes), else as a short channel message mentioning the
 * requester. Returns how many were swept.
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
