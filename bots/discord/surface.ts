import type { Surface } from '../surface.js';
import { checkUserInstalls, readDiscordConfig, type DiscordConfig } from './config.js';
import { inviteLink } from './invite-link.js';
import { startDiscordBot } from './start-discord-bot.js';

/** The Discord surface for `npm start`. */
export const discordSurface: Surface<DiscordConfig> = {
  id: 'discord',
  hint: ({ container }) =>
    `Discord: DISCORD_TOKEN (then register the commands once: ${container ? 'node dist/bots/discord/deploy-commands.js in this container, e.g. docker compose exec pictor node dist/bots/discord/deploy-commands.js' : 'npm run discord:deploy'})`,
  readConfig: readDiscordConfig,
  secrets: (config) => [config.token],
  async start(config, ctx) {
    checkUserInstalls(config.userInstalls, ctx.runner.budgets.dmCaps);
    // With Redis, processes on the gateway take turns holding it (a lease in Redis): one connected at a time.
    const link = config.interactions ? undefined : ctx.state.redis;
    const bot = await startDiscordBot({
      token: config.token,
      applicationId: config.applicationId,
      apiBaseUrl: config.apiBaseUrl,
      adminRoleIds: config.adminRoleIds,
      userInstalls: config.userInstalls,
      allowedAttachmentHosts: config.allowedAttachmentHosts,
      interactions: config.interactions,
      gatewayLease: link && { redis: link.commands, prefix: link.config.prefix },
      runner: ctx.runner,
      ledger: ctx.ledger,
      state: ctx.state,
      logger: ctx.logger,
      onWriteRefused: ctx.onWriteRefused,
      // Discord refusing the token (a standby's takeover, a live session closed 4004, a 401 to a request made with it)
      // or closing the session for good (4010-4014) stops the process, as a refused token at start does.
      onFatal: (error) => ctx.fail(error),
    });
    const { interactionsUrl } = bot;
    ctx.print(interactionsUrl ? `Discord bot is online (HTTP, interactions at ${interactionsUrl}).` : 'Discord bot is online.');
    const applicationId = bot.client?.application?.id ?? bot.client?.user?.id;
    if (applicationId) ctx.print(`Invite it to a server: ${inviteLink(applicationId)}`);
    return {
      health: () => bot.online(),
      // On the gateway with a lease: a standby takes the gateway at once. Over HTTP, /healthz turns the traffic away.
      ...(link ? { handOver: () => bot.handOver() } : {}),
      stop: (options) => bot.stop(options),
    };
  },
};
