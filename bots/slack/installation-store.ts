import type { Installation, InstallationQuery, InstallationStore } from '@slack/bolt';
import type { LoggerLike } from 'pictor';
import type { Space } from '../state/index.js';

/** A Slack team or enterprise id: only these reach a record key. */
const ID_PATTERN = /^[A-Z0-9]{1,32}$/;

export class InstallationNotFoundError extends Error {
  readonly code = 'slack_installation_not_found';
  constructor(key: string) {
    super(`no Slack installation for ${key}`);
  }
}

/** The record key of an installation or a query: `enterprise-E…` for an org-wide (Enterprise Grid) install, else `team-T…`. */
export function installationKey(query: { isEnterpriseInstall?: boolean | undefined; enterpriseId?: string | undefined; teamId?: string | undefined }): string {
  const [kind, id] = query.isEnterpriseInstall ? ['enterprise', query.enterpriseId] : ['team', query.teamId];
  if (!id || !ID_PATTERN.test(id)) throw new InstallationNotFoundError(`a ${kind} without a valid id`);
  return `${kind}-${id}`;
}

/** Bolt's installation store for an OAuth app: one record per workspace or org-wide install; only ids are logged, never tokens. */
export function slackInstallationStore(records: Space<Installation>, logger: LoggerLike): InstallationStore & {
  /** The installation serving a workspace, if any (an org-wide one when the workspace has none of its own). */
  forTeam(teamId: string, enterpriseId?: string | undefined): Promise<Installation | undefined>;
} {
  return {
    async storeInstallation(installation) {
      const isEnterpriseInstall = installation.isEnterpriseInstall === true;
      const key = installationKey({ isEnterpriseInstall, enterpriseId: installation.enterprise?.id, teamId: installation.team?.id });
      await records.put(key, installation as Installation);
      logger.info({ team: installation.team?.id, enterprise: installation.enterprise?.id, isEnterpriseInstall }, 'the Slack app was installed');
    },
    async fetchInstallation(query: InstallationQuery<boolean>) {
      const key = installationKey(query);
      const found = await records.get(key);
      if (!found) throw new InstallationNotFoundError(key);
      return found;
    },
    async deleteInstallation(query: InstallationQuery<boolean>) {
      const key = installationKey(query);
      await records.delete(key);
      logger.info({ team: query.teamId, enterprise: query.enterpriseId, isEnterpriseInstall: query.isEnterpriseInstall }, 'a Slack installation was removed');
    },
    async forTeam(teamId, enterpriseId) {
      const own = ID_PATTERN.test(teamId) ? await records.get(installationKey({ teamId })) : undefined;
      if (own || !enterpriseId || !ID_PATTERN.test(enterpriseId)) return own;
      return records.get(installationKey({ isEnterpriseInstall: true, enterpriseId }));
    },
  };
}
