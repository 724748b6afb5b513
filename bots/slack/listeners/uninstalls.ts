import type { App, Installation, InstallationQuery } from '@slack/bolt';
import type { LoggerLike } from 'pictor';
import type { slackInstallationStore } from '../installation-store.js';

/** The envelope fields that say which installation an event is about. */
interface EventEnvelope {
  team_id?: string;
  enterprise_id?: string;
  is_enterprise_install?: boolean;
  authorizations?: { is_enterprise_install?: boolean }[];
}

/**
 * With OAuth: a workspace that removes the app (`app_uninstalled`) or revokes
 * its bot token (`tokens_revoked` naming the bot user) loses its
 * installation, so its next request finds none and is ignored. Bolt delivers
 * these two events without authorizing them (the token is already gone); the
 * signature check and the replay guard still apply.
 */
export function registerUninstalls(
  app: App,
  input: { installations: ReturnType<typeof slackInstallationStore>; forget: (token: string) => void; logger: LoggerLike },
): void {
  const { installations, logger } = input;

  async function remove(envelope: EventEnvelope, installation: Installation): Promise<void> {
    const isEnterpriseInstall = installation.isEnterpriseInstall === true;
    const query = (
      isEnterpriseInstall
        ? { teamId: undefined, enterpriseId: installation.enterprise?.id, isEnterpriseInstall }
        : { teamId: installation.team?.id ?? envelope.team_id, enterpriseId: installation.enterprise?.id, isEnterpriseInstall }
    ) as InstallationQuery<boolean>;
    if (installation.bot?.token) input.forget(installation.bot.token);
    await installations.deleteInstallation!(query);
  }

  const installationOf = (envelope: EventEnvelope) => installations.forTeam(envelope.team_id ?? '', envelope.enterprise_id);

  app.event('app_uninstalled', async ({ body }) => {
    const envelope = body as EventEnvelope;
    const installation = await installationOf(envelope);
    if (installation) await remove(envelope, installation);
  });

  app.event('tokens_revoked', async ({ event, body }) => {
    const envelope = body as EventEnvelope;
    const bots = (event as { tokens?: { bot?: string[] } }).tokens?.bot ?? [];
    // Only the bot's own token matters: a user token revoked leaves the bot installed.
    if (bots.length === 0) return;
    const installation = await installationOf(envelope);
    if (installation && (!installation.bot?.userId || bots.includes(installation.bot.userId))) await remove(envelope, installation);
    else logger.info({ team: envelope.team_id }, 'a bot token revoked in Slack was not the one installed here');
  });
}
