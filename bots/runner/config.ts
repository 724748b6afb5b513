import { z } from 'zod';
import { LIMITS, readSpendCaps, ValidationError } from '../../src/index.js';
import type { SpendLimits } from './types.js';

export interface RunnerConfig {
  /** Folder of the quota ledger (and other bot state). */
  dataDir: string;
  limits: SpendLimits;
  partialImages: number;
  minUpdateIntervalMs: number;
  /** How long a stop (SIGTERM) lets jobs already taken run to their end before it cancels them. */
  shutdownGraceMs: number;
}

/** Covers a high-quality image that was queued behind others; see bots/README.md for the matching container/service setting. */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 300;

/** Unset or blank means "not set" (so defaults and "no limit" apply), never zero. */
const unset = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

const number = (what: string, check: (n: number) => boolean) =>
  z.preprocess(
    unset,
    z
      .string()
      .trim()
      .transform(Number)
      .refine((n) => Number.isFinite(n) && check(n), { error: () => what })
      .optional(),
  );

const VARIABLES = {
  PICTOR_DATA_DIR: z.preprocess(unset, z.string().trim().optional()),
  PICTOR_USER_CONCURRENT_JOBS: number('a whole number of jobs, 1 or more', (n) => Number.isInteger(n) && n >= 1),
  PICTOR_USER_COOLDOWN_SECONDS: number('a number of seconds, 0 or more', (n) => n >= 0),
  PICTOR_PARTIAL_IMAGES: number(
    `a whole number from ${LIMITS.partialImagesMin} to ${LIMITS.partialImagesMax}`,
    (n) => Number.isInteger(n) && n >= LIMITS.partialImagesMin && n <= LIMITS.partialImagesMax,
  ),
  PICTOR_UPDATE_INTERVAL_MS: number('a whole number of milliseconds, 0 or more', (n) => Number.isInteger(n) && n >= 0),
  PICTOR_SHUTDOWN_GRACE_SECONDS: number('a number of seconds, 0 or more', (n) => n >= 0),
};

const RunnerEnvSchema = z.object(VARIABLES);

/**
 * The job runner's settings from the environment, shared by the Discord and
 * Slack bots. Throws a ValidationError naming the variable and what it takes.
 */
export function readRunnerConfig(env: NodeJS.ProcessEnv): RunnerConfig {
  // Every cap (account, user, scope; daily and monthly) through the core's one parser of them.
  const caps = readSpendCaps(env);
  const parsed = RunnerEnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'environment');
    const got = typeof env[variable] === 'string' ? ` (got ${JSON.stringify(env[variable])})` : '';
    throw new ValidationError(variable, `${variable} must be ${issue.message}${got}`);
  }
  const e = parsed.data;
  return {
    dataDir: e.PICTOR_DATA_DIR ?? './.data',
    limits: {
      ...caps,
      userConcurrentJobs: e.PICTOR_USER_CONCURRENT_JOBS ?? 2,
      userCooldownSeconds: e.PICTOR_USER_COOLDOWN_SECONDS ?? 0,
    },
    partialImages: e.PICTOR_PARTIAL_IMAGES ?? 2,
    minUpdateIntervalMs: e.PICTOR_UPDATE_INTERVAL_MS ?? 1500,
    shutdownGraceMs: (e.PICTOR_SHUTDOWN_GRACE_SECONDS ?? DEFAULT_SHUTDOWN_GRACE_SECONDS) * 1000,
  };
}
