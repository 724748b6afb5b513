import { ValidationError } from 'pictor';
import { envChoice, envError, envList, envNumber, envText, type Env } from 'pictor/internal';
import { DEFAULT_FILE_HOSTS, parseFileHost, type FileHost } from './file-hosts.js';

export type SlackMode = 'socket' | 'http';

/** Many workspaces: each installs the app through OAuth and gets its own bot token. HTTP mode only. */
export interface SlackOAuthOptions {
  clientId: string;
  clientSecret: string;
  /** Signs the OAuth `state` (with a browser cookie, so an install cannot be forged or replayed across browsers). */
  stateSecret: string;
}

/** Socket Mode: an app-level token (`xapp-…`, scope connections:write), no public address needed. */
interface SocketMode {
  mode: 'socket';
  appToken: string;
  signingSecret?: string | undefined;
  port?: number | undefined;
  host?: string | undefined;
}

/** HTTP mode: the signing secret (Bolt's receiver refuses forged and stale requests with it), and where to listen. */
interface HttpMode {
  mode: 'http';
  signingSecret: string;
  appToken?: string | undefined;
  /** Default 3000; 0 picks a free port. */
  port?: number | undefined;
  host?: string | undefined;
}

/**
 * How the Slack bot reaches Slack: one workspace with its bot token (`xoxb-…`) over Socket Mode or HTTP, or many
 * workspaces through OAuth installs, over HTTP. Exactly one of them, by type.
 */
export type SlackConnection = ({ botToken: string; oauth?: undefined } & (SocketMode | HttpMode)) | ({ oauth: SlackOAuthOptions; botToken?: undefined } & HttpMode);

/** The Slack bot's settings: what `startSlackBot` takes besides the runner, the state and the logger. */
export type SlackConfig = SlackConnection & {
  apiUrl?: string | undefined;
  allowedFileHosts: FileHost[];
  adminUserIds: string[];
};

export const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';
export const DEFAULT_SLACK_PORT = 3000;

/**
 * The Slack bot's settings from the environment, or `undefined` when neither
 * SLACK_BOT_TOKEN nor SLACK_CLIENT_ID is set (the Slack bot is off).
 * SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET (all three, over
 * HTTP, instead of SLACK_BOT_TOKEN) serve many workspaces through OAuth. Throws a ValidationError
 * naming the variable; secrets are never repeated in a message.
 */
export function readSlackConfig(env: Env): SlackConfig | undefined {
  const botToken = envText(env, 'SLACK_BOT_TOKEN');
  if (botToken !== undefined && !botToken.startsWith('xoxb-')) throw new ValidationError('SLACK_BOT_TOKEN', 'SLACK_BOT_TOKEN must be a bot token (it starts with xoxb-)');
  const appToken = envText(env, 'SLACK_APP_TOKEN');
  if (appToken !== undefined && !appToken.startsWith('xapp-')) {
    throw new ValidationError('SLACK_APP_TOKEN', 'SLACK_APP_TOKEN must be an app-level token (it starts with xapp-) with the connections:write scope');
  }
  const apiUrl = envText(env, 'SLACK_API_URL');
  if (apiUrl !== undefined && !/^https?:\/\/[^/]+/.test(apiUrl)) throw envError(env, 'SLACK_API_URL', 'an http(s) address such as https://slack.com/api/');
  const e = {
    SLACK_BOT_TOKEN: botToken,
    SLACK_APP_TOKEN: appToken,
    SLACK_SIGNING_SECRET: envText(env, 'SLACK_SIGNING_SECRET'),
    SLACK_MODE: envChoice(env, 'SLACK_MODE', ['socket', 'http'] as const) ?? 'socket',
    SLACK_PORT: envNumber(env, 'SLACK_PORT', { int: true, min: 0, max: 65535, takes: 'a port number from 0 to 65535' }),
    SLACK_HOST: envText(env, 'SLACK_HOST'),
    SLACK_API_URL: apiUrl,
    SLACK_ALLOWED_FILE_HOSTS: envList(env, 'SLACK_ALLOWED_FILE_HOSTS'),
    SLACK_ADMIN_USER_IDS: envList(env, 'SLACK_ADMIN_USER_IDS'),
  };
  const oauth = readOAuth(env, e);
  if (!e.SLACK_BOT_TOKEN && !oauth) {
    // Half a set-up is a mistake, not "Slack is off": name what is missing.
    const given = (['SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET'] as const).find((name) => e[name] !== undefined);
    if (given) {
      throw new ValidationError('SLACK_BOT_TOKEN', `${given} is set but SLACK_BOT_TOKEN is not: set the bot token (xoxb-…, OAuth & Permissions → Bot User OAuth Token), or unset ${given} to run without Slack`);
    }
    return undefined;
  }
  if (e.SLACK_MODE === 'socket' && !e.SLACK_APP_TOKEN) {
    throw new ValidationError(
      'SLACK_APP_TOKEN',
      'SLACK_APP_TOKEN is needed in Socket Mode (the default): create an app-level token with the connections:write scope, or set SLACK_MODE=http',
    );
  }
  if (e.SLACK_MODE === 'http' && !e.SLACK_SIGNING_SECRET) {
    throw new ValidationError('SLACK_SIGNING_SECRET', 'SLACK_SIGNING_SECRET is needed when SLACK_MODE=http (Basic Information → Signing Secret)');
  }
  const allowedFileHosts = (e.SLACK_ALLOWED_FILE_HOSTS ?? [...DEFAULT_FILE_HOSTS]).map((host) => {
    try {
      return parseFileHost(host);
    } catch (error) {
      throw new ValidationError('SLACK_ALLOWED_FILE_HOSTS', `SLACK_ALLOWED_FILE_HOSTS: ${(error as Error).message}`);
    }
  });
  const common = { apiUrl: e.SLACK_API_URL ?? DEFAULT_SLACK_API_URL, allowedFileHosts, adminUserIds: e.SLACK_ADMIN_USER_IDS ?? [] };
  const http = { mode: 'http' as const, signingSecret: e.SLACK_SIGNING_SECRET!, appToken: e.SLACK_APP_TOKEN, port: e.SLACK_PORT ?? DEFAULT_SLACK_PORT, host: e.SLACK_HOST };
  if (oauth) return { ...common, ...http, oauth };
  const token = e.SLACK_BOT_TOKEN!;
  return e.SLACK_MODE === 'http' ? { ...common, ...http, botToken: token } : { ...common, botToken: token, mode: 'socket', appToken: e.SLACK_APP_TOKEN!, signingSecret: e.SLACK_SIGNING_SECRET };
}

/** The OAuth settings, all three or none; with them, no single bot token and HTTP mode (the install pages are served with the events). */
function readOAuth(env: Env, e: { SLACK_BOT_TOKEN: string | undefined; SLACK_MODE: SlackMode }): SlackOAuthOptions | undefined {
  const values = {
    SLACK_CLIENT_ID: envText(env, 'SLACK_CLIENT_ID'),
    SLACK_CLIENT_SECRET: envText(env, 'SLACK_CLIENT_SECRET'),
    SLACK_STATE_SECRET: envText(env, 'SLACK_STATE_SECRET'),
  };
  const names = Object.keys(values) as (keyof typeof values)[];
  const given = names.filter((name) => values[name] !== undefined);
  if (given.length === 0) return undefined;
  const missing = names.find((name) => values[name] === undefined);
  if (missing) throw new ValidationError(missing, `${given.join(' and ')} ${given.length > 1 ? 'are' : 'is'} set but ${missing} is not: OAuth installs need SLACK_CLIENT_ID, SLACK_CLIENT_SECRET (Basic Information → App Credentials) and SLACK_STATE_SECRET (a long random string of yours)`);
  if (e.SLACK_BOT_TOKEN) {
    throw new ValidationError('SLACK_BOT_TOKEN', 'SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set: use the bot token for one workspace, or OAuth (SLACK_CLIENT_ID …) for many, not both');
  }
  if (e.SLACK_MODE !== 'http') {
    throw new ValidationError('SLACK_MODE', 'OAuth installs (SLACK_CLIENT_ID) need SLACK_MODE=http: Slack redirects the browser to this server after an install');
  }
  if (values.SLACK_STATE_SECRET!.length < 16) throw new ValidationError('SLACK_STATE_SECRET', 'SLACK_STATE_SECRET must be at least 16 characters (a long random string, e.g. openssl rand -hex 32)');
  return { clientId: values.SLACK_CLIENT_ID!, clientSecret: values.SLACK_CLIENT_SECRET!, stateSecret: values.SLACK_STATE_SECRET! };
}
