import type { Surface } from '../surface.js';
import { readSlackConfig, type SlackConfig } from './config.js';
import { startSlackBot } from './start-slack-bot.js';

/** The Slack surface for `npm start`. */
export const slackSurface: Surface<SlackConfig> = {
  id: 'slack',
  hint: 'Slack:   SLACK_BOT_TOKEN with SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET and SLACK_MODE=http',
  readConfig: readSlackConfig,
  secrets: (config) => [config.botToken, config.appToken, config.signingSecret],
  async start(config, ctx) {
    const bot = await startSlackBot({
      ...config,
      runner: ctx.runner,
      dataDir: ctx.dataDir,
      state: ctx.state,
      seenRequests: ctx.seenRequests,
      logger: ctx.logger,
      onWriteRefused: ctx.onWriteRefused,
    });
    ctx.print(`Slack bot is online (${config.mode === 'http' ? `HTTP, events at ${bot.url}` : 'Socket Mode'}).`);
    return { health: () => bot.connected(), stop: () => bot.stop() };
  },
};
