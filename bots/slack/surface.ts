import type { Redis } from 'ioredis';
import { closeRedis, connectRedis, type LoggerLike, type RedisConfig } from '../../src/index.js';
import type { Surface } from '../surface.js';
import { readSlackConfig, type SlackConfig } from './config.js';
import { RedisInstallationRecords } from './installation-store.js';
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
    // With OAuth, the installations (each workspace's bot token) live beside the other shared state: Redis when set, else the data folder.
    const installationsRedis = config.oauth && ctx.redis ? await connectRedis(ctx.redis.url, { logger: ctx.logger, name: 'pictor-slack-installations' }) : undefined;
    // With Redis, the replicas share each workspace's budget of message updates and each channel's pace.
    let writesRedis: Redis | undefined;
    let bot;
    try {
      writesRedis = ctx.redis ? await connectRedis(ctx.redis.url, { logger: ctx.logger, name: 'pictor-slack-writes' }) : undefined;
      bot = await startSlackBot({
        ...config,
        oauth: config.oauth && {
          ...config.oauth,
          installations: installationsRedis && ctx.redis && new RedisInstallationRecords({ redis: installationsRedis, prefix: ctx.redis.prefix }),
        },
        runner: ctx.runner,
        dataDir: ctx.dataDir,
        state: ctx.state,
        seenRequests: ctx.seenRequests,
        logger: ctx.logger,
        onWriteRefused: ctx.onWriteRefused,
        sharedWrites: writesRedis && ctx.redis && { redis: writesRedis, prefix: ctx.redis.prefix },
      });
    } catch (error) {
      if (writesRedis) await closeRedis(writesRedis);
      if (installationsRedis) await closeRedis(installationsRedis);
      throw error;
    }
    ctx.print(`Slack bot is online (${config.mode === 'http' ? `HTTP, events at ${bot.url}` : 'Socket Mode'}).`);
    if (bot.installUrl) ctx.print(`Install it in a workspace: ${bot.installUrl} (through your public address).`);
    const running = bot;
    // Socket Mode with Redis: the replicas of this bot that hold a connection, so a draining one lets go only when
    // another can take the new events (a lone process keeps its connection and says it is restarting).
    const presence = config.mode !== 'http' && ctx.redis && running.teamId && running.botUserId ? await joinSocketReplicas(ctx.redis, `${running.teamId}:${running.botUserId}`, ctx.logger) : undefined;
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
      stop: async () => {
        stopped = true;
        clearTimeout(waiting);
        await presence?.replicas.leave();
        await running.stop();
        if (presence) await closeRedis(presence.redis);
        if (writesRedis) await closeRedis(writesRedis);
        if (installationsRedis) await closeRedis(installationsRedis);
      },
    };
  },
};

async function joinSocketReplicas(config: RedisConfig, bot: string, logger: LoggerLike): Promise<{ redis: Awaited<ReturnType<typeof connectRedis>>; replicas: SocketReplicas }> {
  const redis = await connectRedis(config.url, { logger, name: 'pictor-slack-socket-replicas' });
  const replicas = new SocketReplicas({ redis, key: `${config.prefix}:slack:socket-replicas:${bot}` });
  try {
    await replicas.join();
  } catch (error) {
    await closeRedis(redis);
    throw error;
  }
  return { redis, replicas };
}
