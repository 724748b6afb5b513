import { envBoolean, envError, envList, envNumber, envText, envUrl, type Env } from '../../core/env.js';
import { ValidationError } from '../../core/errors.js';

/** Where alerts go and when (`PICTOR_ALERT_*`), read once at an entry point. */
export interface AlertConfig {
  /** `PICTOR_ALERT_THRESHOLDS`: percentages of a cap that send an alert. Default 50, 80, 100. */
  thresholds: number[];
  /** `PICTOR_ALERT_BREAKER`: an alert when the breaker pauses a server. Default on. */
  breaker: boolean;
  /** `PICTOR_ALERT_CHECK_SECONDS`: how often the caps are looked at. Default 60. */
  checkMs: number;
  discord: { channelId: string; token: string; apiBaseUrl: string } | undefined;
  /** `teamId` only for a channel of a workspace installed through OAuth (`T123/C456`): its token comes from the installation. */
  slack: { channel: string; teamId: string | undefined; token: string | undefined; apiUrl: string } | undefined;
  webhook: { url: string; secret: string } | undefined;
}

export const DEFAULT_ALERT_THRESHOLDS = [50, 80, 100];
const DEFAULT_DISCORD_API = 'https://discord.com/api';
const DEFAULT_SLACK_API = 'https://slack.com/api/';
const SNOWFLAKE = /^\d{17,20}$/;
const SLACK_CHANNEL = /^(?:(T[A-Z0-9]{2,})\/)?([CGD][A-Z0-9]{2,})$/;

/** Percentages of a cap, each from 1 to 1000, sorted, without repeats. */
export function parseThresholds(text: string): number[] | undefined {
  const items = text
    .split(/[\s,%]+/)
    .map((t) => t.trim())
    .filter(Boolean);
  const values = items.map(Number);
  if (items.length === 0 || items.length > 10 || !values.every((v) => Number.isInteger(v) && v >= 1 && v <= 1000)) return undefined;
  return [...new Set(values)].sort((a, b) => a - b);
}

export function readAlertConfig(env: Env): AlertConfig {
  const thresholdsText = envList(env, 'PICTOR_ALERT_THRESHOLDS')?.join(',');
  const thresholds = thresholdsText === undefined ? DEFAULT_ALERT_THRESHOLDS : parseThresholds(thresholdsText);
  if (!thresholds) throw envError(env, 'PICTOR_ALERT_THRESHOLDS', 'whole percentages of a cap from 1 to 1000, separated by commas (at most 10), e.g. 50,80,100');
  const checkSeconds = envNumber(env, 'PICTOR_ALERT_CHECK_SECONDS', { int: true, min: 5, max: 3600, takes: 'a whole number of seconds from 5 to 3600' }) ?? 60;

  const discordChannel = envText(env, 'PICTOR_ALERT_DISCORD_CHANNEL');
  let discord: AlertConfig['discord'];
  if (discordChannel !== undefined) {
    if (!SNOWFLAKE.test(discordChannel)) throw envError(env, 'PICTOR_ALERT_DISCORD_CHANNEL', 'a Discord channel id (17 to 20 digits; right-click the channel → Copy Channel ID)');
    const token = envText(env, 'DISCORD_TOKEN');
    if (token === undefined) throw new ValidationError('DISCORD_TOKEN', 'PICTOR_ALERT_DISCORD_CHANNEL is set but DISCORD_TOKEN is not: alerts are posted by the bot, with its token');
    const base = envUrl(env, 'DISCORD_API_BASE_URL', { example: 'https://discord.com/api' }) ?? DEFAULT_DISCORD_API;
    discord = { channelId: discordChannel, token, apiBaseUrl: base.replace(/\/+$/, '').replace(/\/v\d+$/, '') };
  }

  const slackChannel = envText(env, 'PICTOR_ALERT_SLACK_CHANNEL');
  let slack: AlertConfig['slack'];
  if (slackChannel !== undefined) {
    const match = SLACK_CHANNEL.exec(slackChannel);
    if (!match) throw envError(env, 'PICTOR_ALERT_SLACK_CHANNEL', 'a Slack channel id (C0123ABCD), or team/channel (T0123/C0456) for a workspace installed through OAuth');
    const token = envText(env, 'SLACK_BOT_TOKEN');
    const teamId = match[1];
    if (token === undefined && teamId === undefined) {
      throw new ValidationError('SLACK_BOT_TOKEN', 'PICTOR_ALERT_SLACK_CHANNEL is set but SLACK_BOT_TOKEN is not: give the bot token, or the channel as team/channel (T0123/C0456) of a workspace installed through OAuth');
    }
    const apiUrl = envText(env, 'SLACK_API_URL') ?? DEFAULT_SLACK_API;
    slack = { channel: match[2]!, teamId, token: teamId === undefined ? token : undefined, apiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/` };
  }

  const webhookUrl = envUrl(env, 'PICTOR_ALERT_WEBHOOK_URL', { example: 'https://hooks.example.com/pictor', secret: true });
  if (webhookUrl !== undefined) {
    // fetch refuses a URL with credentials in it: every alert would fail. The receiver checks the signature instead.
    const url = new URL(webhookUrl);
    if (url.username !== '' || url.password !== '') {
      throw envError(env, 'PICTOR_ALERT_WEBHOOK_URL', 'a URL without user:password@ (alerts cannot be sent to one; the receiver tells them from others by their signature, PICTOR_ALERT_WEBHOOK_SECRET)', { secret: true });
    }
  }
  const webhookSecret = envText(env, 'PICTOR_ALERT_WEBHOOK_SECRET');
  if (webhookUrl !== undefined && (webhookSecret === undefined || webhookSecret.length < 16)) {
    throw new ValidationError('PICTOR_ALERT_WEBHOOK_SECRET', 'PICTOR_ALERT_WEBHOOK_SECRET must be set with PICTOR_ALERT_WEBHOOK_URL (16 characters or more): every alert is signed with it, so the receiver can tell it came from you');
  }
  if (webhookUrl === undefined && webhookSecret !== undefined) throw new ValidationError('PICTOR_ALERT_WEBHOOK_URL', 'PICTOR_ALERT_WEBHOOK_SECRET is set but PICTOR_ALERT_WEBHOOK_URL is not: set where to send the alerts');

  return {
    thresholds,
    breaker: envBoolean(env, 'PICTOR_ALERT_BREAKER', '1 (an alert when the breaker pauses a server) or 0') ?? true,
    checkMs: checkSeconds * 1000,
    discord,
    slack,
    webhook: webhookUrl === undefined ? undefined : { url: webhookUrl, secret: webhookSecret! },
  };
}

/** Whether any destination is set (otherwise there is nothing to send alerts to). */
export function hasDestination(config: AlertConfig): boolean {
  return config.discord !== undefined || config.slack !== undefined || config.webhook !== undefined;
}
