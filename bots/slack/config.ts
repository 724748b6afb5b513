import { z } from 'zod';
import { ValidationError } from '../../src/index.js';
import { DEFAULT_FILE_HOSTS, parseFileHost } from './file-hosts.js';

export type SlackMode = 'socket' | 'http';

/** The Slack bot's settings: what `startSlackBot` takes besides the runner, data folder and logger. */
export interface SlackConfig {
  botToken: string;
  appToken?: string | undefined;
  signingSecret?: string | undefined;
  mode: SlackMode;
  port?: number | undefined;
  host?: string | undefined;
  apiUrl?: string | undefined;
  allowedFileHosts: string[];
  adminUserIds: string[];
}

export const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';
export const DEFAULT_SLACK_PORT = 3000;

/** Unset or blank means "not set". */
const unset = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);
const optionalText = z.preprocess(unset, z.string().trim().optional());
const list = z.preprocess(
  unset,
  z
    .string()
    .optional()
    .transform((s) => (s === undefined ? undefined : s.split(/[\s,]+/).filter(Boolean))),
);

const SlackEnvSchema = z.object({
  SLACK_BOT_TOKEN: optionalText.refine((t) => t === undefined || t.startsWith('xoxb-'), {
    error: () => 'SLACK_BOT_TOKEN must be a bot token (it starts with xoxb-)',
  }),
  SLACK_APP_TOKEN: optionalText.refine((t) => t === undefined || t.startsWith('xapp-'), {
    error: () => 'SLACK_APP_TOKEN must be an app-level token (it starts with xapp-) with the connections:write scope',
  }),
  SLACK_SIGNING_SECRET: optionalText,
  SLACK_MODE: z.preprocess(
    (v) => (typeof unset(v) === 'string' ? String(v).trim().toLowerCase() : undefined),
    z.enum(['socket', 'http'], { error: () => 'SLACK_MODE must be socket or http' }).default('socket'),
  ),
  SLACK_PORT: z.preprocess(
    unset,
    z
      .string()
      .trim()
      .transform(Number)
      .refine((n) => Number.isInteger(n) && n >= 0 && n <= 65535, { error: () => 'SLACK_PORT must be a port number from 0 to 65535' })
      .optional(),
  ),
  SLACK_HOST: optionalText,
  SLACK_API_URL: optionalText.refine((u) => u === undefined || /^https?:\/\/[^/]+/.test(u), {
    error: () => 'SLACK_API_URL must be an http(s) address such as https://slack.com/api/',
  }),
  SLACK_ALLOWED_FILE_HOSTS: list,
  SLACK_ADMIN_USER_IDS: list,
});

/**
 * The Slack bot's settings from the environment, or `undefined` when
 * SLACK_BOT_TOKEN is not set (the Slack bot is off). Throws a ValidationError
 * naming the variable; secrets are never repeated in a message.
 */
export function readSlackConfig(env: NodeJS.ProcessEnv): SlackConfig | undefined {
  const parsed = SlackEnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ValidationError(String(issue.path[0] ?? 'environment'), issue.message);
  }
  const e = parsed.data;
  if (!e.SLACK_BOT_TOKEN) return undefined;
  if (e.SLACK_MODE === 'socket' && !e.SLACK_APP_TOKEN) {
    throw new ValidationError(
      'SLACK_APP_TOKEN',
      'SLACK_APP_TOKEN is needed in Socket Mode (the default): create an app-level token with the connections:write scope, or set SLACK_MODE=http',
    );
  }
  if (e.SLACK_MODE === 'http' && !e.SLACK_SIGNING_SECRET) {
    throw new ValidationError('SLACK_SIGNING_SECRET', 'SLACK_SIGNING_SECRET is needed when SLACK_MODE=http (Basic Information → Signing Secret)');
  }
  const allowedFileHosts = e.SLACK_ALLOWED_FILE_HOSTS ?? [...DEFAULT_FILE_HOSTS];
  for (const host of allowedFileHosts) {
    try {
      parseFileHost(host);
    } catch (error) {
      throw new ValidationError('SLACK_ALLOWED_FILE_HOSTS', `SLACK_ALLOWED_FILE_HOSTS: ${(error as Error).message}`);
    }
  }
  return {
    botToken: e.SLACK_BOT_TOKEN,
    appToken: e.SLACK_APP_TOKEN,
    signingSecret: e.SLACK_SIGNING_SECRET,
    mode: e.SLACK_MODE,
    port: e.SLACK_PORT ?? (e.SLACK_MODE === 'http' ? DEFAULT_SLACK_PORT : undefined),
    host: e.SLACK_HOST,
    apiUrl: e.SLACK_API_URL ?? DEFAULT_SLACK_API_URL,
    allowedFileHosts,
    adminUserIds: e.SLACK_ADMIN_USER_IDS ?? [],
  };
}
