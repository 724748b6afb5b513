import type { Surface } from '../surface.js';
import { readDiscordConfig, type DiscordConfig } from './config.js';
import { inviteLink } from './invite-link.js';
import { startDiscordBot } from './start-discord-bot.js';

/** The Discord surface for `npm start`. */
export const discordSurface: Surface<DiscordConfig> = {
  id: 'discord',
  hint: 'Discord: DISCORD_TOKEN (then register the commands once: npm run discord:deploy)',
  readConfig: readDiscordConfig,
  secrets: (config) => [config.token],
  async start(config, ctx) {
    const bot = await startDiscordBot({
      token: config.token,
      applicationId: config.applicationId,
      apiBaseUrl: config.apiBaseUrl,
      adminRoleIds: config.adminRoleIds,
      allowedAttachmentHosts: config.allowedAttachmentHosts,
      runner: ctx.runner,
      dataDir: ctx.dataDir,
      state: ctx.state,
      logger: ctx.logger,
      onWriteRefused: ctx.onWriteRefused,
    });
    ctx.print('Discord bot is online.');
    const applicationId = bot.client.application?.id ?? bot.client.user?.id;
    if (applicationId) ctx.print(`Invite it to a server: ${inviteLink(applicationId)}`);
    return { health: () => bot.client.isReady(), stop: () => bot.stop() };
  },
};
