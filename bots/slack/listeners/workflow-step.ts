import type { App, webApi } from '@slack/bolt';
import { QUALITIES, SIZES, type LoggerLike, type Quality, type Size } from 'pictor';
import { MAX_TIMER_MS } from 'pictor/internal';
import { DEFAULT_LOCALE, rangeValueOf, rangeWords, RecentKeys, say, sayWords, type JobOptions } from '../../runner/index.js';
import type { SweptCharge } from '../../runner/swept-charges.js';
import { RECENT_KEYS_MAX, takenForMs } from '../../runner/recent-keys.js';
import { claimWithin, digestKeyOf, LateClaim, type Space } from '../../state/index.js';
import type { BotContext } from '../bot-context.js';
import { plainChargeWords } from '../render-job.js';
import type { SavedRequest } from '../RequestStore.js';
import type { StartedJob } from '../SlackJobs.js';
import { slackErrorCode } from '../slack-error-code.js';

/** The Workflow Builder step's `callback_id`, as the app manifests declare it (`functions.generate_image`). */
export const WORKFLOW_STEP_ID = 'generate_image';

/** How often a step failed because the state could not answer asks the state again to take its key. */
export const STEP_RETAKE_MS = 5_000;

/** The step's inputs as a workflow gives them (the manifest's `input_parameters`). */
interface StepInputs {
  prompt?: unknown;
  channel?: unknown;
  user?: unknown;
  size?: unknown;
  quality?: unknown;
  count?: unknown;
  style?: unknown;
}

/**
 * "Generate image" in Workflow Builder: a Bolt custom function (`function_executed`). The step goes through the same
 * intake as `/imagine` — a house style (`style`, by name), the workspace's rules, blocked words, the member's pace and every budget, counted against
 * the member who used the workflow (`user`, a user context Slack sets: a builder cannot name someone else) and kept in their history — and posts its job in `channel` as `/imagine`
 * would. What its inputs leave empty is the workspace's default, never that member's own (`/imagine settings`). It completes with the images' file ids, their permalinks, the job message's link and the cost
 * (`functions.completeSuccess`), or fails with the refusal's or failure's own words in the member's language
 * (`functions.completeError`): a refused step sends nothing.
 *
 * A step runs once, however often its `function_executed` arrives (Slack's retries of an event whose 200 came late,
 * each signed again; Socket Mode's redeliveries; to any replica, after a restart): its `function_execution_id` is
 * taken in `taken` (the bots' `slack-messages` space, with the mentions) before anything is asked of Slack, answered or
 * charged. A delivery after the first does nothing (the first ends the step): one reaching a process that took the
 * step up already (claiming it or running it) is dropped there before any claim, so a slow state never has it fail a
 * step that runs. A step's key is never given back, and no later delivery takes over its claim: its end is the first
 * delivery's.
 *
 * When the state cannot answer the claim:
 * - it fails (an error): nobody took the step with this claim; the step fails on our side, that is logged, and no job
 *   runs (it may be a paid one);
 * - it does not answer within `CLAIM_WAIT_MS` (a Redis down queues the claim): the step is not failed yet, as another
 *   replica may have taken it and be running it (a failed step refuses that replica's outputs). That is logged, and the
 *   claim's own answer decides when it comes: taken elsewhere, nothing more here; taken by this late claim (nobody else
 *   runs the step, and its key stays taken), the step fails on our side with no job; an error, the same.
 *
 * A step failed because the state could not answer (an error, or a late answer that is an error) has not had its key
 * taken: the step's key is asked for again in the background, every `STEP_RETAKE_MS`, until the state answers (a later
 * delivery, anywhere, is then dropped as taken), the space's TTL passes or the bot stops; a key never taken is logged
 * once (the step may run again on another process). A retry that reaches another process before that can still run it.
 *
 * Every step taken ends: whatever throws on the way (the job cannot be started, Slack refuses the outputs) fails the
 * step with "failed on my side" in the member's language, and that is logged — a step left open would hang its
 * workflow, and no retry would rescue it (the step is taken).
 */
export function registerWorkflowStep(app: App, context: BotContext, taken: Pick<Space<unknown>, 'claimOnce' | 'releaseClaim' | 'definition'>): { stop(): void } {
  // The steps this process took up lately (claiming or claimed), by workspace and execution id.
  const mine = RecentKeys.for(taken);
  // The steps failed because the state could not answer, whose keys are asked for again until it does.
  const retakes = new Retakes(taken, context.logger);

  app.function(WORKFLOW_STEP_ID, { autoAcknowledge: true }, async ({ inputs, complete, fail, body, event, context: auth }) => {
    const step = inputs as StepInputs;
    const teamId = body.team_id;
    const where = { team: teamId, execution: event.function_execution_id };
    const userId = userOf(step.user) ?? '';
    const { client } = context.workspace(auth);
    // The member's language, asked of Slack only once the step is ours to answer.
    const localeOf = async () => (userId ? await context.locales.of(client, teamId, userId) : undefined);
    const failOnOurSide = async () => fail({ error: plain(say(await localeOf(), 'error.on_my_side')) });
    const stepKey = `step:${teamId}:${event.function_execution_id}`;
    if (!mine.first(stepKey)) {
      context.logger.debug(where, 'a workflow step this process took up already: not run again');
      return;
    }
    const key = digestKeyOf(stepKey);
    try {
      // A key taken is never given back: a late claim's step is ended by its answer.
      if (!(await claimWithin(taken, key, { keepLate: true }))) {
        context.logger.debug(where, 'a workflow step already taken: not run again');
        return;
      }
    } catch (err) {
      if (err instanceof LateClaim) {
        context.logger.warn({ err, ...where }, 'a workflow step whose claim is late: not run, its claim decides whether it fails');
        void err.late
          .then(
            async (took) => {
              if (!took) {
                context.logger.info(where, 'a workflow step whose claim came late was taken elsewhere: not run here');
                return;
              }
              context.logger.error(where, 'a workflow step claimed late: not run, the step fails');
              await failOnOurSide();
            },
            async (error: unknown) => {
              context.logger.error({ err: error, ...where }, 'could not check a workflow step against the ones taken lately: not run, the step fails');
              retakes.add(key, where);
              await failOnOurSide();
            },
          )
          .catch((error: unknown) => context.logger.error({ err: error, ...where }, 'could not fail a workflow step whose claim came late'));
        return;
      }
      context.logger.error({ err, ...where }, 'could not check a workflow step against the ones taken lately: not run, the step fails');
      retakes.add(key, where);
      await failOnOurSide();
      return;
    }
    let locale: string | undefined;
    let ended = false;
    const end = {
      complete: async (outputs: Record<string, unknown>) => {
        await complete({ outputs });
        ended = true;
      },
      fail: async (error: string) => {
        await fail({ error });
        ended = true;
      },
    };
    try {
      locale = await localeOf();
      // The step's execution and its token go with the job's request: a sweep after a crash ends the step with them.
      await runStep(step, { userId, teamId, locale, client, step: { executionId: event.function_execution_id, token: event.bot_access_token } }, end, context);
    } catch (err) {
      context.logger.error({ err, ...where }, 'a workflow step failed on our side: it fails, the member told it failed on my side');
      if (!ended) await fail({ error: plain(say(locale, 'error.on_my_side')) });
    }
  });
  return { stop: () => retakes.stop() };
}

/**
 * The keys of steps failed because the state could not answer, asked for again every `STEP_RETAKE_MS` — by the one
 * claim rule (`claimWithin`: its wait, and a claim that lands late is still this step's, kept) — until the state
 * answers — taken now, or taken before: either way no later delivery runs the step — the key's life in the space
 * passes (`takenForMs`: a key taken later would outlive no delivery worth stopping; a space without a TTL, asked until
 * `stop`; a TTL longer than a timer can wait, about 24.8 days, asked for that long, then given up as a key never taken)
 * or `stop`. A claim the state has not answered within its wait is not sent again: its late answer decides.
 * At most `RECENT_KEYS_MAX` steps at once; a key never taken is logged once.
 */
export class Retakes {
  readonly #asking = new Map<string, { where: object; retry?: NodeJS.Timeout; deadline?: NodeJS.Timeout }>();
  #stopped = false;

  constructor(
    private readonly taken: Pick<Space<unknown>, 'claimOnce' | 'releaseClaim' | 'definition'>,
    private readonly logger: BotContext['logger'],
  ) {}

  add(key: string, where: object): void {
    if (this.#asking.has(key)) return;
    if (this.#stopped || this.#asking.size >= RECENT_KEYS_MAX) {
      this.#giveUp(where);
      return;
    }
    const lifeMs = takenForMs(this.taken.definition);
    const deadline = Number.isFinite(lifeMs) ? setTimeout(() => this.#end(key, false), Math.min(lifeMs, MAX_TIMER_MS)) : undefined;
    deadline?.unref?.();
    this.#asking.set(key, { where, deadline });
    this.#schedule(key);
  }

  stop(): void {
    this.#stopped = true;
    for (const key of [...this.#asking.keys()]) this.#end(key, false);
  }

  #schedule(key: string): void {
    const entry = this.#asking.get(key);
    if (!entry) return;
    entry.retry = setTimeout(() => {
      entry.retry = undefined;
      // Taken now or before (true or false): either way the step is taken. A late claim is still this step's, kept.
      claimWithin(this.taken, key, { keepLate: true }).then(
        () => this.#end(key, true),
        (error: unknown) => {
          if (error instanceof LateClaim)
            error.late.then(
              () => this.#end(key, true),
              () => this.#schedule(key),
            );
          else this.#schedule(key);
        },
      );
    }, STEP_RETAKE_MS);
    entry.retry.unref?.();
  }

  #end(key: string, took: boolean): void {
    const entry = this.#asking.get(key);
    if (!entry) return;
    this.#asking.delete(key);
    if (entry.deadline) clearTimeout(entry.deadline);
    if (entry.retry) clearTimeout(entry.retry);
    if (took) this.logger.info(entry.where, 'a workflow step failed on our side is taken now: no later delivery runs it');
    else this.#giveUp(entry.where);
  }

  #giveUp(where: object): void {
    this.logger.warn(where, 'could not take a workflow step failed on our side: this step may run again on another process');
  }
}

/** How a step ends: with its outputs, or an error (plain text) the workflow shows. */
interface StepEnd {
  complete(outputs: Record<string, unknown>): Promise<void>;
  fail(error: string): Promise<void>;
}

/** Runs a step taken: its job, through the intake, and the step's end with the job's outputs or the words why not. */
async function runStep(
  step: StepInputs,
  who: { userId: string; teamId: string; locale: string | undefined; client: webApi.WebClient; step: { executionId: string; token: string } },
  end: StepEnd,
  context: BotContext,
): Promise<void> {
  const { userId, teamId, locale, client } = who;
  const channelId = typeof step.channel === 'string' ? step.channel : '';
  // Only Slack sets the person a step runs for: anything else (a member's id, which a builder can pick) is refused.
  if (!userId && step.user !== undefined && step.user !== '') {
    await end.fail(plain(say(locale, 'slack.step.not_user_context')));
    return;
  }
  if (!userId || !channelId || typeof step.prompt !== 'string') {
    await end.fail(say(locale, 'slack.step.bad_inputs'));
    return;
  }
  const read = optionsOf(step, locale);
  if (!read.ok) {
    await end.fail(plain(read.error));
    return;
  }
  const { options } = read;
  // A house style of the workspace, by name, as `--style` takes it (an unknown one fails the step with the refusal's words).
  const style = typeof step.style === 'string' && step.style.trim() ? step.style.trim() : undefined;
  // A refusal, or a failure before the job's message, is told to the step: it fails with those words (plain text).
  let refusal: string | undefined;
  const started = await context.jobs.start({
    kind: 'generate',
    prompt: step.prompt.trim(),
    options,
    style,
    actor: { userId, teamId, channelId, locale },
    // A workflow posts in its channel and hands the message on: never privately. Its empty inputs are the workspace's
    // defaults, not the member's own (a workflow may run for them unattended, and is charged to them).
    private: false,
    memberDefaults: false,
    notify: async (text) => {
      refusal = text;
    },
    client,
    step: who.step,
  });
  if (!started) {
    await end.fail(plain(refusal ?? say(locale, 'error.on_my_side')));
    return;
  }
  try {
    await endStarted(started, refusal, { locale, client, channelId }, end, context);
  } finally {
    // Ended here (or failed on the way, which the listener ends): the request keeps its step no longer, nor its token.
    await context.store.takeStep(started.requestId).catch((err: unknown) => context.logger.warn({ err: String(err), team: teamId }, 'could not let go of a workflow step ended'));
  }
}

/**
 * The words a step stopped before its job finished fails with (a graceful stop, or the sweep after a crash): with what
 * the ledger charged its job or may still charge it (`charge`: the stopped job's final cost, or the sweep's), in the
 * words the job's message says it. The one rule of both: the same job is told the same way however it was stopped.
 */
export function stepStoppedWords(locale: string | undefined, charge: SweptCharge = { type: 'none' }): string {
  return withChargeWords(locale, plain(say(locale, 'slack.step.cancelled')), charge);
}

/**
 * The words a step fails with, and under them what the ledger charged its job (or may still charge it), as its message
 * says it under its status: the one rule of a stopped job's step (`stepStoppedWords`) and a failed one's.
 */
function withChargeWords(locale: string | undefined, words: string, charge: SweptCharge): string {
  return charge.type === 'none' ? words : `${words}\n${plainChargeWords(locale ?? DEFAULT_LOCALE, charge.cost, charge.type === 'pending')}`;
}

/** Ends a step whose job started: with the job's outputs once it finished, or the words why not. */
async function endStarted(
  started: StartedJob,
  refusal: string | undefined,
  where: { locale: string | undefined; client: webApi.WebClient; channelId: string },
  end: StepEnd,
  context: BotContext,
): Promise<void> {
  const { locale, client, channelId } = where;
  const final = await started.done;
  await started.shown;
  if (final.type !== 'completed') {
    const words = final.type === 'failed' ? final.words : undefined;
    // Failed or stopped (a graceful stop, or Cancel): said with what the ledger charges it, as its message says it under
    // its status and the crash's sweep says it.
    const charge: SweptCharge = final.cost ? { type: 'charged', cost: final.cost } : { type: 'none' };
    const reason = words ? plain(sayWords(locale, words)) : refusal !== undefined ? plain(refusal) : undefined;
    await end.fail(reason === undefined ? stepStoppedWords(locale, charge) : withChargeWords(locale, reason, charge));
    return;
  }
  const request = await context.store.get(started.requestId);
  if (!request || request.outputFiles.length === 0) {
    await end.fail(say(locale, 'slack.step.not_posted'));
    return;
  }
  await end.complete(await stepOutputsOf(client, { ...request, channelId }, final.cost.totalUsd, context.logger));
}

/**
 * The outputs a step completes with once its job finished and its images were posted: their file ids and permalinks,
 * the job message's link and the cost. The one builder of the step's end where it ran and of the sweep's, after a crash
 * cut it off before that end (`sweepInterrupted`). A permalink or link Slack does not give is empty (logged).
 */
export async function stepOutputsOf(
  client: webApi.WebClient,
  request: Pick<SavedRequest, 'outputFiles' | 'channelId' | 'messageTs'>,
  costUsd: number,
  logger: LoggerLike,
): Promise<Record<string, unknown>> {
  const files = request.outputFiles;
  return {
    file_ids: files.map((f) => f.id),
    permalinks: await Promise.all(files.map((f) => permalinkOf(client, f.id, logger))),
    message_link: request.messageTs ? await messageLink(client, request.channelId, request.messageTs, logger) : '',
    cost_usd: costUsd,
  };
}

/**
 * The person a step runs for: its `user` input, a Slack user context (`slack#/types/user_context`: `{ id, secret }`),
 * which Slack fills in with whoever started the workflow or pressed a button in an earlier step — a workflow's builder
 * cannot type one in. Anything else (a member's id, as an app whose manifest still declares `user_id` sends) names no
 * one: its budget, rules and history would be whoever the builder picked.
 */
function userOf(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const { id, secret } = input as { id?: unknown; secret?: unknown };
  return typeof id === 'string' && /^[UW][A-Z0-9]+$/.test(id) && typeof secret === 'string' && secret !== '' ? id : undefined;
}

/** The options a step asks for, checked as the spec takes them; a bad one is named with what it takes (the step fails). */
function optionsOf(step: StepInputs, locale: string | undefined): { ok: true; options: JobOptions } | { ok: false; error: string } {
  // Each bad input is named by its title in Workflow Builder (the manifest's: Size, Quality, Images), with what it takes.
  const bad = (input: 'size' | 'quality' | 'count', given: unknown, allowed: string) => ({ ok: false, error: say(locale, 'slack.step.bad_input', { input, given: String(given).slice(0, 100), allowed }) }) as const;
  const options: JobOptions = {};
  if (step.size !== undefined && step.size !== '') {
    if (!(SIZES as readonly unknown[]).includes(step.size)) return bad('size', step.size, SIZES.join(', '));
    options.size = step.size as Size;
  }
  if (step.quality !== undefined && step.quality !== '') {
    if (!(QUALITIES as readonly unknown[]).includes(step.quality)) return bad('quality', step.quality, QUALITIES.join(', '));
    options.quality = step.quality as Quality;
  }
  if (step.count !== undefined && step.count !== '') {
    // Checked, and said, as `/imagine`'s `--n` is (`rangeValueOf`, `rangeWords`: the spec's range).
    const n = typeof step.count === 'number' || typeof step.count === 'string' ? rangeValueOf('n', step.count) : undefined;
    if (n === undefined) return bad('count', step.count, sayWords(locale, rangeWords('n')));
    options.n = n;
  }
  return { ok: true, options };
}

async function permalinkOf(client: webApi.WebClient, file: string, logger: LoggerLike): Promise<string> {
  try {
    return (await client.files.info({ file })).file?.permalink ?? '';
  } catch (error) {
    logger.warn({ code: slackErrorCode(error) }, 'no permalink for an image of a workflow step');
    return '';
  }
}

async function messageLink(client: webApi.WebClient, channel: string, ts: string, logger: LoggerLike): Promise<string> {
  try {
    return (await client.chat.getPermalink({ channel, message_ts: ts })).permalink ?? '';
  } catch (error) {
    logger.warn({ code: slackErrorCode(error) }, 'no link to the message of a workflow step');
    return '';
  }
}

/** Slack shows a step's error as plain text: mrkdwn marks (`*name*`, `` `--size` ``, `<@U1>`) read as they are meant. */
function plain(text: string): string {
  return text
    .replace(/<@([A-Z0-9]+)(\|[^>]*)?>/g, '@$1')
    .replace(/<#([A-Z0-9]+)(\|([^>]*))?>/g, (_m, id: string, _l, name: string | undefined) => `#${name ?? id}`)
    .replace(/[*`]/g, '');
}
