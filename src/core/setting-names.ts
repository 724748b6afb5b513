import { closestWord } from './closest-word.js';

/**
 * Every `PICTOR_` variable a program of this project reads (`npm start`, the CLI, `npm run discord:deploy`); a test
 * checks it against the names the sources read, so a setting added there is added here.
 */
export const PICTOR_SETTINGS = [
  'PICTOR_ACCOUNT_DAILY_USD',
  'PICTOR_ACCOUNT_MONTHLY_USD',
  'PICTOR_ALERT_BREAKER',
  'PICTOR_ALERT_CHECK_SECONDS',
  'PICTOR_ALERT_DISCORD_CHANNEL',
  'PICTOR_ALERT_SLACK_CHANNEL',
  'PICTOR_ALERT_THRESHOLDS',
  'PICTOR_ALERT_WEBHOOK_SECRET',
  'PICTOR_ALERT_WEBHOOK_URL',
  'PICTOR_ALLOWED_QUALITIES',
  'PICTOR_ALLOWED_SCOPES',
  'PICTOR_ALLOWED_SIZES',
  'PICTOR_ALLOW_LOW_MODERATION',
  'PICTOR_API_KEY',
  'PICTOR_BASE_URL',
  'PICTOR_BLOCKED_WORDS',
  'PICTOR_BREAKER_FACTOR',
  'PICTOR_BREAKER_FLOOR_USD',
  'PICTOR_CONSOLE_ALLOW_CHANGES',
  'PICTOR_CONSOLE_HOST',
  'PICTOR_CONSOLE_ORIGIN',
  'PICTOR_CONSOLE_PORT',
  'PICTOR_CONSOLE_TOKEN',
  'PICTOR_CONTAINER',
  'PICTOR_DATA_DIR',
  'PICTOR_DM_DAILY_USD',
  'PICTOR_DM_MONTHLY_USD',
  'PICTOR_EMULATOR_LATENCY_MS',
  'PICTOR_EMULATOR_PORT',
  'PICTOR_HISTORY_RETENTION_DAYS',
  'PICTOR_IMAGES_PER_MINUTE',
  'PICTOR_KEPT_IMAGES_MB',
  'PICTOR_LIGHT_PREVIEWS',
  'PICTOR_LOG_FORMAT',
  'PICTOR_LOG_LEVEL',
  'PICTOR_MAX_CONCURRENT',
  'PICTOR_MAX_IMAGES_PER_JOB',
  'PICTOR_MAX_QUEUED_INPUT_MB',
  'PICTOR_MAX_QUEUED_JOBS',
  'PICTOR_MAX_RETRIES',
  'PICTOR_METRICS_HOST',
  'PICTOR_METRICS_PORT',
  'PICTOR_PARTIAL_IMAGES',
  'PICTOR_REDIS_PREFIX',
  'PICTOR_REPLICA_LEASE_SECONDS',
  'PICTOR_SCOPE_DAILY_USD',
  'PICTOR_SCOPE_MONTHLY_USD',
  'PICTOR_SHUTDOWN_GRACE_SECONDS',
  'PICTOR_TIMEOUT_SECONDS',
  'PICTOR_UPDATE_INTERVAL_MS',
  'PICTOR_USAGE_PROMPTS',
  'PICTOR_USAGE_RETENTION_DAYS',
  'PICTOR_USER_CONCURRENT_JOBS',
  'PICTOR_USER_COOLDOWN_SECONDS',
  'PICTOR_USER_DAILY_USD',
  'PICTOR_USER_MONTHLY_USD',
] as const;

/** `PICTOR_` variables read only by the tests, benches and scripts of a checkout: set there, they are not a slip. */
export const PICTOR_DEVELOPMENT_SETTINGS = [
  'PICTOR_BENCH_CONSOLE',
  'PICTOR_BENCH_FAKE_IN_PROCESS',
  'PICTOR_BENCH_PODMAN',
  'PICTOR_BENCH_REDIS_URL',
  'PICTOR_CONSOLE_SCREENSHOTS',
  'PICTOR_E2E_N8N_LOG_LEVEL',
  'PICTOR_N8N_DIR',
  'PICTOR_TEST_IMAGE',
  'PICTOR_TEST_NODE_IMAGE',
  'PICTOR_TEST_PODMAN',
  'PICTOR_TEST_REDIS_URL',
] as const;

const KNOWN: readonly string[] = [...PICTOR_SETTINGS, ...PICTOR_DEVELOPMENT_SETTINGS];

/**
 * One line for each `PICTOR_` variable set in `env` that no program reads (a misspelt setting is otherwise ignored
 * without a word), naming the closest known name when one is close.
 */
export function unknownSettingWarnings(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.keys(env)
    .filter((name) => name.startsWith('PICTOR_') && !KNOWN.includes(name))
    .sort()
    .map((name) => {
      const near = closestWord(name, PICTOR_SETTINGS.map((known) => known.toLowerCase()))?.toUpperCase();
      return `${name} is not a Pictor setting and is ignored${near ? `; did you mean ${near}?` : ''}`;
    });
}
