import { closeRedis, connectRedis } from '../../src/index.js';
import type { Surface } from '../surface.js';
import { readSlackConfig, type SlackConfig } from './config.js';
import { RedisInstallationRecords } from './installation-store.js';
import { startSlackBot } from './start-slack-bot.js';

/** The Slack surface for `npm start`. */
export const slackSurface: Surface<SlackConfig> = {
  id: 'slack',
  hint: 'Slack:   SLACK_BOT_TOKEN with SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET and SLACK_MODE=http; many workspaces: SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_STATE_SECRET',
  readConfig: readSlackConfig,
  secrets: (config) => [config.botToken, config.appToken, config.signingSecret, config.oauth?.clientSecret, config.oauth?.stateSecret],
  async start(config, ctx) {
    // With OAuth, the installations (each workspace's bot token) live beside the other shared state: Redis when set, else the data folder.
    const installationsRedis = config.oauth && ctx.redis ? await connectRedis(ctx.redis.url, { logger: ctx.logger, name: 'pictor-slack-installations' }) : undefined;
    let bot;
    try {
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
      });
    } catch (error) {
      if (installationsRedis) await closeRedis(installationsRedis);
      throw error;
    }
    ctx.print(`Slack bot is online (${config.mode === 'http' ? `HTTP, events at ${bot.url}` : 'Socket Mode'}).`);
    if (bot.installUrl) ctx.print(`Install it in a workspace: ${bot.installUrl} (through your public address).`);
    const running = bot;
    return {
      health: () => running.connected(),
      // Socket Mode: the other replicas' connections take the new events. HTTP: /healthz turns the traffic away.
      ...(config.mode === 'http' ? {} : { handOver: () => running.handOver() }),
      stop: async () => {
        await running.stop();
        if (installationsRedis) await closeRedis(installationsRedis);
      },
    };
  },
};
