import type { REST } from 'discord.js';
import { sniffImageType, type OutputFormat } from 'pictor';
import { say, userKeyOf } from '../runner/index.js';
import { endToRecord, isRunning } from '../state/index.js';
import type { BotContext } from './bot-context.js';
import { attachmentLimitOf } from './discord-facts.js';
import { KEPT_IMAGES_MS, madeCount, outputIndex, whyNotRunAgain } from './job-rules.js';
import type { FinalKept, FinalShown, JobRecord, ReplyHandle } from './JobRecordStore.js';
import { loggableError } from './loggable-error.js';
import { jobLinkOf } from './job-links.js';
import { JobView, type Completed, type MadeImages } from './JobView.js';
import { headerOf, renderCancelled, renderFailure, renderInterrupted, renderResultGone, type JobHeader, type OutgoingMessage, type ShownImages } from './render-job.js';
import { privacyOf, ReplyTarget } from './ReplyTarget.js';
import { jobEndOf, type JobEnd } from '../runner/job-history.js';
import { formatsOf } from '../runner/types.js';
import { stoppedEndOf, sweptCharges, type SweptCharge } from '../runner/swept-charges.js';

/**
 * At start: jobs a dead process left pending or running still show
 * "Drawing…" and a Cancel button. Each reply is edited to say the job was
 * interrupted, with Retry when it can run again (`whyNotRunAgain`) — through the saved interaction token while it is
 * valid (15 minutes), else as a short channel message mentioning the
 * requester. A job that finished, its images saved, before its result was
 * shown gets that result instead (a Retry would charge again); when its
 * images are no longer kept, it says so. A job whose end was shown but not yet
 * recorded (its record ended with its `end`, without `endRecorded`) gets that
 * end recorded, with the link to its reply while its token lives, and nothing
 * shown. A job whose end its runner recorded while its view could not mark it (its record kept that final, still
 * running) is marked ended, nothing shown, when its final message reached Discord (its first message: the end itself; a Cancel
 * on it shows that end in the message clicked, which still says "Drawing…"); else that end (a failure, a
 * cancellation, a result) is shown, not "interrupted". A job older than its kept images — its result saved, its end kept
 * so, or left "interrupted" by posts that failed at a sweep's try (`sweptAt`) — is marked ended saying nothing (it would
 * come out of the blue), unless a Cancel was pressed on it: then its end is shown in the message clicked; one that made
 * nothing and was never tried (the bot down a day) is still told "stopped". The recording of an end is not waited for (it waits for its audit entry's post, a couple of seconds): it is
 * handed to `ctx.track`, so the next record is shown at once and a stop's grace waits for it. What the ledger charged
 * them is read once for all of them (`charges`: a sweep's claim, `chargesOf`). Returns how many were swept.
 */
export async function sweepInterrupted(ctx: BotContext, botRest: REST, records: readonly JobRecord[], charges: Charges): Promise<number> {
  // One record that cannot be shown (its storage failing: `left`) never stops the others: it is left held, for the next to take it.
  for (const record of records) await showLeftover(ctx, record, leftoverTarget(ctx, botRest, record), { charges });
  return records.length;
}

/**
 * What the ledger charged the runner jobs of `records` (`sweptCharges`: a reconcile, each member's records and what is
 * still held, read once, at the first ask): one per sweep, given to `sweepInterrupted` for each record it shows.
 */
export function chargesOf(ctx: Pick<BotContext, 'ledger' | 'logger'>, records: readonly JobRecord[]): Charges {
  const jobs = records.flatMap((r) => (r.runnerJobId ? [{ jobId: r.runnerJobId, userKey: userKeyOf(r.requester), createdAt: r.createdAt }] : []));
  return sweptCharges(ctx.ledger, jobs, ctx.logger);
}

export type Charges = (jobId: string | undefined) => Promise<SweptCharge>;

/**
 * How the showing of a leftover record went: `shown`, its message reached Discord; `ended`, nothing was shown as none is
 * due (it ended, its end shown long ago or older than its kept images, or it is an end to record); `left`, a post, a
 * mark or its storage failed and the record is left as it was, held, for whoever takes it next (a Cancel on it, or the sweep that claims
 * it once its holder is gone); `busy`, another path of this process is showing it now.
 */
export type LeftoverShown = 'shown' | 'ended' | 'left' | 'busy';

/**
 * A Cancel on a running record no runner here knows and no live process holds: claimed first through the sweep's own
 * claim (`claimInterrupted`, a compare-and-set with Redis), so that of this Cancel and a sweep on any replica one
 * process only shows it — its end in the message clicked (`clicked`: the Cancel's own token, and who pressed it: another
 * member than the job's is told nothing privately with it), the others claimed with
 * it as the sweep shows them (after it, handed to `ctx.track`). Answers as `showLeftover` does, or `elsewhere` for a
 * record another live process claimed meanwhile (its sweep shows it), or `unclaimed` when the claim failed and this
 * process does not hold the record: nothing shown, nothing changed — a Cancel pressed again takes it (with Redis a
 * replica's sweep may first; with the data folder no sweep runs before the next start).
 */
export async function showClickedLeftover(ctx: BotContext, botRest: REST, record: JobRecord, clicked: ReplyHandle & { userId: string }): Promise<LeftoverShown | 'elsewhere' | 'unclaimed'> {
  // A claim that fails (Redis unreachable, a data folder that cannot be read) claims nothing: the record is shown only
  // when this process holds it (one path at a time here, `showAlone`) — not an error answered in the job's own message.
  const claimed = await ctx.store.claimInterrupted().catch((error: unknown) => {
    ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not claim what gone processes left for a Cancel on one of their jobs; shown only if this process holds it');
    return undefined;
  });
  const mine = claimed?.some((r) => r.key === record.key) ?? false;
  const others = claimed?.filter((r) => r.key !== record.key) ?? [];
  // What the ledger charged this record's job and the others claimed with it: read once for all of them, as a sweep's claim.
  const charges = chargesOf(ctx, [record, ...others]);
  try {
    // Neither claimed now nor held here (a Cancel on a job its runner forgot, a record this process's sweep claimed):
    // another live process holds it, whose sweep shows it. Its storage failing: nothing is shown, the record left as it
    // was (the member is told to press again).
    const elsewhere = !mine && (await ctx.store.runsElsewhere(record.key).catch((error: unknown) => (ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not tell whether another process holds a job a gone process left, on a Cancel of it; its record is left as it was'), undefined)));
    if (elsewhere === undefined) return 'left';
    if (elsewhere) return 'elsewhere';
    if (!claimed && !(await ctx.store.heldHere(record.key).catch(() => false))) return 'unclaimed';
    return await showLeftover(ctx, record, leftoverTarget(ctx, botRest, record, clicked, clicked.userId), { clicked: true, charges });
  } finally {
    // Shown one after another as the sweep does, once this one is: the member who pressed waits for it.
    if (others.length > 0) ctx.track(sweepInterrupted(ctx, botRest, others, charges));
  }
}

/**
 * Where a leftover record's end is shown: `reply` (the one saved with the record, or the message a button on it was
 * clicked in) while its token lives, else the channel — by DM for a DM or user-install job, or a private one. The
 * token is `tokenUserId`'s (the job's member's, or the member who clicked): what only the job's member is to see is not
 * posted with another's.
 */
export function leftoverTarget(ctx: BotContext, botRest: REST, record: JobRecord, reply: ReplyHandle | undefined = record.reply, tokenUserId: string = record.requester.userId): ReplyTarget {
  return new ReplyTarget({
    webhookRest: ctx.webhookRest,
    botRest,
    applicationId: reply?.applicationId ?? '',
    token: reply?.token ?? '',
    // Without a saved token, only the channel is left.
    issuedAt: reply?.issuedAt ?? 0,
    channelId: record.requester.channelId,
    userId: record.requester.userId,
    tokenUserId,
    locale: headerOf(record).locale,
    attachmentSizeLimit: attachmentLimitOf(record.result),
    ...privacyOf({ scopeId: record.requester.scopeId, private: record.private }),
    logger: ctx.logger,
    finalAttempts: 2,
    retryDelaysMs: ctx.replyRetryDelaysMs,
    stop: ctx.repliesGivenUp,
  });
}

/**
 * What a record its process left shows, and how it is marked — the sweep's for each record it claims, and a Cancel's on
 * a job no runner knows (its process stopped, or its runner forgot it long after it ended): an end to record is recorded,
 * showing nothing; a job that ended (its final kept) or whose result was saved shows that end, or nothing (see
 * `sweepInterrupted`); any other is shown "stopped when the bot restarted", with Retry when it can run again, and marked failed. A message
 * that did not reach Discord is not marked shown: the record stays running (a result with its end recorded, its final
 * kept), held by the process that claimed it, for a Cancel on it or the sweep that claims it once that process is gone
 * (its next start; with Redis a replica's too) — a "stopped" with the time of that try (`sweptAt`) — until it is older than its kept images, then ended saying nothing
 * (by a sweep: a Cancel on it, `clicked`, shows its end in the message clicked, which still says "Drawing…" — the end it kept, or "stopped"). Answers how it went (`LeftoverShown`):
 * `busy` when the other path of this process shows it, `ended` when that path showed it since `record` was read: one path
 * at a time shows a record, from the record as kept then (`JobRecordStore.showAlone`). Never throws: its storage failing
 * answers `left`, logged here (the sweep goes on with the next record, a Cancel tells its member to press again).
 */
export async function showLeftover(ctx: BotContext, record: JobRecord, target: ReplyTarget, options: { clicked?: boolean; charges: Charges }): Promise<LeftoverShown> {
  try {
    const shown = await ctx.store.showAlone(record, async (current): Promise<LeftoverShown> => {
      // Still what `record` was: running, or ended with its end to record (the sweep's); else the other path took it.
      if (!current || !(isRunning(current) || (!isRunning(record) && endToRecord(current)))) return 'ended';
      return showOnce(ctx, current, target, options.clicked === true, options.charges);
    });
    return shown ?? 'busy';
  } catch (error) {
    // Its storage failing: nothing more could be done now, the record left as it was, held, for whoever takes it next.
    ctx.logger.warn({ err: loggableError(error), jobKey: record.key, clicked: options.clicked === true }, 'could not show a job its process left; its record is left as it was');
    return 'left';
  }
}

async function showOnce(ctx: BotContext, record: JobRecord, target: ReplyTarget, clicked: boolean, charges: Charges): Promise<LeftoverShown> {
  const header = headerOf(record);
  const end = endToRecord(record);
  if (end) {
    // Not waited for here (it waits for its audit post): the next record is shown at once; a stop's grace waits for it.
    ctx.track(recordShownEnd(ctx, record, end, linkOf(ctx, record, target)));
    return 'ended';
  }
  // How it ended, when its runner recorded it and its view could not mark it (`final`), or when its result was made (and
  // charged) and saved — its facts, its images or both — before the process stopped: a Retry would charge again, even
  // when no image could be kept (every write failed).
  const final = record.final;
  // Older than its images can be kept: a result most likely shown long ago by a process that could not mark it ended,
  // or a "stopped" a sweep tried since (its `sweptAt`: its post failed — a channel the bot may no longer write to — or
  // reached Discord and its mark failed),
  // and anything said now would come out of the blue. Nothing is said: it is marked ended (a kept result's end recorded
  // if it was not: marked ended with it, recorded, released), rather than tried again at each start for as long as its
  // record is kept. A job that made nothing and was never tried (the bot down a day) is still told "stopped", below. One
  // a Cancel was pressed on (`clicked`) is shown as a younger one is, in the message clicked — its end kept (a failure, a
  // cancellation, a result: its images most likely no longer kept, which it says), or "stopped": that message says
  // "Drawing…", and nothing else would change it.
  const madeResult = final !== undefined || record.result !== undefined || record.outputs.length > 0;
  if (!clicked && (madeResult || record.sweptAt !== undefined) && Date.now() - (record.reply?.issuedAt ?? record.createdAt) > KEPT_IMAGES_MS) {
    return (await endQuietly(ctx, record, final?.type ?? (madeResult ? 'completed' : 'failed'))) ? 'ended' : 'left';
  }
  if (madeResult) {
    // Its final message reached Discord (only its mark failed): said again, a failure would lose the images shown with
    // it, a result would be told "no longer kept", and after the token a channel post would mention the requester.
    // Nothing is said: it is marked ended (its end recorded if it was not).
    // On a Cancel, though, the message clicked is the member's and still says "Drawing…" (that end went out as a new
    // message, its token expired, or the process stopped between keeping it as shown and its post): shown there.
    if (final && 'shown' in final) {
      if (!clicked) return (await endQuietly(ctx, record, final.type)) ? 'ended' : 'left';
      if (final.type === 'completed') return showKeptResult(ctx, record, header, target);
      return showRecordedEnd(ctx, record, header, target, final);
    }
    // Else that end is shown, not "interrupted": the failure or cancellation its view could not show, or the result.
    if (final && final.type !== 'completed') return showRecordedEnd(ctx, record, header, target, final);
    return showKeptResult(ctx, record, header, target);
  }
  // The try is saved first (`sweptAt`), as a record is before its mark: a post that reaches Discord and whose mark then
  // fails (or a crash between them) is not posted again at a later start past the age rule.
  await markTried(ctx, record);
  // What the ledger charged it (a reconcile charges a job whose request had reached the service), said as a cancelled
  // job's charge is, or what it may charge (`pending`); and, for a job its runner took, its end as the runner records
  // every job's (history, audit), with what was charged or may be (`stoppedEndOf`).
  const charge = await charges(record.runnerJobId);
  const cost = charge.type === 'none' ? undefined : charge.cost;
  const pending = charge.type === 'pending';
  const stoppedEnd: JobEnd | undefined = record.runnerJobId ? stoppedEndOf(charge) : undefined;
  let shown = false;
  try {
    // Retry only when it can run again (`whyNotRunAgain`: its prompt erased by a forget, an edit's images gone).
    shown = (await target.final([renderInterrupted(header, whyNotRunAgain(record, Date.now()) === undefined, cost, pending)])).first;
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not mark a job interrupted by the last stop');
    return 'left';
  }
  // Its message did not reach Discord: left running, held by this process (its claim), for a Cancel on it or the sweep
  // that claims it once this process is gone — its next start, or with Redis a replica's — with the time of its try
  // (`sweptAt`, saved above), until it is older than its kept images (ended saying nothing, above).
  if (!shown) {
    ctx.logger.warn({ jobKey: record.key, via: target.mode }, 'could not post that a job was interrupted by the last stop (neither its reply nor the channel took it); its record is left running');
    return 'left';
  }
  ctx.logger.info({ jobKey: record.key, via: target.mode }, 'marked a job interrupted by the last stop');
  // A mark that fails (every try) keeps "stopped" as shown, as a recorded end's is (`showRecordedEnd`): whoever takes it
  // next marks it ended saying nothing, rather than post it again. When that fails too, it is left as it was.
  // Marked ended with the end to record (held), then recorded, then released: the live view's order.
  try {
    await ctx.store.markEnded(record.key, 'failed', stoppedEnd ? { end: stoppedEnd } : {});
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not mark a swept job ended; its “stopped” is kept as shown');
    // Kept as shown is kept as recorded (`endRecorded`): the next sweep says nothing of it and records nothing. So its end
    // is recorded first, waited for: a stop before it leaves the record as it was (tried), and the next sweep says
    // "stopped" again and records it (recording it again changes nothing), rather than a charged job left unrecorded.
    return (await keepShownOnceRecorded(ctx, record, target, stoppedEnd, { type: 'failed', shown: true })) ? 'shown' : 'left';
  }
  // Not waited for here (it waits for its audit post): the next record is shown at once; a stop's grace waits for it.
  if (stoppedEnd) ctx.track(recordShownEnd(ctx, record, stoppedEnd, linkOf(ctx, record, target)));
  return 'shown';
}

/** Saves on a record that a sweep tried to say it stopped (`sweptAt`), before the try; a failure is logged. */
async function markTried(ctx: BotContext, record: JobRecord): Promise<void> {
  await ctx.store.update(record.key, { sweptAt: Date.now() }).catch((error: unknown) => ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not mark that a swept job’s “stopped” was tried'));
}

/**
 * A finished job's saved result as its final message, as the process that ran it would have shown it: the images still
 * kept (a note says how many are not; a record of an older version, which kept no facts with them, shows them with a
 * line saying they were made and charged), or, none kept, a line saying they were made and charged. Either way the job's end
 * is recorded as the runner records every job's (`recordEnded`: the member's history, with a link to the message, and
 * the audit channel) — completed, with its cost when its facts were saved — unless the record is marked `endRecorded`
 * (the live process's runner recorded it, and its view could not show or mark it). The live view's order: once shown,
 * the record is marked ended with that end (still held), so a crash after it does not show the result again; then the
 * end is recorded, then marked `endRecorded` (released). A crash or a failure before that leaves the record held with
 * its end, to the next sweep, which records it again (changing nothing) and shows nothing. A result whose message did
 * not reach Discord is not marked ended: its end is recorded (without a link) and marked `endRecorded` with the final
 * its message was to show (`final`, not `shown`), the record left running (held by this process) for a Cancel on it or the sweep that claims it once this process is gone, which
 * shows it then and records its end again only to give its history entry the link to the message. Answers whether its message reached Discord.
 */
async function showKeptResult(ctx: BotContext, record: JobRecord, header: JobHeader, target: ReplyTarget): Promise<LeftoverShown> {
  const { images, formats, indices } = await keptImagesOf(ctx, record);
  // How many the job made (the buttons' count, and how many are missing), not how many were kept.
  const made = madeCount(record);
  let completed: Completed | undefined;
  if (record.result) {
    const { attachmentSizeLimit: _limit, ...facts } = record.result;
    completed = { type: 'completed', jobId: record.runnerJobId ?? '', ...facts, images, formats, usage: undefined };
  }
  let shown = false;
  if (images.length > 0) {
    // A record of an older version kept no facts: the interaction's limit of its day, and the format its images are in.
    const view = new JobView({ target, header, store: ctx.store, attachmentSizeLimit: attachmentLimitOf(record.result), logger: ctx.logger });
    const missing = made - images.length;
    const notes = missing > 0 ? [say(header.locale, 'discord.job.some_no_longer_kept', { missing, made })] : [];
    try {
      // Marked below, as the live path marks what its view showed.
      await view.showResult(completed ?? { type: 'kept', images, formats }, { indices, made, notes });
      ctx.logger.info({ jobKey: record.key, images: images.length, missing, via: target.mode }, 'showed the result of a job the last stop left unshown');
    } catch (error) {
      ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not show the result of a job the last stop left unshown');
    }
    shown = view.resultShown;
  } else {
    try {
      shown = (await target.final([renderResultGone(header)])).first;
      ctx.logger.info({ jobKey: record.key, via: target.mode }, 'said a job the last stop left unshown has its images no longer kept');
    } catch (error) {
      ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not say a job the last stop left unshown has its images no longer kept');
    }
  }
  // Made and charged, whatever could be shown of it: completed, as the live path records a result it could not show.
  // Its facts when they were kept (a record of an older version kept none): only those JobEnd names, as the live view's.
  const end = jobEndOf({ type: 'completed', ...record.result });
  if (!shown) {
    // Not shown: kept for whoever shows it next, its end recorded once (a Retry would charge again: never "stopped").
    if (record.endRecorded !== true) ctx.track(recordUnshownEnd(ctx, record, end));
    return 'left';
  }
  // Ended (a Retry would charge again): its end already recorded (by the live runner, or by a sweep that could not show
  // it), released at once.
  if (record.endRecorded === true) {
    await ctx.store.markEnded(record.key, 'completed').catch((error: unknown) => ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not mark a swept job ended'));
    // Recorded while no message showed it (its `final` kept, not shown: `recordUnshownEnd`, no link, or the live runner's,
    // whose message did not land): recorded again with the link to the message now shown — the history merges it by its
    // key (one entry, its first time kept) and the audit channel enters a job's end once. Not waited for (as the ends
    // recorded below); a failure is logged and leaves the entry as it was.
    const link = record.final ? linkOf(ctx, record, target) : undefined;
    if (link) ctx.track(recordEnd(ctx, record, end, link));
    return 'shown';
  }
  // Else as the live view does: marked ended with the end to record (held), then recorded, then released.
  try {
    await ctx.store.markEnded(record.key, 'completed', { end });
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not mark a swept job ended');
  }
  // Not waited for here (it waits for its audit post): the next record is shown at once; a stop's grace waits for it.
  ctx.track(recordShownEnd(ctx, record, end, linkOf(ctx, record, target)));
  return 'shown';
}

/**
 * The images still kept of those a job made, each with its format (told by its bytes: an answer may mix them; else as
 * its facts say), and which of the job's images they are: their buttons name those, whatever was left out.
 */
export async function keptImagesOf(ctx: BotContext, record: JobRecord): Promise<MadeImages & { indices: number[] }> {
  const images: Buffer[] = [];
  const formats: OutputFormat[] = [];
  const indices: number[] = [];
  for (const [position, kept] of record.outputs.entries()) {
    const index = outputIndex(kept, position);
    const image = await ctx.store.readKept(kept).catch(() => undefined);
    if (!image) continue;
    images.push(image.data);
    formats.push(sniffImageType(image.data) ?? formatsOf(record.result ?? {}, index + 1)[index]!);
    indices.push(index);
  }
  return { images, formats, indices };
}

/**
 * A kept result whose message did not reach Discord, its end not recorded yet: recorded (no link: nothing was shown),
 * then marked `endRecorded` with the final its message was to show — the record, still running, stays held with it, and
 * whoever takes it next (a Cancel, or the sweep that claims it once this process is gone) shows that result, its end recorded again only for the link to its message. A failure leaves the
 * record as it was: the next one to take it records the end too.
 */
async function recordUnshownEnd(ctx: BotContext, record: JobRecord, end: JobEnd, final: FinalKept = { type: 'completed' }): Promise<void> {
  if (!(await recordEnd(ctx, record, end))) return;
  try {
    await ctx.store.markEndRecorded(record.key, final);
    ctx.logger.info({ jobKey: record.key }, 'recorded the end of a job the last stop left unshown; its result is left to the next to show it');
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not mark a swept job’s end recorded');
  }
}

/**
 * A job the sweep says nothing of — its final message reached Discord, or it is older than its kept images — marked
 * ended with how it ended. One whose end its runner did not record (a result saved before a stop) is marked with that
 * end (held), which is then recorded, as the kept result's is; a failed mark is logged, and the next sweep takes it again.
 * Answers whether it was marked.
 */
async function endQuietly(ctx: BotContext, record: JobRecord, status: FinalShown['type']): Promise<boolean> {
  const end = unrecordedEndOf(record, status);
  try {
    await ctx.store.markEnded(record.key, status, end ? { end } : {});
    ctx.logger.info({ jobKey: record.key, status }, 'marked ended, saying nothing, a job the last stop left whose end was shown or is older than its kept images');
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not mark a swept job ended');
    return false;
  }
  if (end) ctx.track(recordShownEnd(ctx, record, end, undefined));
  return true;
}

/**
 * The end a job its process left is still to have recorded, as it ended (`status`): none once its runner recorded it
 * (`endRecorded`); else the failure or cancellation its view kept (`final`, saved with the images it came with before
 * its process stopped), or, completed, its result's facts when they were kept. A job that made nothing has none here.
 */
function unrecordedEndOf(record: JobRecord, status: FinalShown['type']): JobEnd | undefined {
  if (record.endRecorded === true) return undefined;
  const final = record.final;
  if (final && 'code' in final) return jobEndOf({ type: 'failed', code: final.code, ...(final.cost && { cost: final.cost }) });
  if (final && 'byUserId' in final) return jobEndOf({ type: 'cancelled', ...(final.cost && { cost: final.cost }) });
  return status === 'completed' ? jobEndOf({ type: 'completed', ...record.result }) : undefined;
}

/**
 * A job that failed or was cancelled whose view could neither show that end nor mark it ended (its record kept the final
 * update's facts: saved by its runner with its end recorded, or by its view with the images it came with, before its
 * process stopped): that end shown as its final message — with those images still kept, their Edit and Delete buttons
 * beside it — then the record marked ended, as the live view marks what it shows and as the other leftovers are: released
 * when its end was recorded already, else marked with that end (held), which is then recorded, once. A message that did not reach Discord leaves the record as it
 * was, running with its final and held, to whoever takes it next — a Cancel on it here, or a sweep once the process
 * holding it is gone — which shows it then (until it is older than its kept images: ended saying nothing). A message
 * shown whose mark fails keeps its final as shown (`markEndRecorded`), so whoever takes it next marks it ended saying
 * nothing: it is shown once. Through its reply a second showing (a crash between the post and the mark) edits the same
 * message; a new message (the token expired: the channel, or a DM) is preceded by that "shown" write, so it is posted
 * at most once.
 */
async function showRecordedEnd(ctx: BotContext, record: JobRecord, header: JobHeader, target: ReplyTarget, final: Exclude<FinalKept, { type: 'completed' }>): Promise<LeftoverShown> {
  // Retry only when it can run again (`whyNotRunAgain`), as "stopped" offers it: a Retry that can only refuse is not offered.
  const retry = whyNotRunAgain(record, Date.now()) === undefined;
  const { images, formats, indices } = await keptImagesOf(ctx, record);
  const shown = images.length > 0 ? { indices, made: madeCount(record) } : undefined;
  const message = renderRecordedEnd(header, record, final, retry, shown);
  // Recorded by its runner (`endRecorded`), or still to record (its view kept it with its images, then stopped).
  const end = unrecordedEndOf(record, final.type);
  // Kept as shown, not recorded: `markEndRecorded` would say it was.
  const keep = (kept: FinalKept) => (end ? ctx.store.update(record.key, { final: kept }) : ctx.store.markEndRecorded(record.key, kept));
  // Through its reply (its token lives: the sweep's within 15 minutes, a Cancel's own), showing it twice edits the same
  // message: harmless. Else it is a new message (in the channel, mentioning the requester, or a DM), which a crash
  // between the post and the mark below would post again: the final is kept as shown first, so whoever takes it next
  // marks it ended saying nothing — a crash before the post then leaves that end unsaid, rather than said twice.
  const newMessage = !target.replyReachable();
  if (newMessage) {
    try {
      await keep({ ...final, shown: true });
    } catch (error) {
      ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not keep that the end of a job the last stop left unmarked is being shown; its record is left running');
      return 'left';
    }
  }
  const view = new JobView({ target, header, store: ctx.store, attachmentSizeLimit: attachmentLimitOf(record.result), logger: ctx.logger });
  let reached = false;
  try {
    reached = await view.showEnd(message, images.length > 0 ? { images, formats } : undefined, shown);
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not show the end of a job the last stop left unmarked; its record is left running');
  }
  if (!reached) {
    ctx.logger.warn({ jobKey: record.key, status: final.type, via: target.mode }, 'could not show the end of a job the last stop left unmarked (neither its reply nor the channel took it); its record is left running');
    // Not shown: its final kept as it was, for whoever takes it next to show it (a failure to do so leaves it ended unsaid).
    if (newMessage) await keep(final).catch((error: unknown) => ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not keep the end of a swept job to show'));
    // Its end recorded once meanwhile (no link: nothing shows it), as a kept result's is; whoever shows it next does not again.
    if (end) ctx.track(recordUnshownEnd(ctx, record, end, final));
    return 'left';
  }
  ctx.logger.info({ jobKey: record.key, status: final.type, via: target.mode, images: images.length }, 'showed the end of a job the last stop left unmarked');
  try {
    // With its end to record (held) when its runner did not record it, then recorded: the live view's order.
    await ctx.store.markEnded(record.key, final.type, end ? { end } : {});
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not mark a swept job ended; its end is kept as shown');
    // Kept as shown and recorded (whoever takes it next says nothing of it and records nothing): its end recorded first.
    await keepShownOnceRecorded(ctx, record, target, end, { ...final, shown: true });
    return 'shown';
  }
  if (end) ctx.track(recordShownEnd(ctx, record, end, linkOf(ctx, record, target)));
  return 'shown';
}

/**
 * The message of a recorded failure or cancellation: from what it showed, when that was kept; else (kept as shown by a
 * version that kept only how it ended, or a "stopped" a sweep showed) "stopped", or "restarted before done".
 */
export function renderRecordedEnd(header: JobHeader, record: JobRecord, final: Exclude<FinalKept, { type: 'completed' }>, retry: boolean, shown?: ShownImages): OutgoingMessage {
  if ('code' in final) return renderFailure(header, final, retry, shown);
  if ('byUserId' in final) return renderCancelled(header, { ...final, type: 'cancelled', jobId: record.runnerJobId ?? '' }, retry, shown);
  return final.type === 'failed' ? renderInterrupted(header, retry) : renderCancelled(header, { type: 'cancelled', byUserId: '', reason: 'shutdown', jobId: record.runnerJobId ?? '' }, retry);
}

/** The link the live path gives (`jobLinkOf`): the reply the job was shown in, while its token lives; none for a private job. */
/**
 * Keeps a shown end as shown and recorded (`markEndRecorded`) when marking it ended failed: the next sweep then says
 * nothing of it and records nothing, so its end (if any) is recorded first, waited for — a stop before the keep leaves
 * the record as it was, and the next sweep shows it again and records it (recording it again changes nothing), rather
 * than a charged job left unrecorded. False when the keep failed too.
 */
async function keepShownOnceRecorded(ctx: BotContext, record: JobRecord, target: ReplyTarget, end: JobEnd | undefined, kept: FinalKept): Promise<boolean> {
  if (end && !(await recordEnd(ctx, record, end, linkOf(ctx, record, target)))) {
    ctx.logger.warn({ jobKey: record.key }, 'a swept job’s end is kept as shown without being recorded');
  }
  try {
    await ctx.store.markEndRecorded(record.key, kept);
    return true;
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not keep that a swept job’s end was shown');
    return false;
  }
}

function linkOf(ctx: BotContext, record: JobRecord, target: ReplyTarget): (() => Promise<string | undefined>) | undefined {
  // Asked with the token the target shows it by: a Cancel's own (fresh), not the record's, which may have expired; in the
  // place the record kept (a DM's `@me`, a user install's server), as the live path's interaction says it.
  const reply = target.interaction && { ...target.interaction, guildId: record.reply?.guildId };
  return jobLinkOf(ctx, { reply, private: record.private, scopeId: record.requester.scopeId }, target);
}

/**
 * A job whose end was shown (by its view, or by the sweep just now) and marked ended with it, held: its end is
 * recorded, as the runner would have, then its record marked `endRecorded` (released; a record whose ended mark
 * failed stays held, as the live path leaves it). Nothing is shown: the member saw it. A failure leaves the
 * record held, for the next sweep; recording it again changes nothing.
 */
async function recordShownEnd(ctx: BotContext, record: JobRecord, end: JobEnd, link: (() => Promise<string | undefined>) | undefined): Promise<void> {
  if (!(await recordEnd(ctx, record, end, link))) return;
  try {
    await ctx.store.markEndRecorded(record.key);
    ctx.logger.info({ jobKey: record.key, status: end.type }, 'recorded the end of a job the last stop left unrecorded');
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not mark a swept job’s end recorded');
  }
}

/** The runner's `recordEnded` of a swept job: whether it resolved (its history and audit entries written); a failure is logged. */
async function recordEnd(ctx: BotContext, record: JobRecord, end: JobEnd, link?: () => Promise<string | undefined>): Promise<boolean> {
  const { key, kind, prompt, options, requester } = record;
  try {
    // Accepted at its record's `createdAt` (taken as the runner accepted it; a record of an older version: as it was written): a job accepted
    // after its member's forget keeps its prompt; one running at it lost its prompt to the forget already.
    await ctx.runner.recordEnded(requester, { key, kind, prompt, options, private: record.private === true, acceptedAt: record.createdAt }, end, link);
    return true;
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), jobKey: key }, 'could not record the end of a swept job; the next sweep records it');
    return false;
  }
}
