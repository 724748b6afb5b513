import type { webApi } from '@slack/bolt';
import type { LoggerLike } from 'pictor';
import type { ChannelWriter } from './ChannelWriter.js';
import { DEFAULT_LOCALE, type JobRunner, type Requester } from '../runner/index.js';
import { renderJobMessage } from './render-job.js';
import type { RequestStore, SavedRequest } from './RequestStore.js';
import { endToRecord, isDone } from '../state/index.js';
import { jobEndOf, type JobEnd } from '../runner/job-history.js';
import { stoppedEndOf, type SweptCharge } from '../runner/swept-charges.js';
import type { SlackActor } from './SlackJobs.js';
import { jobMessageLinkOf, jobMessageSeenBy } from './slack-text.js';
import { slackErrorCode } from './slack-error-code.js';
import { retryTransient } from './slack-faults.js';
import { stepOutputsOf, stepStoppedWords } from './listeners/workflow-step.js';

/**
 * A job whose process is gone (stopped, killed, or a replica whose lease
 * lapsed) still shows "Drawing…" and a Cancel button. Its message is updated
 * to say the job stopped when the bot restarted, with Reroll and what the
 * ledger charged it or may still charge it (`sweptCharges`, as on Discord) — or, when the
 * job had finished and its images were posted but the stop came before the
 * message said so (its "Done" waits for the workspace's update budget, and a
 * stopping bot sheds it), to show it done: without buttons when Reroll, Edit
 * and Delete were posted beside the images, with them when the stop came
 * before that. The request is then released (ended); a finished job's end is
 * recorded as the runner records every job's (`recordEnded`: the member's
 * history, with the link to its message, and the audit channel) unless the
 * request is marked `endRecorded` (a stop that came after the runner had
 * recorded it, before its "Done"): recorded first, then marked, the one
 * order of `recordEnded` (a repeat after a stop between the two changes
 * nothing). A request whose message showed its end but whose end was not yet
 * recorded (ended with its `end`, without `endRecorded`: a stop between the
 * view's mark and the runner's record) gets that end recorded, then marked,
 * and nothing shown. A stopped job the runner took is recorded failed
 * (`interrupted`) with that charge (`stoppedEndOf`), then marked. Runs
 * for each request `RequestStore.claimInterrupted` hands this process, at
 * start and, with Redis, while running. A Workflow Builder step the job ran
 * for, left open by the crash, is ended (`endStep`): completed with the
 * finished job's outputs, as the step's listener would have, or failed with
 * the words of a stopped job and its charge, as its message says them. Returns
 * whether the message was updated.
 */
export async function sweepInterrupted(input: {
  /** The Web API client of a request's workspace; undefined when the app is no longer installed there. */
  clientFor: (teamId: string) => Promise<webApi.WebClient | undefined>;
  writer: ChannelWriter;
  store: RequestStore;
  logger: LoggerLike;
  request: SavedRequest;
  /** The runner's end-of-job step. */
  runner: Pick<JobRunner, 'recordEnded'>;
  /** Who asked for a job, as the live path makes them (`SlackJobs.requester`). */
  requester: (actor: SlackActor) => Requester;
  /**
   * Given the recording of the job's end and the request's mark after it, begun once its message is updated: the next
   * request is swept without waiting for it (a record waits for its audit entry's post), and the stop waits for it.
   */
  track: (recording: Promise<void>) => void;
  /** What the ledger charged a runner job (`sweptCharges`, read once per sweep); none given: nothing is said of a charge. */
  charges?: ((jobId: string | undefined) => Promise<SweptCharge>) | undefined;
}): Promise<boolean> {
  const { store, logger, request } = input;
  // A finished job: its images posted, and what its "Done" says saved with them.
  const finished = request.outputFiles.length > 0 ? request.result : undefined;
  // The end its message showed (a stop between the view's mark and the runner's record): nothing to show.
  const shownEnd = endToRecord(request);
  // Stopped: what the ledger charged it, or may charge it (`pending`), as Discord's "stopped" says it (`sweptCharges`) —
  // and its step's error with it. None of a job done, whose message showed its end.
  const charge: SweptCharge = isDone(request) || shownEnd || finished ? { type: 'none' } : ((await input.charges?.(request.runnerJobId)) ?? { type: 'none' });
  // A step that could not be taken out of its request: the request is left as it is, held here, for the next start's sweep.
  if (!(await endStep(input, finished, charge))) return false;
  // Done, its end shown and recorded, and held only for its step (now ended): let go of, nothing more shown or recorded.
  if (isDone(request)) {
    await markSwept(store, logger, request, { status: 'ended' });
    return false;
  }
  const updated = shownEnd ? false : await showEnd(input, finished, charge);
  // Made, charged and posted, or shown ended: its end is recorded, then the request marked so, as the live path does —
  // a stop or a failed mark between the two leaves the request held for the next sweep, whose record of it again
  // changes nothing (the history merges by the job's key, the audit channel enters it once). An end that could not be
  // recorded (its history entry not written) leaves the request as it is, held here, for the next start's sweep. A job
  // the runner took that it stopped is recorded failed (`interrupted`) with what was charged or may be (`stoppedEndOf`),
  // as on Discord.
  const stopped = !shownEnd && !finished && request.runnerJobId !== undefined ? stoppedEndOf(charge) : undefined;
  const end = shownEnd ?? stopped ?? (finished && request.endRecorded !== true ? jobEndOf({ type: 'completed', ...finished }) : undefined);
  if (end) input.track(recordThenMark(input, request, end));
  else await markSwept(store, logger, request, { status: 'ended' });
  return updated;
}

/** What Slack answers when a step can no longer be ended: its token expired or was revoked, or the step has ended. */
const STEP_GONE = new Set(['token_expired', 'token_revoked', 'invalid_auth', 'not_authed', 'function_execution_not_found', 'execution_not_in_running_state', 'function_execution_already_completed']);

/**
 * Ends the Workflow Builder step a crash left open (its request keeps the step until it is ended), so its workflow does
 * not wait on it for ever (Slack's retry of the step is dropped: its key stays taken): a job that finished, its images
 * posted (the request holds them and its result), completes the step with those outputs, built as the step's listener
 * builds them (`stepOutputsOf`) — the images were made and paid for; any other fails it with the words a graceful stop
 * fails it with, in the step's language, and what the ledger charged its job or may charge it (`charge`), as its
 * message says it. The step is taken out of the request first (`takeStep`), so it is ended
 * once however often the request is swept. A step Slack no longer knows (its token expired, or it has ended) is logged
 * and dropped; so is one that cannot be ended. The token is never logged. Answers false when the step could not be
 * taken (the state failed: logged), the request then to be left as it is for the next start's sweep.
 */
async function endStep(input: Pick<Parameters<typeof sweepInterrupted>[0], 'clientFor' | 'store' | 'logger' | 'request'>, finished: SavedRequest['result'], charge: SweptCharge): Promise<boolean> {
  const { store, logger, request } = input;
  if (!request.step) return true;
  let step: SavedRequest['step'];
  try {
    step = await store.takeStep(request.id);
  } catch (error) {
    logger.warn({ team: request.teamId, execution: request.step.executionId, err: String(error) }, 'could not take a workflow step a stop cut off: left to the next start');
    return false;
  }
  if (!step) return true;
  const where = { team: request.teamId, execution: step.executionId };
  const client = await input.clientFor(request.teamId).catch(() => undefined);
  if (!client) {
    logger.warn(where, 'could not end a workflow step a stop cut off: the app is no longer installed there');
    return true;
  }
  try {
    if (finished) {
      const outputs = await stepOutputsOf(client, request, finished.cost.totalUsd, logger);
      await retryTransient(() => client.functions.completeSuccess({ token: step.token, function_execution_id: step.executionId, outputs }), [1000, 3000]);
      logger.info(where, 'ended a workflow step a stop cut off: it completed with the images its job made');
    } else {
      const error = stepStoppedWords(request.locale, charge);
      await retryTransient(() => client.functions.completeError({ token: step.token, function_execution_id: step.executionId, error }), [1000, 3000]);
      logger.info(where, 'ended a workflow step a stop cut off: it failed, stopped before it finished');
    }
  } catch (error) {
    const code = slackErrorCode(error);
    if (code !== undefined && STEP_GONE.has(code)) logger.info({ ...where, code }, 'a workflow step a stop cut off could no longer be ended (its token expired, or it ended): dropped');
    else logger.warn({ ...where, code }, 'could not end a workflow step a stop cut off: dropped');
  }
  return true;
}

/**
 * Updates the request's message to show its end: done (a finished job), or stopped when the bot restarted. Answers
 * whether it was updated (a failure is logged).
 */
async function showEnd(
  input: Pick<Parameters<typeof sweepInterrupted>[0], 'clientFor' | 'writer' | 'logger' | 'request'>,
  finished: SavedRequest['result'],
  charge: SweptCharge,
): Promise<boolean> {
  const { writer, logger, request } = input;
  const client = request.messageTs ? await input.clientFor(request.teamId).catch(() => undefined) : undefined;
  if (!request.messageTs || !client) return false;
  const rendered = renderJobMessage({
    kind: request.kind,
    prompt: request.prompt,
    options: request.options,
    userId: request.userId,
    inputCount: request.inputFiles.length,
    requestId: request.id,
    jobId: undefined,
    ...(finished
      ? { status: 'completed', completed: { ...finished, uploaded: true, actionsBeside: request.actionsMessage !== undefined } }
      : { status: 'cancelled', cancelled: { byUserId: '', reason: 'shutdown' } }),
    ahead: undefined,
    previewsShown: 0,
    locale: request.locale ?? DEFAULT_LOCALE,
    ...(charge.type !== 'none' && { charged: charge.cost, chargePending: charge.type === 'pending' }),
  });
  try {
    await retryTransient(
      () =>
        writer.write(request.channelId, {
          urgent: true,
          budgeted: true,
          workspace: request.teamId,
          run: () => client.chat.update({ channel: request.channelId, ts: request.messageTs!, text: rendered.text, blocks: rendered.blocks }),
        }),
      [1000, 3000],
    );
    logger.info({ channel: request.channelId }, finished ? 'showed the end of a job a stop cut off' : 'marked a job interrupted by a stop');
    return true;
  } catch (error) {
    logger.warn({ channel: request.channelId, code: slackErrorCode(error) }, 'could not mark a job interrupted by a stop');
    return false;
  }
}

/** Records a job's end, then marks its request ended with its end recorded (released); a failed record leaves it held. */
async function recordThenMark(input: Parameters<typeof recordEnd>[0] & { store: RequestStore }, request: SavedRequest, end: JobEnd): Promise<void> {
  if (await recordEnd(input, request, end)) await markSwept(input.store, input.logger, request, { status: 'ended', endRecorded: true });
}

/** The sweep's mark of a request it ended (released); a failure is logged, the request left to the next sweep. */
async function markSwept(store: RequestStore, logger: LoggerLike, request: SavedRequest, mark: { status: 'ended'; endRecorded?: true }): Promise<void> {
  await store.update(request.id, mark).catch((error: unknown) => {
    logger.warn({ channel: request.channelId, err: String(error) }, 'could not mark a job a stop cut off ended');
  });
}

/**
 * A job's end, as the runner records it when the job ends in a live process: a finished one's completed, with its
 * cost, or the end its message showed. Answers whether it was recorded (a failure is logged).
 */
async function recordEnd(
  input: { runner: Pick<JobRunner, 'recordEnded'>; requester: (actor: SlackActor) => Requester; logger: LoggerLike },
  request: SavedRequest,
  end: JobEnd,
): Promise<boolean> {
  // Asked in a channel: a private job's request keeps it as `askedIn`, its messages going to the member's DM.
  const requester = input.requester({ userId: request.userId, teamId: request.teamId, channelId: request.askedIn ?? request.channelId, locale: request.locale });
  const isPrivate = request.private === true;
  // The link the live path gives: the job's message, and who can open it (`recordEnded` decides where it is kept).
  const url = jobMessageLinkOf(request);
  const link = url ? () => Promise.resolve(url) : undefined;
  try {
    // Accepted when its request was saved (as the runner accepted it, before its job was queued): a job accepted after
    // its member's forget keeps its prompt; one running at it lost its prompt to the forget already.
    const job = { key: request.id, kind: request.kind, prompt: request.prompt, options: request.options, private: isPrivate, seenBy: jobMessageSeenBy(request), acceptedAt: request.createdAt };
    await input.runner.recordEnded(requester, job, end, link);
    return true;
  } catch (error) {
    input.logger.warn({ err: String(error), channel: request.channelId }, 'could not record the end of a job a stop cut off; the next start records it');
    return false;
  }
}
