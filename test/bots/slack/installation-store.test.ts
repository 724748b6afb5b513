import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Installation } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { installationKey, slackInstallationStore } from '../../../bots/slack/installation-store.js';
import { openBotState, type BotState } from '../../../bots/state/index.js';
import { RedisLink, silentLogger } from '../../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';

const redis = testRedis();

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

describe.each([
  { backend: 'the data folder', skip: undefined },
  { backend: 'Redis', skip: redis.skipReason },
])('installations in the bots’ state on $backend', ({ backend, skip }) => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  /** The installations space of a state of its own (a space without expiry: see the state store's contract). */
  async function open() {
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-installations-'));
    // Each piece is let go of at the test's end as soon as it is made, so one that fails to open leaves nothing behind.
    closers.push(() => rm(dataDir, { recursive: true, force: true }));
    const prefix = uniquePrefix('slack-installations');
    const link = backend === 'Redis' ? await RedisLink.open({ url: requireRedisUrl(redis), prefix }) : undefined;
    if (link) {
      closers.push(async () => {
        await link.close();
        await deleteKeys(requireRedisUrl(redis), prefix);
      });
    }
    const state: BotState = await openBotState({ dataDir, redis: link, logger: silentLogger() });
    closers.push(() => state.close());
    return state.store.space<Installation>(state.spaces.slackInstallations);
  }

  it.skipIf(skip)('stores, fetches and deletes a workspace install by its team', async () => {
    const store = slackInstallationStore(await open(), silentLogger());
    await store.storeInstallation(workspaceInstall('T0ALPHA', 'E0ORG'));

    const found = await store.fetchInstallation({ teamId: 'T0ALPHA', enterpriseId: 'E0ORG', isEnterpriseInstall: false });
    expect(found.bot?.token).toBe('xoxb-T0ALPHA-secret');
    await expect(store.fetchInstallation({ teamId: 'T0BETA', enterpriseId: undefined, isEnterpriseInstall: false })).rejects.toMatchObject({ code: 'slack_installation_not_found' });

    await store.deleteInstallation!({ teamId: 'T0ALPHA', enterpriseId: 'E0ORG', isEnterpriseInstall: false });
    await expect(store.fetchInstallation({ teamId: 'T0ALPHA', enterpriseId: 'E0ORG', isEnterpriseInstall: false })).rejects.toMatchObject({ code: 'slack_installation_not_found' });
  });

  it.skipIf(skip)('answers for every workspace of an organization with its org-wide install, and a workspace’s own install goes first', async () => {
    const store = slackInstallationStore(await open(), silentLogger());
    await store.storeInstallation(orgInstall('E0ORG'));

    expect((await store.fetchInstallation({ teamId: undefined, enterpriseId: 'E0ORG', isEnterpriseInstall: true })).bot?.token).toBe('xoxb-E0ORG-secret');
    expect((await store.forTeam('T0ANY', 'E0ORG'))?.bot?.token).toBe('xoxb-E0ORG-secret');
    await store.storeInstallation(workspaceInstall('T0OWN', 'E0ORG'));
    expect((await store.forTeam('T0OWN', 'E0ORG'))?.bot?.token).toBe('xoxb-T0OWN-secret');
    expect(await store.forTeam('T0ANY')).toBeUndefined();
  });

  it.skipIf(skip)('refuses an installation over its size bound instead of cutting it', async () => {
    const store = slackInstallationStore(await open(), silentLogger());
    const huge = { ...workspaceInstall('T0HUGE'), metadata: 'x'.repeat(20_000) };

    await expect(store.storeInstallation(huge)).rejects.toMatchObject({ code: 'state_value_too_large' });
    expect(await store.forTeam('T0HUGE')).toBeUndefined();
  });
});
