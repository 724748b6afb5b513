import { describe, expect, it } from 'vitest';
import { readRunnerConfig, STOP_ALLOWANCE_MS } from '../../../bots/runner/index.js';
import { QUALITIES, SIZES, ValidationError } from '../../../src/index.js';
import { readSpendCaps, type Env } from '../../../src/internal.js';

/** As `npm start` reads them: the caps by the core's config, the rest here. */
const readConfig = (env: Env) => readRunnerConfig(env, readSpendCaps(env));

/** What the operator allows every server/workspace when nothing is set. */
const OPEN_CONTROLS = { allowedScopes: undefined, blockedWords: [], maxImagesPerJob: 10, qualities: [...QUALITIES], sizes: [...SIZES], allowLowModeration: false };

function errorOf(env: NodeJS.ProcessEnv): ValidationError {
  try {
    readConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected the environment to be refused');
}

describe('readRunnerConfig', () => {
  it('takes the money caps the core’s config read, and reads none of them again', () => {
    const config = readRunnerConfig({ PICTOR_USER_MONTHLY_USD: 'lots', PICTOR_USER_DAILY_USD: '9' }, { userDailyUsd: 2 });
    expect(config.limits).toEqual({ userDailyUsd: 2, userConcurrentJobs: 2, userCooldownSeconds: 0 });
  });

  it('takes the defaults from an empty environment, with no budgets', () => {
    expect(readConfig({})).toEqual({
      limits: { userDailyUsd: undefined, scopeDailyUsd: undefined, userConcurrentJobs: 2, userCooldownSeconds: 0 },
      dmCaps: { dailyUsd: undefined, monthlyUsd: undefined },
      partialImages: 2,
      minUpdateIntervalMs: 1500,
      shutdownGraceMs: 300_000,
      controls: OPEN_CONTROLS,
      historyRetentionDays: 30,
      maxQueuedJobs: 200,
      maxQueuedInputBytes: 512 * 1024 * 1024,
      lightPreviews: true,
    });
  });

  it('reads every variable, treating blank ones as unset', () => {
    const config = readConfig({
      PICTOR_USER_DAILY_USD: '1.50',
      PICTOR_SCOPE_DAILY_USD: ' ',
      PICTOR_USER_CONCURRENT_JOBS: '3',
      PICTOR_USER_COOLDOWN_SECONDS: '10',
      PICTOR_PARTIAL_IMAGES: '0',
      PICTOR_UPDATE_INTERVAL_MS: '800',
      PICTOR_SHUTDOWN_GRACE_SECONDS: '600',
      PICTOR_MAX_QUEUED_JOBS: '50',
      PICTOR_MAX_QUEUED_INPUT_MB: '256',
      PICTOR_LIGHT_PREVIEWS: '0',
      PICTOR_DM_DAILY_USD: '0.50',
      PICTOR_DM_MONTHLY_USD: '5',
    });
    expect(config).toEqual({
      limits: { userDailyUsd: 1.5, scopeDailyUsd: undefined, userConcurrentJobs: 3, userCooldownSeconds: 10 },
      dmCaps: { dailyUsd: 0.5, monthlyUsd: 5 },
      partialImages: 0,
      minUpdateIntervalMs: 800,
      shutdownGraceMs: 600_000,
      controls: OPEN_CONTROLS,
      historyRetentionDays: 30,
      maxQueuedJobs: 50,
      maxQueuedInputBytes: 256 * 1024 * 1024,
      lightPreviews: false,
    });
  });

  it('names the variable and what it takes when a value is wrong', () => {
    const budget = errorOf({ PICTOR_USER_DAILY_USD: 'ten dollars' });
    expect(budget.param).toBe('PICTOR_USER_DAILY_USD');
    expect(budget.message).toBe('PICTOR_USER_DAILY_USD must be a number of US dollars, 0 or more (leave it unset for no limit) (got "ten dollars")');
    expect(errorOf({ PICTOR_DM_DAILY_USD: '-1' }).param).toBe('PICTOR_DM_DAILY_USD');
    expect(errorOf({ PICTOR_PARTIAL_IMAGES: '4' }).message).toMatch(/^PICTOR_PARTIAL_IMAGES must be a whole number from 0 to 3/);
    expect(errorOf({ PICTOR_USER_CONCURRENT_JOBS: '0' }).param).toBe('PICTOR_USER_CONCURRENT_JOBS');
    expect(errorOf({ PICTOR_SCOPE_DAILY_USD: '-1' }).param).toBe('PICTOR_SCOPE_DAILY_USD');
    expect(errorOf({ PICTOR_USER_COOLDOWN_SECONDS: 'soon' }).param).toBe('PICTOR_USER_COOLDOWN_SECONDS');
    expect(errorOf({ PICTOR_UPDATE_INTERVAL_MS: '1.5' }).param).toBe('PICTOR_UPDATE_INTERVAL_MS');
    expect(errorOf({ PICTOR_UPDATE_INTERVAL_MS: String(2 ** 31) }).param).toBe('PICTOR_UPDATE_INTERVAL_MS');
    expect(errorOf({ PICTOR_SHUTDOWN_GRACE_SECONDS: 'a while' }).param).toBe('PICTOR_SHUTDOWN_GRACE_SECONDS');
    expect(errorOf({ PICTOR_MAX_QUEUED_JOBS: '0' }).message).toMatch(/^PICTOR_MAX_QUEUED_JOBS must be a whole number of jobs, 1 or more/);
    expect(errorOf({ PICTOR_MAX_QUEUED_INPUT_MB: '0.5' }).message).toMatch(/^PICTOR_MAX_QUEUED_INPUT_MB must be a whole number of megabytes, 1 or more/);
    expect(errorOf({ PICTOR_LIGHT_PREVIEWS: 'smaller' }).param).toBe('PICTOR_LIGHT_PREVIEWS');
  });

  it('refuses a grace the stop’s deadline (the grace and STOP_ALLOWANCE_MS, one timer) cannot hold', () => {
    const longest = Math.floor((2 ** 31 - 1 - STOP_ALLOWANCE_MS) / 1000);
    expect(readConfig({ PICTOR_SHUTDOWN_GRACE_SECONDS: String(longest) }).shutdownGraceMs + STOP_ALLOWANCE_MS).toBeLessThanOrEqual(2 ** 31 - 1);
    const error = errorOf({ PICTOR_SHUTDOWN_GRACE_SECONDS: '2200000' });
    expect(error.param).toBe('PICTOR_SHUTDOWN_GRACE_SECONDS');
    expect(error.message).toMatch(new RegExp(`^PICTOR_SHUTDOWN_GRACE_SECONDS must be a number of seconds from 0 to ${longest} `));
  });

  it('reads what the operator allows every server and workspace', () => {
    const { controls } = readConfig({
      PICTOR_ALLOWED_SCOPES: ' 123456789012345678, T0ABC ',
      PICTOR_BLOCKED_WORDS: 'gore, Café,,red fox',
      PICTOR_MAX_IMAGES_PER_JOB: '4',
      PICTOR_ALLOWED_QUALITIES: 'low,medium',
      PICTOR_ALLOWED_SIZES: '1024x1024',
      PICTOR_ALLOW_LOW_MODERATION: '1',
    });
    expect(controls).toEqual({
      allowedScopes: ['123456789012345678', 'T0ABC'],
      blockedWords: ['gore', 'Café', 'red fox'],
      maxImagesPerJob: 4,
      qualities: ['low', 'medium'],
      sizes: ['1024x1024'],
      allowLowModeration: true,
    });
    expect(errorOf({ PICTOR_MAX_IMAGES_PER_JOB: '11' }).param).toBe('PICTOR_MAX_IMAGES_PER_JOB');
    expect(errorOf({ PICTOR_ALLOWED_QUALITIES: 'low,best' }).message).toMatch(/^PICTOR_ALLOWED_QUALITIES must be one or more of low, medium, high, auto/);
    expect(errorOf({ PICTOR_ALLOWED_SIZES: '512x512' }).param).toBe('PICTOR_ALLOWED_SIZES');
    expect(errorOf({ PICTOR_ALLOW_LOW_MODERATION: 'maybe' }).param).toBe('PICTOR_ALLOW_LOW_MODERATION');
    expect(errorOf({ PICTOR_ALLOWED_SCOPES: 'a b' }).param).toBe('PICTOR_ALLOWED_SCOPES');
  });

  it('reads blocked words as the chat admins’ list is read: emoji and unspaced scripts kept, an entry that could never match refused by name', () => {
    expect(readConfig({ PICTOR_BLOCKED_WORDS: '殺す, 🍆, gore' }).controls.blockedWords).toEqual(['殺す', '🍆', 'gore']);
    const error = errorOf({ PICTOR_BLOCKED_WORDS: 'gore, ...' });
    expect(error.param).toBe('PICTOR_BLOCKED_WORDS');
    expect(error.message).toMatch(/^PICTOR_BLOCKED_WORDS must be words, phrases, emoji or symbols separated by commas; "\.\.\." would never match/);
  });
});
