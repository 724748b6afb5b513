import { ButtonStyle, ComponentType, type APIActionRowComponent, type APIButtonComponentWithCustomId } from 'discord.js';
import { formatUsd, type PriceQuote } from '../../src/index.js';
import type { JobUpdate } from '../runner/types.js';
import { encodeCustomId } from './custom-ids.js';
import { DISCORD_LIMITS } from './discord-facts.js';
import type { OutgoingFile } from './fit-images.js';
import { describeElapsed, promptExcerpt } from './text.js';

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
}

type Completed = Extract<JobUpdate, { type: 'completed' }>;

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

export const cancelButtons = (key: string) => rows([button('Cancel', '✖️', ButtonStyle.Danger, encodeCustomId({ action: 'cancel', key }))]);
export const retryButtons = (key: string) => rows([button('Retry', '🔁', ButtonStyle.Primary, encodeCustomId({ action: 'retry', key }))]);

/** Reroll, one Edit per image (just "Edit" for a single image), and Delete (the requester or an admin: the message and its images). */
export function resultButtons(key: string, images: number): APIActionRowComponent<APIButtonComponentWithCustomId>[] {
  const edits = Array.from({ length: Math.min(images, DISCORD_LIMITS.buttonsPerRow * DISCORD_LIMITS.rowsPerMessage - 2) }, (_, i) =>
    button(images === 1 ? 'Edit' : `Edit ${i + 1}`, '✏️', ButtonStyle.Secondary, encodeCustomId({ action: 'edit', key, index: i })),
  );
  return rows([
    button('Reroll', '🎲', ButtonStyle.Primary, encodeCustomId({ action: 'reroll', key })),
    ...edits,
    button('Delete', '🗑️', ButtonStyle.Danger, encodeCustomId({ action: 'delete', key })),
  ]);
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
  return { content: withHeadline(job, '⏳ Getting ready…'), components: cancelButtons(job.key), files: [] };
}

export function renderQueued(job: JobHeader, ahead: number, notice?: string): OutgoingMessage {
  const position = ahead <= 0 ? '⏳ Next in line…' : `⏳ In the queue: ${ahead} ${ahead === 1 ? 'job' : 'jobs'} ahead of yours.`;
  const line = notice ? `${position}\n${notice}` : position;
  return { content: withHeadline(job, line), components: cancelButtons(job.key), files: [] };
}

export function renderStarted(job: JobHeader): OutgoingMessage {
  const what = job.n > 1 ? `${job.n} images` : job.kind === 'edit' ? 'the edit' : 'the image';
  return { content: withHeadline(job, `🎨 Drawing ${what}…`), components: cancelButtons(job.key), files: [] };
}

/** A preview replacing the previous one; `file` is undefined when it could not be made small enough to upload. */
export function renderPartial(job: JobHeader, update: { imageIndex: number; partialIndex: number }, file: OutgoingFile | undefined): OutgoingMessage {
  const of = job.n > 1 ? ` (image ${update.imageIndex + 1} of ${job.n})` : '';
  const line = `🎨 Drawing… preview ${update.partialIndex + 1}${of}`;
  return { content: withHeadline(job, line), components: cancelButtons(job.key), files: file ? [file] : [] };
}

export function describeCost(cost: PriceQuote): string {
  return cost.basis === 'table' ? formatUsd(cost.totalUsd) : `up to ${formatUsd(cost.totalUsd)} (estimate)`;
}

/** The final images with size · quality · format · cost · time, and notes on what had to change to upload them. */
export function renderCompleted(job: JobHeader, update: Completed, files: OutgoingFile[], notes: string[]): OutgoingMessage {
  const facts = [update.size, update.quality, update.format, describeCost(update.cost), describeElapsed(update.elapsedMs)].join(' · ');
  return {
    content: withHeadline(job, facts, ...notes.map((note) => `ℹ️ ${note}`)),
    components: resultButtons(job.key, update.images.length),
    files,
  };
}

const FAILURE_ICONS: Record<string, string> = {
  moderation_blocked: '🚫',
  budget_user_daily: '💸',
  budget_scope_daily: '💸',
  quota_exhausted: '💸',
  rate_limited: '⏳',
  server_error: '⏳',
  user_cooldown: '⏳',
  user_concurrency: '⏳',
  validation_error: '✋',
};

/** A failure or refusal: the runner's kind sentence (never an error's raw text), and Retry when trying again may help. */
export function renderFailure(job: JobHeader, failure: { code: string; message: string; retryable: boolean }): OutgoingMessage {
  const icon = FAILURE_ICONS[failure.code] ?? '⚠️';
  return { content: withHeadline(job, `${icon} ${failure.message}`), components: failure.retryable ? retryButtons(job.key) : [], files: [] };
}

export function renderCancelled(job: JobHeader, update: Extract<JobUpdate, { type: 'cancelled' }>): OutgoingMessage {
  const line =
    update.reason === 'shutdown' || !update.byUserId
      ? '🔌 The bot restarted before this was done; press Retry to run it again.'
      : `✖️ Cancelled by <@${update.byUserId}>.`;
  return { content: withHeadline(job, line), components: retryButtons(job.key), files: [] };
}

/** A job of a button whose record is gone (too old) or whose runner lost it (a restart). */
export function renderInterrupted(job: JobHeader): OutgoingMessage {
  return {
    content: withHeadline(job, '🔌 This job stopped when the bot restarted; press Retry to run it again.'),
    components: retryButtons(job.key),
    files: [],
  };
}

