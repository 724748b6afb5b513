import { z } from 'zod';
import { ValidationError } from './core/errors.js';
import { readRedisConfig, type RedisConfig } from './core/redis-config.js';
import { readSpendConfig, type SpendConfig } from './spend/caps.js';

/**
 * The core's settings, read once from the environment at an entry point (CLI,
 * `npm start`) and validated. Library code never reads `process.env`.
 */

const optionalNumber = (name: string, opts: { int?: boolean; min?: number; max?: number } = {}) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined || raw.trim() === '') return undefined;
      const value = Number(raw);
      const bad =
        !Number.isFinite(value) ||
        (opts.int && !Number.isInteger(value)) ||
        (opts.min !== undefined && value < opts.min) ||
        (opts.max !== undefined && value > opts.max);
      if (bad) {
        const range = [opts.min !== undefined ? `≥ ${opts.min}` : '', opts.max !== undefined ? `≤ ${opts.max}` : ''].filter(Boolean).join(' and ');
        ctx.addIssue({ code: 'custom', message: `${name} must be ${opts.int ? 'an integer' : 'a number'}${range ? ` ${range}` : ''}, not ${JSON.stringify(raw)}` });
        return z.NEVER;
      }
      return value;
    });

/** Longest timeout a Node timer can hold, in whole seconds (2^31 − 1 ms ≈ 24.8 days). */
export const MAX_TIMEOUT_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

const CoreEnvSchema = z.object({
  PICTOR_BASE_URL: z
    .string()
    .optional()
    .transform((v) => (v?.trim() ? v.trim() : undefined)),
  PICTOR_API_KEY: z
    .string()
    .optional()
    .transform((v) => (v?.trim() ? v.trim() : undefined))
    .refine((v) => v === undefined || /^[\x21-\x7e]+$/.test(v), {
      // The value itself is never quoted: it is a secret.
      message: 'PICTOR_API_KEY contains characters an HTTP header cannot carry (spaces, line breaks or non-ASCII); check for a stray line break',
    }),
  PICTOR_LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: () => 'PICTOR_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  PICTOR_IMAGES_PER_MINUTE: optionalNumber('PICTOR_IMAGES_PER_MINUTE', { min: 1 }),
  PICTOR_MAX_CONCURRENT: optionalNumber('PICTOR_MAX_CONCURRENT', { int: true, min: 1, max: 100 }),
  // A Node timer holds at most 2^31 − 1 ms; a longer one fires at once (an instant false timeout).
  PICTOR_TIMEOUT_SECONDS: optionalNumber('PICTOR_TIMEOUT_SECONDS', { min: 1, max: MAX_TIMEOUT_SECONDS }),
  PICTOR_MAX_RETRIES: optionalNumber('PICTOR_MAX_RETRIES', { int: true, min: 0, max: 10 }),
  PICTOR_EMULATOR_PORT: optionalNumber('PICTOR_EMULATOR_PORT', { int: true, min: 0, max: 65535 }),
  PICTOR_EMULATOR_LATENCY_MS: optionalNumber('PICTOR_EMULATOR_LATENCY_MS', { int: true, min: 0, max: 600_000 }),
  PICTOR_METRICS_PORT: optionalNumber('PICTOR_METRICS_PORT', { int: true, min: 0, max: 65535 }),
  PICTOR_METRICS_HOST: z
    .string()
    .optional()
    .transform((v) => (v?.trim() ? v.trim() : undefined))
    .refine((v) => v === undefined || /^[\w.:-]+$/.test(v), {
      message: 'PICTOR_METRICS_HOST must be a host name or an IP address to listen on, e.g. 127.0.0.1 or 0.0.0.0',
    }),
});

export interface CoreConfig {
  /** Upstream service; undefined means "run against the embedded emulator". */
  baseURL: string | undefined;
  apiKey: string | undefined;
  logLevel: string;
  imagesPerMinute: number | undefined;
  maxConcurrent: number;
  timeoutMs: number | undefined;
  maxRetries: number | undefined;
  /** Port of the embedded emulator when it is started (0 = a free port). */
  emulatorPort: number;
  /** Base time per image of the embedded emulator (a medium 1024x1024 image; 0 = instant); undefined = the entry point's default. */
  emulatorLatencyMs: number | undefined;
  /** Shared limits through Redis (`REDIS_URL`, `PICTOR_REDIS_PREFIX`); undefined = this process only. */
  redis: RedisConfig | undefined;
  /** Spending caps (`PICTOR_*_USD`) and the file ledger's folder. */
  spend: SpendConfig;
  /** `PICTOR_METRICS_PORT` (and `PICTOR_METRICS_HOST`, default 127.0.0.1): where `npm start` serves /metrics and /healthz; undefined = off. */
  metrics: { port: number; host: string } | undefined;
}

/** Parses a zod schema of environment variables; a bad value is a ValidationError naming the variable (as every surface's config reports it). */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'environment');
    const message = issue.message.startsWith(variable) ? issue.message : `${variable}: ${issue.message}`;
    throw new ValidationError(variable, message);
  }
  return result.data;
}

export function readCoreConfig(env: NodeJS.ProcessEnv): CoreConfig {
  const e = parseEnv(CoreEnvSchema, env);
  if (e.PICTOR_BASE_URL && !e.PICTOR_API_KEY) {
    throw new ValidationError('PICTOR_API_KEY', 'PICTOR_BASE_URL is set but PICTOR_API_KEY is not: set the key the service gave you');
  }
  if (e.PICTOR_BASE_URL) {
    try {
      const url = new URL(e.PICTOR_BASE_URL);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    } catch {
      throw new ValidationError('PICTOR_BASE_URL', 'PICTOR_BASE_URL must be an http(s) URL, e.g. https://images.example.com');
    }
  }
  if (e.PICTOR_METRICS_HOST !== undefined && e.PICTOR_METRICS_PORT === undefined) {
    throw new ValidationError('PICTOR_METRICS_PORT', 'PICTOR_METRICS_HOST is set but PICTOR_METRICS_PORT is not: set the port to serve /metrics and /healthz on');
  }
  return {
    baseURL: e.PICTOR_BASE_URL,
    apiKey: e.PICTOR_API_KEY,
    logLevel: e.PICTOR_LOG_LEVEL,
    imagesPerMinute: e.PICTOR_IMAGES_PER_MINUTE,
    maxConcurrent: e.PICTOR_MAX_CONCURRENT ?? 4,
    timeoutMs: e.PICTOR_TIMEOUT_SECONDS !== undefined ? e.PICTOR_TIMEOUT_SECONDS * 1000 : undefined,
    maxRetries: e.PICTOR_MAX_RETRIES,
    emulatorPort: e.PICTOR_EMULATOR_PORT ?? 0,
    emulatorLatencyMs: e.PICTOR_EMULATOR_LATENCY_MS,
    redis: readRedisConfig(env),
    spend: readSpendConfig(env),
    metrics: e.PICTOR_METRICS_PORT === undefined ? undefined : { port: e.PICTOR_METRICS_PORT, host: e.PICTOR_METRICS_HOST ?? '127.0.0.1' },
  };
}

/** Loads `.env` from the working directory into `env` if there is one (variables already set win). */
export function loadDotEnv(path = '.env'): void {
  try {
    process.loadEnvFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
