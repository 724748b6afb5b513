import type { webApi } from '@slack/bolt';
import type { LoggerLike } from '../../src/index.js';
import type { ChannelWriter } from './ChannelWriter.js';
import type { FileHost } from './file-hosts.js';
import type { RequestStore } from './RequestStore.js';
import type { SlackJobRunner, SlackJobs } from './SlackJobs.js';
import type { Notifier } from './SlackJobView.js';

/** What every listener gets: the pieces of one running Slack bot. */
export interface BotContext {
  jobs: SlackJobs;
  runner: SlackJobRunner;
  store: RequestStore;
  writer: ChannelWriter;
  client: webApi.WebClient;
  /** The bot's own user id (from auth.test at start), to spot mentions. */
  botUserId: string;
  /** For downloads from Slack's file hosts only. */
  botToken: string;
  allowedHosts: readonly FileHost[];
  logger: LoggerLike;
  commands: { imagine: string; edit: string };
}

/** Message shortcut and modal ids, as in the app manifest. */
export const SHORTCUT_EDIT_IMAGE = 'pictor_edit_image';

/** A private note through a `response_url` (from a command, shortcut or button; valid 30 minutes, 5 uses). */
export function respondVia(responseUrl: string, logger: LoggerLike): Notifier {
  return async (text) => {
    const response = await fetch(responseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text }),
      signal: AbortSignal.timeout(15_000),
    });
    await response.arrayBuffer();
    if (!response.ok) logger.warn({ status: response.status }, 'a response_url refused a private note');
  };
}

/** A private note in a channel (or thread) through chat.postEphemeral, paced with the channel's other writes. */
export function ephemeralVia(context: Pick<BotContext, 'client' | 'writer'>, where: { channelId: string; userId: string; threadTs?: string | undefined }): Notifier {
  return async (text) => {
    await context.writer.write(where.channelId, {
      urgent: true,
      run: () =>
        context.client.chat.postEphemeral({
          channel: where.channelId,
          user: where.userId,
          text,
          ...(where.threadTs ? { thread_ts: where.threadTs } : {}),
        }),
    });
  };
}
