import { LIMITS, QUALITIES, SIZES, type Quality, type Size } from 'pictor';
import { envBoolean, envError, envList, envNumber, envSeconds, envText, MAX_TIMER_MS, readBreakerSettings, readDmCaps, type Env, type SpendCaps } from 'pictor/internal';
import { BLOCKED_WORDS_LIMITS, parseWordList, unmatchableEntries } from './blocked-words.js';
import { DEFAULT_MAX_QUEUED_INPUT_MB, DEFAULT_MAX_QUEUED_JOBS } from './queue-bound.js';
import type { OperatorControls } from './scope-policy.js';
import type { DmCaps, SpendLimits } from './types.js';

export interface RunnerConfig {
  limits: SpendLimits;
  /** `PICTOR_DM_DAILY_USD`, `PICTOR_DM_MONTHLY_USD`: each person's own budget in DMs and user installs (with the user and account caps). */
  dmCaps: DmCaps;
  partialImages: number;
  minUpdateIntervalMs: number;
  /** How long a stop (SIGTERM) lets jobs already taken run to their end before it cancels them. */
  shutdownGraceMs: number;
  /** What every server/workspace may do at most: where the bot works, blocked words, images per job, qualities, sizes, moderation. */
  controls: OperatorControls;
  /** Days members' job history (prompts included) is kept for `/imagine history`. */
  historyRetentionDays: number;
  /** Jobs waiting to be sent at once; past it a new one is refused (`queue_full`). */
  maxQueuedJobs: number;
  /** Bytes of edit input images held at once (`PICTOR_MAX_QUEUED_INPUT_MB`); past it a new edit is refused (`queue_full`, or `input_too_large` for one that alone passes it). */
  maxQueuedInputBytes: number;
  /** Previews re-encoded at display size before they are uploaded (`PICTOR_LIGHT_PREVIEWS`, default on). */
  lightPreviews: boolean;
}

/** Covers a high-quality image that was queued behind others; see bots/README.md for the matching container/service setting. */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 300;

/** Time the stop steps after the grace get (the last chat messages, closing connections) before the process ends regardless. */
export const STOP_ALLOWANCE_MS = 10_000;

/** A comma-separated list whose every entry is one of `choices`; undefined when unset. */
function envChoices<T extends string>(env: Env, name: string, choices: readonly T[]): T[] | undefined {
  const items = envList(env, name, /\s*,\s*/);
  if (items === undefined) return undefined;
  if (!items.every((item) => (choices as readonly string[]).includes(item))) throw envError(env, name, `one or more of ${choices.join(', ')}, separated by commas`);
  return items as T[];
}

/**
 * The job runner's settings from the environment, shared by the Discord and
 * Slack bots, with the money caps the core's config read (`readCoreConfig(env).spend.caps`,
 * the one parser of them: `npm start` reads them once). Throws a ValidationError
 * naming the variable and what it takes.
 */
export function readRunnerConfig(env: Env, caps: SpendCaps): RunnerConfig {
  // The stop's deadline is one timer of the grace and the allowance: longer, it would fire at once.
  const graceSeconds = envSeconds(env, 'PICTOR_SHUTDOWN_GRACE_SECONDS', { min: 0, plusMs: STOP_ALLOWANCE_MS });
  return {
    limits: {
      ...caps,
      userConcurrentJobs: envNumber(env, 'PICTOR_USER_CONCURRENT_JOBS', { int: true, min: 1, takes: 'a whole number of jobs, 1 or more' }) ?? 2,
      userCooldownSeconds: envNumber(env, 'PICTOR_USER_COOLDOWN_SECONDS', { min: 0, takes: 'a number of seconds, 0 or more' }) ?? 0,
      // The breaker (PICTOR_BREAKER_*): off until set; checked by the ledger with the caps.
      breaker: readBreakerSettings(env),
    },
    // The only reader of the DM caps in `npm start` (the Discord surface checks them through the runner: `runner.budgets.dmCaps`).
    dmCaps: readDmCaps(env),
    partialImages: envNumber(env, 'PICTOR_PARTIAL_IMAGES', { int: true, min: LIMITS.partialImagesMin, max: LIMITS.partialImagesMax }) ?? 2,
    minUpdateIntervalMs: envNumber(env, 'PICTOR_UPDATE_INTERVAL_MS', { int: true, min: 0, max: MAX_TIMER_MS, takes: `a whole number of milliseconds, from 0 to ${MAX_TIMER_MS}` }) ?? 1500,
    shutdownGraceMs: (graceSeconds ?? DEFAULT_SHUTDOWN_GRACE_SECONDS) * 1000,
    controls: readOperatorControls(env),
    historyRetentionDays: envNumber(env, 'PICTOR_HISTORY_RETENTION_DAYS', { int: true, min: 1, max: 3650, takes: 'a whole number of days from 1 to 3650' }) ?? 30,
    maxQueuedJobs: envNumber(env, 'PICTOR_MAX_QUEUED_JOBS', { int: true, min: 1, takes: 'a whole number of jobs, 1 or more' }) ?? DEFAULT_MAX_QUEUED_JOBS,
    maxQueuedInputBytes:
      (envNumber(env, 'PICTOR_MAX_QUEUED_INPUT_MB', { int: true, min: 1, takes: 'a whole number of megabytes, 1 or more' }) ?? DEFAULT_MAX_QUEUED_INPUT_MB) * 1024 * 1024,
    lightPreviews: envBoolean(env, 'PICTOR_LIGHT_PREVIEWS', '1 (previews re-encoded at display size) or 0 (the partial images as sent)') ?? true,
  };
}

/** What the operator allows every server/workspace: `PICTOR_ALLOWED_SCOPES`, `PICTOR_BLOCKED_WORDS` and the others in bots/README.md. */
function readOperatorControls(env: Env): OperatorControls {
  const allowedScopes = envList(env, 'PICTOR_ALLOWED_SCOPES', /\s*,\s*/);
  if (allowedScopes && !allowedScopes.every((id) => /^[A-Za-z0-9_-]{1,64}$/.test(id))) {
    throw envError(env, 'PICTOR_ALLOWED_SCOPES', 'Discord server ids and Slack workspace ids separated by commas');
  }
  const wordsText = envText(env, 'PICTOR_BLOCKED_WORDS');
  const blockedWords = wordsText === undefined ? [] : parseWordList(wordsText);
  const unmatchable = unmatchableEntries(blockedWords);
  if (unmatchable.length > 0) {
    throw envError(env, 'PICTOR_BLOCKED_WORDS', `words, phrases, emoji or symbols separated by commas; ${unmatchable.map((w) => JSON.stringify(w)).join(', ')} would never match`);
  }
  if (blockedWords.length > BLOCKED_WORDS_LIMITS.entries || blockedWords.some((w) => w.length > BLOCKED_WORDS_LIMITS.length)) {
    throw envError(
      env,
      'PICTOR_BLOCKED_WORDS',
      `words or phrases separated by commas, at most ${BLOCKED_WORDS_LIMITS.entries} of at most ${BLOCKED_WORDS_LIMITS.length} characters each`,
    );
  }
  return {
    allowedScopes,
    blockedWords,
    maxImagesPerJob: envNumber(env, 'PICTOR_MAX_IMAGES_PER_JOB', { int: true, min: LIMITS.nMin, max: LIMITS.nMax }) ?? LIMITS.nMax,
    qualities: envChoices<Quality>(env, 'PICTOR_ALLOWED_QUALITIES', QUALITIES) ?? [...QUALITIES],
    sizes: envChoices<Size>(env, 'PICTOR_ALLOWED_SIZES', SIZES) ?? [...SIZES],
    allowLowModeration: envBoolean(env, 'PICTOR_ALLOW_LOW_MODERATION', '1 (chat admins may choose moderation low) or 0') ?? false,
  };
}
