import { ButtonStyle, ComponentType, type APIActionRowComponent, type APIButtonComponentWithCustomId } from 'discord.js';
import { DEFAULTS, type PriceQuote } from 'pictor';
import { DEFAULT_LOCALE, elapsed, say, sayWords, usd, type FailureCode, type Words } from '../runner/index.js';
import type { JobRecord } from './JobRecordStore.js';
import { formatsOf, type JobCost, type JobUpdate } from '../runner/types.js';
import { COMMAND_NAMES } from './command-words.js';
import { encodeCustomId } from './custom-ids.js';
import { DISCORD_LIMITS } from './discord-facts.js';
import type { OutgoingFile } from './fit-images.js';
import { promptExcerpt } from './text.js';

/** One message as this surface sends it: everything replaced on each edit. */
export interface OutgoingMessage {
  content: string;
  components: APIActionRowComponent<APIButtonComponentWithCustomId>[];
  files: OutgoingFile[];
}

/** What every rendering of a job needs to know about it. */
export interface JobHeader {
  /** The job record's key (for buttons). */
  key: string;
  kind: 'generate' | 'edit';
  prompt: string;
  /** Images asked for. */
  n: number;
  /**
   * The language of the job's public messages: the server's (`guild_locale`: everyone in the channel reads them),
   * or the member's outside servers.
   */
  locale: string;
}

type Completed = Extract<JobUpdate, { type: 'completed' }>;

/** The header of a kept job (a button pressed later, the sweep after a restart). */
export function headerOf(record: Pick<JobRecord, 'key' | 'kind' | 'prompt' | 'options' | 'locale'>): JobHeader {
  return { key: record.key, kind: record.kind, prompt: record.prompt, n: record.options.n ?? DEFAULTS.n, locale: record.locale ?? DEFAULT_LOCALE };
}

const button = (label: string, emoji: string, style: ButtonStyle.Primary | ButtonStyle.Secondary | ButtonStyle.Danger, customId: string): APIButtonComponentWithCustomId => ({
  type: ComponentType.Button,
  style,
  label,
  emoji: { name: emoji },
  custom_id: customId,
});

function rows(buttons: APIButtonComponentWithCustomId[]): APIActionRowComponent<APIButtonComponentWithCustomId>[] {
  const out: APIActionRowComponent<APIButtonComponentWithCustomId>[] = [];
  for (let i = 0; i < buttons.length && out.length < DISCORD_LIMITS.rowsPerMessage; i += DISCORD_LIMITS.buttonsPerRow) {
    out.push({ type: ComponentType.ActionRow, components: buttons.slice(i, i + DISCORD_LIMITS.buttonsPerRow) });
  }
  return out;
}

export const cancelButtons = (key: string, locale: string) => rows([button(say(locale, 'button.cancel'), '✖️', ButtonStyle.Danger, encodeCustomId({ action: 'cancel', key }))]);
export const retryButtons = (key: string, locale: string) => rows([button(say(locale, 'button.retry'), '🔁', ButtonStyle.Primary, encodeCustomId({ action: 'retry', key }))]);

/**
 * Which of a job's saved images a result shows: their indices among the images the job made (`StoredImage.index`: what an Edit button names, so
 * it opens that image whatever was left out) and how many the job made (what the buttons' numbers count).
 */
export interface ShownImages {
  indices: readonly number[];
  made: number;
}

/** All of a job's images, in order: a result shown as it finished. */
export const allImages = (count: number): ShownImages => ({ indices: Array.from({ length: count }, (_, i) => i), made: count });

/**
 * Reroll, one Edit per image shown (just "Edit" for a single image) — each numbered and naming the saved image it
 * opens — and Delete (the requester or an admin: the message and its images).
 */
export function resultButtons(key: string, shown: ShownImages, locale: string): APIActionRowComponent<APIButtonComponentWithCustomId>[] {
  return rows(withImageButtons(key, shown, locale, button(say(locale, 'button.reroll'), '🎲', ButtonStyle.Primary, encodeCustomId({ action: 'reroll', key }))));
}

/** `first` (Reroll or Retry), one Edit per image shown and Delete: as many Edits as the message has room for. */
function withImageButtons(key: string, shown: ShownImages, locale: string, first: APIButtonComponentWithCustomId | undefined): APIButtonComponentWithCustomId[] {
  const room = DISCORD_LIMITS.buttonsPerRow * DISCORD_LIMITS.rowsPerMessage - 1 - (first ? 1 : 0);
  const edits = shown.indices
    .slice(0, room)
    .map((index) => button(say(locale, 'button.edit_image', { images: shown.made, index: index + 1 }), '✏️', ButtonStyle.Secondary, encodeCustomId({ action: 'edit', key, index })));
  return [...(first ? [first] : []), ...edits, button(say(locale, 'button.delete'), '🗑️', ButtonStyle.Danger, encodeCustomId({ action: 'delete', key }))];
}

function headline(job: JobHeader): string {
  return `${job.kind === 'edit' ? '✏️' : '🖌️'} **${promptExcerpt(job.prompt)}**`;
}

const withHeadline = (job: JobHeader, ...lines: string[]): string => clamp([headline(job), ...lines].join('\n'));

function clamp(content: string): string {
  return content.length <= DISCORD_LIMITS.contentChars ? content : `${content.slice(0, DISCORD_LIMITS.contentChars - 1)}…`;
}

/** Before the runner has said anything: the job is accepted. */
export function renderAccepted(job: JobHeader): OutgoingMessage {
  return { content: withHeadline(job, say(job.locale, 'discord.job.getting_ready')), components: cancelButtons(job.key, job.locale), files: [] };
}

export function renderQueued(job: JobHeader, ahead: number, notice?: Words): OutgoingMessage {
  const position = say(job.locale, 'discord.job.queued', { ahead: Math.max(0, ahead) });
  const line = notice ? `${position}\n${sayWords(job.locale, notice)}` : position;
  return { content: withHeadline(job, line), components: cancelButtons(job.key, job.locale), files: [] };
}

export function renderStarted(job: JobHeader): OutgoingMessage {
  return { content: withHeadline(job, say(job.locale, 'discord.job.drawing', { n: job.n, kind: job.kind })), components: cancelButtons(job.key, job.locale), files: [] };
}

/** A preview replacing the previous one; `file` is undefined when it could not be made small enough to upload. */
export function renderPartial(job: JobHeader, update: { imageIndex: number; partialIndex: number }, file: OutgoingFile | undefined): OutgoingMessage {
  const line = say(job.locale, 'discord.job.preview', { preview: update.partialIndex + 1, image: update.imageIndex + 1, n: job.n });
  return { content: withHeadline(job, line), components: cancelButtons(job.key, job.locale), files: file ? [file] : [] };
}

/** A cost as the job's message shows it: the table price, or "up to … (estimate)". */
export function describeCost(cost: PriceQuote, locale: string): string {
  return say(locale, 'discord.job.cost', { basis: cost.basis, usd: usd(cost.totalUsd) });
}

/**
 * The final images with size · quality · format · cost · time, and notes on what had to change to upload them; `shown`
 * says which saved images they are (all of them, unless some were no longer kept).
 */
export function renderCompleted(job: JobHeader, update: Completed, files: OutgoingFile[], notes: string[], shown: ShownImages = allImages(update.images.length)): OutgoingMessage {
  const facts = [update.size, update.quality, [...new Set(formatsOf(update, update.images.length))].join('/'), describeCost(update.cost, job.locale), say(job.locale, 'discord.job.elapsed', { time: elapsed(update.elapsedMs) })].join(' · ');
  return {
    content: withHeadline(job, facts, ...notes.map((note) => `ℹ️ ${note}`)),
    components: resultButtons(job.key, shown, job.locale),
    files,
  };
}

/**
 * The images of a finished job whose facts (size, quality, cost, time) were not kept with them — a record of an older
 * version, swept after a restart — with their buttons: made and charged, shown now.
 */
export function renderKeptResult(job: JobHeader, files: OutgoingFile[], notes: string[], shown: ShownImages): OutgoingMessage {
  return {
    content: withHeadline(job, say(job.locale, 'discord.job.result_kept_unshown'), ...notes.map((note) => `ℹ️ ${note}`)),
    components: resultButtons(job.key, shown, job.locale),
    files,
  };
}

/**
 * Each failure's icon by its code, checked against the codes a job fails with (`FailureCode`: a code none fails with is
 * no key here); ⚠️ for the rest, and for a code a kept record of another version holds.
 */
const FAILURE_ICONS: Readonly<Record<string, string>> = {
  moderation_blocked: '🚫',
  budget_user_daily: '💸',
  budget_scope_daily: '💸',
  quota_exhausted: '💸',
  rate_limited: '⏳',
  server_error: '⏳',
  user_cooldown: '⏳',
  user_concurrency: '⏳',
  validation_error: '✋',
} satisfies Partial<Record<FailureCode, string>>;

/**
 * A failure or refusal: the runner's kind sentence in the job's language (never an error's raw text), what it was
 * charged when it was (`cost`: a request that reached the service), and Retry when
 * trying again may help and the job can run again (`retry`: false for a kept job `whyNotRunAgain` refuses). A failure
 * that came with images (`shown`: made and charged, shown with it) has their buttons as a result does — an Edit per
 * image and Delete, so the member can take their public images down — beside that Retry.
 */
export function renderFailure(
  job: JobHeader,
  failure: { code: string; words: Words; retryable: boolean; cost?: JobCost | undefined },
  retry = true,
  shown?: ShownImages,
): OutgoingMessage {
  const icon = FAILURE_ICONS[failure.code] ?? '⚠️';
  const line = `${icon} ${sayWords(job.locale, failure.words)}`;
  return { content: withHeadline(job, line, ...chargedLine(job, failure.cost)), components: endButtons(job, failure.retryable && retry, shown), files: [] };
}

/** The line saying what a failed or cancelled job was charged, when it was (its final update's `cost`): none otherwise. */
function chargedLine(job: JobHeader, cost: JobCost | undefined, pending = false): string[] {
  return cost ? [say(job.locale, pending ? 'discord.job.may_be_charged' : 'discord.job.charged', { usd: usd(cost.totalUsd) })] : [];
}

/**
 * A cancellation (by a member, or by a stop) and what it was charged, with Retry when the job can run again (`retry`, as
 * `renderFailure`'s); one that came with images (`shown`) has their Edit and Delete buttons beside it, as a failure does.
 */
export function renderCancelled(job: JobHeader, update: Extract<JobUpdate, { type: 'cancelled' }>, retry = true, shown?: ShownImages): OutgoingMessage {
  const line =
    update.reason === 'shutdown' || !update.byUserId ? say(job.locale, 'discord.job.restarted_before_done') : say(job.locale, 'discord.job.cancelled_by', { user: `<@${update.byUserId}>` });
  return { content: withHeadline(job, line, ...chargedLine(job, update.cost)), components: endButtons(job, retry, shown), files: [] };
}

/** A failed or cancelled job's buttons: Retry (`retry`), and with the images it came with (`shown`) an Edit each and Delete. */
function endButtons(job: JobHeader, retry: boolean, shown: ShownImages | undefined): APIActionRowComponent<APIButtonComponentWithCustomId>[] {
  const again = retry ? button(say(job.locale, 'button.retry'), '🔁', ButtonStyle.Primary, encodeCustomId({ action: 'retry', key: job.key })) : undefined;
  return shown && shown.indices.length > 0 ? rows(withImageButtons(job.key, shown, job.locale, again)) : again ? rows([again]) : [];
}

/** A job that finished before the bot restarted, its result never shown and its images no longer kept: no Retry (it would charge again). */
export function renderResultGone(job: JobHeader): OutgoingMessage {
  return { content: withHeadline(job, say(job.locale, 'discord.job.result_gone', COMMAND_NAMES)), components: [], files: [] };
}

/**
 * A job of a button whose record is gone (too old) or whose runner lost it (a restart): with Retry when it can run again
 * (`retry`), else saying it cannot (its prompt erased, its input images no longer kept); and what the ledger charged it
 * (`cost`: its request had reached the service), as a cancelled job's message says — or may charge it (`pending`: the
 * ledger has not settled it yet).
 */
export function renderInterrupted(job: JobHeader, retry = true, cost?: JobCost, pending = false): OutgoingMessage {
  return {
    content: withHeadline(job, say(job.locale, retry ? 'discord.job.interrupted' : 'discord.job.interrupted_no_retry', COMMAND_NAMES), ...chargedLine(job, cost, pending)),
    components: retry ? retryButtons(job.key, job.locale) : [],
    files: [],
  };
}
