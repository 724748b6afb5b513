import { say } from '../runner/index.js';
import type { BotContext } from './bot-context.js';
import { attachmentLimitOf } from './discord-facts.js';
import { madeCount, whyNotRunAgain } from './job-rules.js';
import type { FinalShown, JobRecord, ReplyHandle } from './JobRecordStore.js';
import { JobView, type Completed } from './JobView.js';
import { loggableError } from './loggable-error.js';
import { headerOf, renderResultGone } from './render-job.js';
import { ReplyTarget } from './ReplyTarget.js';
import { keptImagesOf, renderRecordedEnd } from './sweep-interrupted.js';

/**
 * A job's end no message took (`JobRecord.unshown`: its reply's edit refused, and the channel too), shown privately to
 * who pressed its leftover Cancel (`pressed`: that press's token, answered with a private deferral; its member, or an
 * admin): as its message would have shown it — a result with the images still kept (a note says how many are not; none
 * kept, a line says they were made and charged), a failure or cancellation with the images it came with — its buttons
 * beside it. Past the press's token it goes to that presser's DM, never to the channel. Nothing is marked or recorded:
 * the job ended, its end recorded, and the message clicked is left as it is. Answers whether it reached Discord.
 */
export async function showKeptEnd(ctx: BotContext, record: JobRecord, unshown: FinalShown, pressed: ReplyHandle & { userId: string }): Promise<boolean> {
  const header = headerOf(record);
  const target = new ReplyTarget({
    webhookRest: ctx.webhookRest,
    botRest: ctx.botRest,
    applicationId: pressed.applicationId,
    token: pressed.token,
    issuedAt: pressed.issuedAt,
    channelId: record.requester.channelId,
    userId: pressed.userId,
    locale: header.locale,
    attachmentSizeLimit: attachmentLimitOf(record.result),
    fallback: 'dm',
    ephemeral: true,
    logger: ctx.logger,
    finalAttempts: 2,
    retryDelaysMs: ctx.replyRetryDelaysMs,
    stop: ctx.repliesGivenUp,
  });
  const view = new JobView({ target, header, store: ctx.store, attachmentSizeLimit: attachmentLimitOf(record.result), logger: ctx.logger });
  const { images, formats, indices } = await keptImagesOf(ctx, record);
  const made = madeCount(record);
  let shown = false;
  try {
    if (unshown.type !== 'completed') {
      const which = images.length > 0 ? { indices, made } : undefined;
      shown = await view.showEnd(renderRecordedEnd(header, record, unshown, whyNotRunAgain(record, Date.now()) === undefined, which), images.length > 0 ? { images, formats } : undefined, which);
    } else if (images.length === 0) {
      shown = (await target.final([renderResultGone(header)])).first;
    } else {
      let completed: Completed | undefined;
      if (record.result) {
        const { attachmentSizeLimit: _limit, ...facts } = record.result;
        completed = { type: 'completed', jobId: record.runnerJobId ?? '', ...facts, images, formats, usage: undefined };
      }
      const missing = made - images.length;
      const notes = missing > 0 ? [say(header.locale, 'discord.job.some_no_longer_kept', { missing, made })] : [];
      await view.showResult(completed ?? { type: 'kept', images, formats }, { indices, made, notes });
      shown = view.resultShown;
    }
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not show privately the end of a job no message took');
    return false;
  }
  const fields = { jobKey: record.key, status: unshown.type, by: `discord:${pressed.userId}`, images: images.length };
  if (shown) ctx.logger.info(fields, 'showed privately, on a Cancel, the end of a job no message took');
  else ctx.logger.warn(fields, 'could not show privately the end of a job no message took (Discord took no message of it)');
  return shown;
}
