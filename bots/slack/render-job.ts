import type { types } from '@slack/bolt';
import { DEFAULTS, type OutputFormat, type PriceQuote } from 'pictor';
import { elapsed, say, sayWords, usd, words, type JobCost, type JobOptions, type Words } from '../runner/index.js';
import { FLAGS } from './imagine-text.js';
import { escapeMrkdwn, truncate } from './slack-text.js';

/** Button action ids. What a button needs is in its value (a job id or a saved request id), never only in memory. */
export const ACTIONS = {
  cancel: 'pictor_cancel',
  reroll: 'pictor_reroll',
  edit: 'pictor_edit',
  delete: 'pictor_delete',
} as const;

export type JobStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** Everything the job's message shows. */
export interface JobViewState {
  kind: 'generate' | 'edit';
  prompt: string;
  options: JobOptions;
  userId: string;
  inputCount: number;
  /** The saved request behind Reroll and Edit. */
  requestId: string;
  jobId: string | undefined;
  status: JobStatus;
  ahead: number | undefined;
  /** Why the wait is long, from the runner (e.g. the shared queue is unreachable). */
  notice?: Words | undefined;
  /** The language of the job's messages: the requester's (Slack has no workspace language). */
  locale: string;
  /** Preview images posted in the thread so far. */
  previewsShown: number;
  completed?:
    | {
        size: string;
        quality: string;
        /** The first image's own format (`formatsOf`), as the summary names it. */
        format: OutputFormat;
        cost: PriceQuote;
        elapsedMs: number;
        images: number;
        uploaded: boolean;
        /** The images are being posted: neither posted nor given up on yet (a fast job's message may first appear now). */
        posting?: boolean | undefined;
        /**
         * Where the images went: the channel beside the job's message, the thread the job was asked in, or (the
         * channel refused them) the requester's direct messages.
         */
        where?: 'channel' | 'thread' | 'dm' | undefined;
        /**
         * Reroll, Edit and Delete were posted in a message of their own right after the images (`renderJobActions`),
         * so the job's message shows none: one set of buttons, where the images are.
         */
        actionsBeside?: boolean | undefined;
      }
    | undefined;
  failure?: { words: Words; retryable: boolean } | undefined;
  cancelled?: { byUserId: string; reason: 'requested' | 'shutdown' } | undefined;
  /** What a failed or cancelled job was charged, when it was (its final update's `cost`: a request that reached the service). */
  charged?: JobCost | undefined;
  /** `charged` is what it may be charged, not settled yet (a job a stop cut off: the sweep's `SweptCharge` `pending`). */
  chargePending?: boolean | undefined;
}

export interface RenderedMessage {
  text: string;
  blocks: types.KnownBlock[];
}

const PROMPT_SHOWN_CHARS = 600;

/** The prompt as the job's message and its result show it: `“a lighthouse”  \`--size 1536x1024\``. */
function promptText(state: JobViewState): string {
  const flags = describeOptions(state.options);
  return `“${escapeMrkdwn(truncate(state.prompt, PROMPT_SHOWN_CHARS))}”${flags ? `  ${flags}` : ''}`;
}

/** The block id of a job message's request line: it names the saved request, so the message leads to it without buttons. */
const REQUEST_BLOCK_PREFIX = 'request.';

/** The job's one message: who asked for what, the status line, and the buttons that fit the status. */
export function renderJobMessage(state: JobViewState): RenderedMessage {
  const header = say(state.locale, 'slack.job.header', { user: `<@${state.userId}>`, kind: state.kind, inputs: state.inputCount, prompt: promptText(state) });
  const status = statusLine(state);
  const blocks: types.KnownBlock[] = [
    { type: 'section', block_id: `${REQUEST_BLOCK_PREFIX}${state.requestId}`, text: { type: 'mrkdwn', text: header } },
    { type: 'context', block_id: 'status', elements: [{ type: 'mrkdwn', text: status }] },
  ];
  const buttons = buttonsFor(state);
  if (buttons.length) blocks.push({ type: 'actions', block_id: 'job_actions', elements: buttons });
  return { text: say(state.locale, 'slack.job.text', { status: plainStatus(state) }), blocks };
}

const ACTIONS_PROMPT_CHARS = 120;

/**
 * The message right after a finished job's images, carrying its Reroll, Edit
 * and Delete: a new message (`chat.postMessage`, paced per channel), never an
 * update of the job's message (`chat.update`, Slack's Tier 3, which waits for
 * the workspace's budget when many jobs end together). It names the prompt, not
 * the person: the images' caption has mentioned them already.
 */
export function renderJobActions(state: JobViewState): RenderedMessage {
  const prompt = `“${escapeMrkdwn(truncate(state.prompt.replace(/\s+/g, ' '), ACTIONS_PROMPT_CHARS))}”`;
  return {
    text: say(state.locale, 'slack.job.actions_text', { prompt }),
    blocks: [
      { type: 'context', block_id: 'job_result', elements: [{ type: 'mrkdwn', text: `:arrow_up: ${prompt}` }] },
      { type: 'actions', block_id: 'job_actions', elements: finishedButtons(state.requestId, state.locale) },
    ],
  };
}

/** The blocks are those of the message of Reroll, Edit and Delete beside the images of the job of `requestId` (`renderJobActions`). */
export function isJobActionsMessage(blocks: unknown, requestId: string): boolean {
  return Array.isArray(blocks) && (blocks as { block_id?: unknown }[]).some((b) => b?.block_id === 'job_result') && requestIdOfJobMessage(blocks) === requestId;
}

/**
 * The private answer to a Cancel pressed on the message of a job that has
 * finished while the message still shows it running (its "Done" waits for the
 * workspace's budget of updates): where its images and their Reroll, Edit and
 * Delete are. `actionsAt` links to the message with the buttons, when known;
 * `posting` while they are still being posted; `inDirectMessages` when they
 * went to the requester's direct messages (the channel refused them).
 */
export function describeFinishedJob(input: FinishedJobWhere, locale?: string): string {
  return sayWords(locale, finishedJobWords(input));
}

/** Where a finished job's images and buttons are (`describeFinishedJob`). */
export interface FinishedJobWhere {
  actionsAt?: string | undefined;
  posting?: boolean | undefined;
  inDirectMessages?: boolean | undefined;
}

/** `describeFinishedJob`'s sentence as words, said in whoever's language reads it (a refusal's, logged in English). */
export function finishedJobWords(input: FinishedJobWhere): Words {
  const where = input.posting ? 'posting' : input.inDirectMessages ? 'dm' : input.actionsAt ? 'link' : 'below';
  return words('slack.job.finished_where', { where, link: input.actionsAt ?? '' });
}

/**
 * The comment of a finished job's images (a file share carries text, not
 * blocks): who asked, the prompt and options as the job's message shows them,
 * and its summary. The result can be read from it alone, before (or without)
 * the job's message showing "Done".
 */
export function renderResultCaption(state: JobViewState, images: number): string {
  const done = state.completed!;
  return say(state.locale, 'slack.job.caption', { user: `<@${state.userId}>`, images, prompt: promptText(state), summary: summaryOf(done, state.locale) });
}

/** `size · quality · format · cost · time`, for the message and the images' comment. */
function summaryOf(done: NonNullable<JobViewState['completed']>, locale: string): string {
  return [done.size, done.quality, done.format, costText(done.cost, locale), say(locale, 'slack.job.elapsed', { time: elapsed(done.elapsedMs) })].join(' · ');
}

/** A cost as a job's message shows it: the table price, or "up to … (estimate)". */
export function costText(cost: PriceQuote, locale: string): string {
  return say(locale, 'slack.job.cost', { basis: cost.basis, usd: usd(cost.totalUsd) });
}

/** A failed or cancelled job's status, and under it what it was charged, when it was. */
function statusLine(state: JobViewState): string {
  const charged = chargedWords(state);
  return charged ? `${statusWords(state)}\n${charged}` : statusWords(state);
}

/** What a failed or cancelled job was charged, when it was: the sentence under its status, in its message and its plain text alike. */
function chargedWords(state: JobViewState): string | undefined {
  if ((state.status !== 'failed' && state.status !== 'cancelled') || !state.charged) return undefined;
  return chargeSentence(state.locale, state.charged, state.chargePending === true);
}

/** What a job was charged (`pending`: what it may be charged, not settled yet), as its message says it under its status. */
function chargeSentence(locale: string, charged: JobCost, pending: boolean): string {
  return say(locale, pending ? 'slack.job.may_be_charged' : 'slack.job.charged', { usd: usd(charged.totalUsd) });
}

/**
 * What a job was charged, in the words its message's plain text says it (without the emoji that leads it in the
 * blocks): for where no emoji is shown, a workflow step's error (the sweep's, of a step a crash cut off).
 */
export function plainChargeWords(locale: string, charged: JobCost, pending: boolean): string {
  return withoutChargeEmoji(chargeSentence(locale, charged, pending));
}

function statusWords(state: JobViewState): string {
  const { locale } = state;
  switch (state.status) {
    case 'queued': {
      const queued = say(locale, 'slack.job.queued', { ahead: state.ahead ?? 0 });
      return state.notice ? `${queued} · ${escapeMrkdwn(sayWords(locale, state.notice))}` : queued;
    }
    case 'running':
      return say(locale, 'slack.job.drawing', { previews: state.previewsShown });
    case 'completed': {
      const done = state.completed!;
      const values = { images: done.images, summary: summaryOf(done, locale) };
      if (done.posting) return say(locale, 'slack.job.posting', values);
      return done.uploaded
        ? say(locale, 'slack.job.done', { ...values, where: done.where ?? 'thread', actionsBeside: done.actionsBeside ? 'yes' : 'no' })
        : say(locale, 'slack.job.not_posted', values);
    }
    case 'failed':
      return `:warning: ${escapeMrkdwn(state.failure ? sayWords(locale, state.failure.words) : say(locale, 'slack.job.failed'))}`;
    case 'cancelled':
      return state.cancelled?.reason === 'shutdown'
        ? say(locale, 'slack.job.restarted')
        : say(locale, 'slack.job.cancelled_by', { user: `<@${state.cancelled?.byUserId ?? state.userId}>` });
  }
}

/**
 * The status in plain words, for the message's `text` (notifications, screen readers): with what a failed or cancelled
 * job was charged, when it was, as its blocks say it (without the emoji that leads it there).
 */
function plainStatus(state: JobViewState): string {
  const { locale } = state;
  const done = state.completed;
  const summary = done ? summaryOf(done, locale) : '';
  const stage = state.status === 'completed' ? (done?.posting ? 'posting' : done?.uploaded ? 'done' : 'not_posted') : state.status;
  const failure = state.failure ? sayWords(locale, state.failure.words) : '';
  const status = say(locale, 'slack.job.plain_status', { stage, ahead: state.ahead ?? 0, summary, failure });
  const charged = chargedWords(state);
  return charged ? `${status}\n${withoutChargeEmoji(charged)}` : status;
}

/** The emoji every catalog leads its charge sentence with (`slack.job.charged`), for the blocks alone. */
const CHARGE_EMOJI = ':dollar:';

/** The charge sentence without our emoji that leads it in the blocks: the translation's own words and symbols kept. */
function withoutChargeEmoji(sentence: string): string {
  return sentence.startsWith(CHARGE_EMOJI) ? sentence.slice(CHARGE_EMOJI.length).trimStart() : sentence;
}

/** A Cancel button's value: the runner's job id (on this replica) and the request's id (for another replica to find it). */
function cancelValue(jobId: string, requestId: string): string {
  return `${jobId}:${requestId}`;
}

/** The job id and request id of a Cancel button's value (buttons made before carried the job id alone). */
export function readCancelValue(value: string): { jobId: string; requestId: string | undefined } {
  const [jobId = '', requestId] = value.split(':');
  return { jobId, requestId };
}

/**
 * The saved request behind a job message, read from its request line (or, on a message made before that line named
 * it, from its buttons); undefined when the blocks are not a job message's.
 */
export function requestIdOfJobMessage(blocks: unknown): string | undefined {
  if (!Array.isArray(blocks)) return undefined;
  const named = requestLineOf(blocks);
  if (named) return named;
  const list = blocks as { block_id?: string; elements?: { action_id?: string; value?: string }[] }[];
  const actions = list.find((b) => b?.block_id === 'job_actions');
  for (const element of actions?.elements ?? []) {
    if (!element.value) continue;
    if (element.action_id === ACTIONS.cancel) return readCancelValue(element.value).requestId;
    if (Object.values(ACTIONS).includes(element.action_id as (typeof ACTIONS)[keyof typeof ACTIONS])) return element.value;
  }
  return undefined;
}

/**
 * The saved request named by a job message's request line, and only by it (the message of Reroll, Edit and Delete names
 * it in its buttons alone); undefined when the blocks have no such line.
 */
export function requestLineOf(blocks: unknown): string | undefined {
  if (!Array.isArray(blocks)) return undefined;
  const named = (blocks as { block_id?: unknown }[]).find((b) => typeof b?.block_id === 'string' && b.block_id.startsWith(REQUEST_BLOCK_PREFIX))?.block_id as string | undefined;
  return named && named.length > REQUEST_BLOCK_PREFIX.length ? named.slice(REQUEST_BLOCK_PREFIX.length) : undefined;
}

function button(actionId: string, text: string, value: string, style?: 'primary' | 'danger'): types.Button {
  return { type: 'button', action_id: actionId, text: { type: 'plain_text', text, emoji: true }, value, ...(style ? { style } : {}) };
}

/** Reroll, Edit and Delete of a finished job: on its actions message, or on its own message when that could not be posted. */
function finishedButtons(requestId: string, locale: string): types.Button[] {
  return [
    button(ACTIONS.reroll, say(locale, 'button.reroll'), requestId),
    button(ACTIONS.edit, say(locale, 'button.edit'), requestId, 'primary'),
    button(ACTIONS.delete, say(locale, 'button.delete'), requestId, 'danger'),
  ];
}

function buttonsFor(state: JobViewState): types.Button[] {
  const { locale } = state;
  switch (state.status) {
    case 'queued':
    case 'running':
      return state.jobId ? [button(ACTIONS.cancel, say(locale, 'button.cancel'), cancelValue(state.jobId, state.requestId), 'danger')] : [];
    case 'completed':
      if (state.completed?.posting || state.completed?.actionsBeside) return [];
      return state.completed?.uploaded ? finishedButtons(state.requestId, locale) : [button(ACTIONS.reroll, say(locale, 'button.reroll'), state.requestId)];
    case 'failed':
      return [button(ACTIONS.reroll, say(locale, state.failure?.retryable ? 'button.try_again' : 'button.reroll'), state.requestId)];
    case 'cancelled':
      return [button(ACTIONS.reroll, say(locale, 'button.reroll'), state.requestId)];
  }
}

/** The options that differ from the spec's defaults, as the flags that set them: `--size 1536x1024 --n 2`. */
export function describeOptions(options: JobOptions): string {
  const defaults: Record<string, unknown> = { ...DEFAULTS };
  const parts: string[] = [];
  for (const [flag, spec] of Object.entries(FLAGS)) {
    const value = (options as Record<string, unknown>)[spec.field];
    if (value !== undefined && value !== defaults[spec.field]) parts.push(`\`--${flag} ${String(value)}\``);
  }
  return parts.join(' ');
}
