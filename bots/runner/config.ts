import { envNumber, envText, LIMITS, readSpendCaps, type Env } from '../../src/index.js';
import { DEFAULT_MAX_QUEUED_JOBS } from './queue-bound.js';
import type { SpendLimits } from './types.js';

export interface RunnerConfig {
  /** Folder of the quota ledger (and other bot state). */
  dataDir: string;
  limits: SpendLimits;
  partialImages: number;
  minUpdateIntervalMs: number;
  /** How long a stop (SIGTERM) lets jobs already taken run to their end before it cancels them. */
  shutdownGraceMs: number;
  /** Jobs waiting to be sent at once; past it a new one is refused (`queue_full`). */
  maxQueuedJobs: number;
}

/** Covers a high-quality image that was queued behind others; see bots/README.md for the matching container/service setting. */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 300;

/**
 * The job runner's settings from the environment, shared by the Discord and
 * Slack bots. Throws a ValidationError naming the variable and what it takes.
 */
export function readRunnerConfig(env: Env): RunnerConfig {
  // Every cap (account, user, scope; daily and monthly) through the core's one parser of them.
  const caps = readSpendCaps(env);
  const graceSeconds = envNumber(env, 'PICTOR_SHUTDOWN_GRACE_SECONDS', { min: 0, takes: 'a number of seconds, 0 or more' });
  return {
    dataDir: envText(env, 'PICTOR_DATA_DIR') ?? './.data',
    limits: {
      ...caps,
      userConcurrentJobs: envNumber(env, 'PICTOR_USER_CONCURRENT_JOBS', { int: true, min: 1, takes: 'a whole number of jobs, 1 or more' }) ?? 2,
      userCooldownSeconds: envNumber(env, 'PICTOR_USER_COOLDOWN_SECONDS', { min: 0, takes: 'a number of seconds, 0 or more' }) ?? 0,
    },
    partialImages: envNumber(env, 'PICTOR_PARTIAL_IMAGES', { int: true, min: LIMITS.partialImagesMin, max: LIMITS.partialImagesMax }) ?? 2,
    minUpdateIntervalMs: envNumber(env, 'PICTOR_UPDATE_INTERVAL_MS', { int: true, min: 0, takes: 'a whole number of milliseconds, 0 or more' }) ?? 1500,
    shutdownGraceMs: (graceSeconds ?? DEFAULT_SHUTDOWN_GRACE_SECONDS) * 1000,
    maxQueuedJobs: envNumber(env, 'PICTOR_MAX_QUEUED_JOBS', { int: true, min: 1, takes: 'a whole number of jobs, 1 or more' }) ?? DEFAULT_MAX_QUEUED_JOBS,
  };
}
