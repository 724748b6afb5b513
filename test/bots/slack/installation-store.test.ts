import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Installation } from '@slack/bolt';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeRedis, connectRedis, silentLogger } from '../../../src/index.js';
import {
  FileInstallationRecords,
  installationKey,
  RedisInstallationRecords,
  slackInstallationStore,
  type InstallationRecords,
} from '../../../bots/slack/installation-store.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';

function workspaceInstall(team: string, enterprise?: string): Installation {
  return {
    team: { id: team, name: team },
    enterprise: enterprise ? { id: enterprise, name: enterprise } : undefined,
    bot: { token: `xoxb-${team}-secret`, userId: `U0BOT${team}`, id: `B0${team}`, scopes: ['commands'] },
    user: { id: 'U0INSTALLER', token: undefined, scopes: undefined },
    isEnterpriseInstall: false,
    authVersion: 'v2',
  } as Installation;
}

function orgInstall(enterprise: string): Installation {
  return {
    team: undefined,
    enterprise: { id: enterprise, name: enterprise },
    bot: { token: `xoxb-${enterprise}-secret`, userId: 'U0BOTORG', id: 'B0ORG', scopes: ['commands'] },
    user: { id: 'U0INSTALLER', token: undefined, scopes: undefined },
    isEnterpriseInstall: true,
    authVersion: 'v2',
  } as Installation;
}

describe('the key of an installation', () => {
  it('is the workspace for a workspace install (in Enterprise Grid too), and the organization for an org-wide install', () => {
    expect(installationKey({ teamId: 'T0ALPHA' })).toBe('team-T0ALPHA');
    expect(installationKey({ teamId: 'T0ALPHA', enterpriseId: 'E0ORG', isEnterpriseInstall: false })).toBe('team-T0ALPHA');
    expect(installationKey({ teamId: undefined, enterpriseId: 'E0ORG', isEnterpriseInstall: true })).toBe('enterprise-E0ORG');
  });

  it('is refused for an id that is not Slack’s shape, so nothing else reaches a path or a Redis key', () => {
    expect(() => installationKey({ teamId: '../T0ALPHA' })).toThrow(expect.objectContaining({ code: 'slack_installation_not_found' }));
    expect(() => installationKey({ isEnterpriseInstall: true, teamId: 'T0ALPHA' })).toThrow(expect.objectContaining({ code: 'slack_installation_not_found' }));
  });
});

/** What both backends must do, through Bolt's installation store interface. */
function behavesAsAnInstallationStore(open: () => Promise<InstallationRecords>): void {
  it('stores, fetches and deletes a workspace install by its team', async () => {
    const store = slackInstallationStore(await open(), silentLogger());
    await store.storeInstallation(workspaceInstall('T0ALPHA', 'E0ORG'));

    const found = await store.fetchInstallation({ teamId: 'T0ALPHA', enterpriseId: 'E0ORG', isEnterpriseInstall: false });
    expect(found.bot?.token).toBe('xoxb-T0ALPHA-secret');
    await expect(store.fetchInstallation({ teamId: 'T0BETA', enterpriseId: undefined, isEnterpriseInstall: false })).rejects.toMatchObject({ code: 'slack_installation_not_found' });

    await store.deleteInstallation!({ teamId: 'T0ALPHA', enterpriseId: 'E0ORG', isEnterpriseInstall: false });
    await expect(store.fetchInstallation({ teamId: 'T0ALPHA', enterpriseId: 'E0ORG', isEnterpriseInstall: false })).rejects.toMatchObject({ code: 'slack_installation_not_found' });
  });

  it('answers for every workspace of an organization with its org-wide install, and a workspace’s own install goes first', async () => {
    const store = slackInstallationStore(await open(), silentLogger());
    await store.storeInstallation(orgInstall('E0ORG'));

    expect((await store.fetchInstallation({ teamId: undefined, enterpriseId: 'E0ORG', isEnterpriseInstall: true })).bot?.token).toBe('xoxb-E0ORG-secret');
    expect((await store.forTeam('T0ANY', 'E0ORG'))?.bot?.token).toBe('xoxb-E0ORG-secret');
    await store.storeInstallation(workspaceInstall('T0OWN', 'E0ORG'));
    expect((await store.forTeam('T0OWN', 'E0ORG'))?.bot?.token).toBe('xoxb-T0OWN-secret');
    expect(await store.forTeam('T0ANY')).toBeUndefined();
  });

  it('refuses an installation over its size bound instead of cutting it', async () => {
    const store = slackInstallationStore(await open(), silentLogger());
    const huge = { ...workspaceInstall('T0HUGE'), metadata: 'x'.repeat(20_000) };

    await expect(store.storeInstallation(huge)).rejects.toMatchObject({ code: 'slack_installation_too_large' });
    expect(await store.forTeam('T0HUGE')).toBeUndefined();
  });
}

describe('installations in the data folder', () => {
  let dataDir = '';
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'pictor-installations-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  behavesAsAnInstallationStore(async () => new FileInstallationRecords({ dataDir }));

  it('keeps each in a file only its owner can read, in a folder only its owner can enter', async () => {
    await new FileInstallationRecords({ dataDir }).put('team-T0ALPHA', workspaceInstall('T0ALPHA'));

    expect((await stat(join(dataDir, 'slack', 'installations', 'team-T0ALPHA.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dataDir, 'slack', 'installations'))).mode & 0o077).toBe(0);
  });
});

const redis = testRedis();

describe.skipIf(redis.skipReason)(`installations on Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  const prefix = uniquePrefix('slack-installations');
  const connections: Redis[] = [];
  afterAll(async () => {
    for (const connection of connections) await closeRedis(connection);
    if (redis.url) await deleteKeys(redis.url, prefix);
  });

  behavesAsAnInstallationStore(async () => {
    const connection = await connectRedis(requireRedisUrl(redis));
    connections.push(connection);
    return new RedisInstallationRecords({ redis: connection, prefix: `${prefix}:${connections.length}` });
  });

  it('keeps each under the Redis prefix, without an expiry', async () => {
    const connection = await connectRedis(requireRedisUrl(redis));
    connections.push(connection);
    await new RedisInstallationRecords({ redis: connection, prefix }).put('team-T0ALPHA', workspaceInstall('T0ALPHA'));

    expect(await connection.ttl(`${prefix}:slack:installation:team-T0ALPHA`)).toBe(-1);
  });
});
