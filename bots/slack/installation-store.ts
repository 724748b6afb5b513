import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Installation, InstallationQuery, InstallationStore } from '@slack/bolt';
import type { Redis } from 'ioredis';
import { writeFileAtomically, type LoggerLike } from '../../src/index.js';

/**
 * Where the Slack app's installations live when it serves many workspaces
 * through OAuth: one record per workspace (or per Enterprise Grid
 * organization, for an org-wide install), holding that workspace's bot token.
 * Two backends, as for the bots' other state: the data folder (one process)
 * and Redis (every process sharing `REDIS_URL`).
 *
 * The records are shaped as a state space (`get`, `put`, `delete` by a key
 * of letters, digits, `_` and `-`), so they can move onto the shared state
 * layer as its `slack-installations` space; installations never expire.
 */
export interface InstallationRecords {
  readonly backend: 'file' | 'redis';
  get(key: string): Promise<Installation | undefined>;
  put(key: string, value: Installation): Promise<void>;
  delete(key: string): Promise<void>;
}

/** An installation record is small (a few hundred bytes); a larger one is refused, never cut. */
export const MAX_INSTALLATION_BYTES = 16 * 1024;
const KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const ID_PATTERN = /^[A-Z0-9]{1,32}$/;

export class InstallationTooLargeError extends Error {
  readonly code = 'slack_installation_too_large';
  constructor(bytes: number) {
    super(`a Slack installation of ${bytes} bytes is over the bound of ${MAX_INSTALLATION_BYTES} bytes`);
  }
}

export class InstallationNotFoundError extends Error {
  readonly code = 'slack_installation_not_found';
  constructor(key: string) {
    super(`no Slack installation for ${key}`);
  }
}

/**
 * The record key of an installation or a query: `enterprise-E…` for an
 * org-wide (Enterprise Grid) install, which serves every workspace of the
 * organization, else `team-T…` (a workspace install, in Grid or not).
 */
export function installationKey(query: { isEnterpriseInstall?: boolean | undefined; enterpriseId?: string | undefined; teamId?: string | undefined }): string {
  const [kind, id] = query.isEnterpriseInstall ? ['enterprise', query.enterpriseId] : ['team', query.teamId];
  if (!id || !ID_PATTERN.test(id)) throw new InstallationNotFoundError(`a ${kind} without a valid id`);
  return `${kind}-${id}`;
}

function encode(value: Installation): string {
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_INSTALLATION_BYTES) throw new InstallationTooLargeError(bytes);
  return text;
}

function checkKey(key: string): void {
  if (!KEY_PATTERN.test(key)) throw new Error(`not an installation key: ${JSON.stringify(key.slice(0, 80))}`);
}

/** `<dataDir>/slack/installations/<key>.json`, each written atomically and readable by its owner only (0600). */
export class FileInstallationRecords implements InstallationRecords {
  readonly backend = 'file' as const;
  readonly #dir: string;

  constructor(options: { dataDir: string }) {
    this.#dir = join(options.dataDir, 'slack', 'installations');
  }

  async get(key: string): Promise<Installation | undefined> {
    checkKey(key);
    let text: string;
    try {
      text = await readFile(join(this.#dir, `${key}.json`), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return JSON.parse(text) as Installation;
  }

  async put(key: string, value: Installation): Promise<void> {
    checkKey(key);
    const text = encode(value);
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    await writeFileAtomically(join(this.#dir, `${key}.json`), text, { mode: 0o600 });
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    await rm(join(this.#dir, `${key}.json`), { force: true });
  }
}

/** `<prefix>:slack:installation:<key>` in Redis, one string per installation, no expiry. */
export class RedisInstallationRecords implements InstallationRecords {
  readonly backend = 'redis' as const;
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(options: { redis: Redis; prefix: string }) {
    this.#redis = options.redis;
    this.#prefix = options.prefix;
  }

  #key(key: string): string {
    checkKey(key);
    return `${this.#prefix}:slack:installation:${key}`;
  }

  async get(key: string): Promise<Installation | undefined> {
    const text = await this.#redis.get(this.#key(key));
    return text === null ? undefined : (JSON.parse(text) as Installation);
  }

  async put(key: string, value: Installation): Promise<void> {
    await this.#redis.set(this.#key(key), encode(value));
  }

  async delete(key: string): Promise<void> {
    await this.#redis.del(this.#key(key));
  }
}

/**
 * Bolt's installation store over installation records: OAuth's redirect
 * stores the installation, Bolt's `authorize` fetches it for every incoming
 * request (an org-wide install answers for each workspace of its
 * organization), and `app_uninstalled` / `tokens_revoked` delete it. Tokens
 * are never logged: only team and enterprise ids are.
 */
export function slackInstallationStore(records: InstallationRecords, logger: LoggerLike): InstallationStore & {
  /** The installation serving a workspace, if any (an org-wide one when the workspace has none of its own). */
  forTeam(teamId: string, enterpriseId?: string | undefined): Promise<Installation | undefined>;
} {
  const find = async (teamId: string | undefined, enterpriseId: string | undefined): Promise<Installation | undefined> => {
    const own = teamId && ID_PATTERN.test(teamId) ? await records.get(installationKey({ teamId })) : undefined;
    if (own || !enterpriseId || !ID_PATTERN.test(enterpriseId)) return own;
    return records.get(installationKey({ isEnterpriseInstall: true, enterpriseId }));
  };
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
    forTeam: find,
  };
}
