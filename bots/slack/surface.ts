import type { LoggerLike } from 'pictor';
import type { RedisLink } from 'pictor/internal';
import type { Surface } from '../surface.js';
import { readSlackConfig, type SlackConfig } from './config.js';
import { SocketReplicas } from './socket-replicas.js';
import { startSlackBot } from './start-slack-bot.js';

/** How often a draining process that is the only one connected looks again for a replica to hand its events to. */
const HAND_OVER_POLL_MS = 2_000;

/** The Slack surface for `npm start`. */
export const slackSurface: Surface<SlackConfig> = {
  id: 'slack',
  hint: () => 'Slack:   SLACK_BOT_TOKEN with SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET and SLACK_MODE=http; many workspaces: SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_STATE_SECRET',
  readConfig: readSlackConfig,
  secrets: (config) => [config.botToken, config.appToken, config.signingSecret, config.oauth?.clientSecret, config.oauth?.stateSecret],
  async start(config, ctx) {
    // With Redis, the replicas share each workspace's budget of message updates and each channel's pace.
    const link = ctx.state.redis;
    const bot = await startSlackBot({
      ...config,
      runner: ctx.runner,
      ledger: ctx.ledger,
      state: ctx.state,
      logger: ctx.logger,
      onWriteRefused: ctx.onWriteRefused,
      sharedWrites: link && { redis: link.commands, prefix: link.config.prefix },
    });
    ctx.print(`Slack bot is online (${config.mode === 'http' ? `HTTP, events at ${bot.url}` : 'Socket Mode'}).`);
    if (bot.installUrl) ctx.print(`Install it in a workspace: ${bot.installUrl} (through your public address).`);
    const running = bot;
    // Socket Mode with Redis: the replicas of this bot that hold a connection, so a draining one lets go only when
    // another can take the new events (a lone process keeps its connection and says it is restarting).
    let presence: { replicas: SocketReplicas } | undefined;
    try {
      presence = config.mode !== 'http' && link && running.teamId && running.botUserId ? await joinSocketReplicas(link, `${running.teamId}:${running.botUserId}`, ctx.logger) : undefined;
    } catch (error) {
      // Not started: its connection would otherwise take a share of the events after the state it needs is closed.
      await running.stop().catch((stopError: unknown) => ctx.logger.warn({ err: stopError }, 'could not stop the Slack bot whose start failed'));
      throw error;
    }
    let stopped = false;
    let waiting: NodeJS.Timeout | undefined;
    const handOverWhenAnotherIsConnected = async (): Promise<void> => {
      if (stopped || !presence) return;
      if (!(await presence.replicas.othersConnected())) {
        // Checked again while the drain lasts: a replica that connects later (a rolling deploy's new one) takes over then.
        waiting = setTimeout(() => void handOverWhenAnotherIsConnected(), HAND_OVER_POLL_MS);
        return;
      }
      await presence.replicas.leave();
      await running.handOver();
    };
    return {
      health: () => running.connected(),
      // Socket Mode: the other replicas' connections take the new events. HTTP: /healthz turns the traffic away.
      ...(presence ? { handOver: handOverWhenAnotherIsConnected } : {}),
      stop: async (options) => {
        stopped = true;
        clearTimeout(waiting);
        await presence?.replicas.leave();
        await running.stop(options);
      },
    };
  },
};

async function joinSocketReplicas(link: RedisLink, bot: string, logger: LoggerLike): Promise<{ replicas: SocketReplicas }> {
  const replicas = new SocketReplicas({ redis: link.commands, key: `${link.config.prefix}:slack:socket-replicas:${bot}`, logger });
  await replicas.join();
  return { replicas };
}
