import { writeFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { FileQuotaStore, JobRefusedError, RedisQuotaStore, settingsInLedger, type JobRunner, type JobSpec, type Requester } from '../../../bots/runner/index.js';
import { MemoryQuotaStore } from '../../../src/index.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();
const admin = (overrides: Partial<Requester> = {}) => requester({ isAdmin: true, ...overrides });

function job(who: Requester, prompt = 'a small boat'): JobSpec {
  return { kind: 'generate', prompt, options: { quality: 'low' }, requester: who };
}

async function refusalCode(runner: JobRunner, spec: JobSpec): Promise<string | undefined> {
  try {
    const handle = await runner.submit(spec, () => {});
    await handle.done;
    return undefined;
  } catch (error) {
    if (error instanceof JobRefusedError) return error.code;
    throw error;
  }
}

describe('the chat settings kept in the ledger', () => {
  it('survive a restart of the bot: the file ledger keeps them beside the caps', async () => {
    const dir = await kit.newDir();
    const first = new FileQuotaStore({ dir });
    await first.open();
    const { runner } = await kit.runner({ store: first });
    expect((await runner.policy.set(admin(), 'blockedWords', ['kraken'])).ok).toBe(true);
    await runner.shutdown({ graceMs: 0 });
    await first.close();

    const reopened = await kit.store({ dir });
    await reopened.open();
    const { runner: next } = await kit.runner({ store: reopened });
    expect(await refusalCode(next, job(requester(), 'a kraken'))).toBe('blocked_word');
    expect(kit.emu.emulator.requests).toHaveLength(0);
    expect((await next.policy.effective(requester())).blockedWords).toMatchObject({ value: ['kraken'], source: 'admin', change: { by: expect.stringMatching(/^discord:user-\d+$/) as unknown } });
  });

  it('are restored from the ledger’s backup copy with the caps when the file is damaged', async () => {
    const dir = await kit.newDir();
    const store = new FileQuotaStore({ dir });
    await store.open();
    const settings = settingsInLedger(store);
    await settings.set('slack:T1', 'maxImages', 3, { by: 'slack:U1', at: 1 });
    await settings.set('slack:T1', 'maxImages', 2, { by: 'slack:U1', at: 2 });
    await store.close();
    await writeFile(store.capOverridesPath, '{"version":1,"scop');

    const reopened = await kit.store({ dir });
    expect((await reopened.open()).restoredCapOverrides).toBe(true);
    expect((await settingsInLedger(reopened).get('slack:T1')).values.maxImages).toBe(3);
  });

  it('leave out a stored value this version cannot read, so its default applies, and say so in the log', async () => {
    const ledger = new MemoryQuotaStore();
    await ledger.setScopeSetting('discord:G1', 'maxImages', 99, 'discord:admin', 1);
    await ledger.setScopeSetting('discord:G1', 'channels', ['art'], 'discord:admin', 1);
    await ledger.setScopeSetting('discord:G1', 'colourScheme', 'teal', 'discord:admin', 1);
    const warnings: unknown[] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args), info: () => {}, error: () => {}, debug: () => {} };
    const stored = await settingsInLedger(ledger, logger).get('discord:G1');
    expect(stored.values).toEqual({ channels: ['art'] });
    expect(warnings).toHaveLength(1);
  });
});

const redis = testRedis();

describe.skipIf(redis.skipReason)(`chat settings on Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  const prefix = uniquePrefix('scope-settings');
  const stores: RedisQuotaStore[] = [];
  afterAll(async () => {
    for (const store of stores) await store.close();
    if (redis.url) await deleteKeys(redis.url, prefix);
  });

  it('apply a change made through one process to the jobs of another on the same Redis', async () => {
    const url = requireRedisUrl(redis);
    // Two stores on connections of their own, as two processes of the account have.
    const one = await RedisQuotaStore.connect({ url, prefix });
    const two = await RedisQuotaStore.connect({ url, prefix });
    stores.push(one, two);
    const { runner: first } = await kit.runner({ store: one });
    const { runner: second } = await kit.runner({ store: two, settingsCacheMs: 0 });

    expect(await refusalCode(second, job(requester({ channelId: 'general' })))).toBeUndefined();
    expect((await first.policy.set(admin(), 'channels', ['art'])).ok).toBe(true);
    expect(await refusalCode(second, job(requester({ channelId: 'general' })))).toBe('channel_not_allowed');
    expect(kit.emu.emulator.requests).toHaveLength(1);
    expect((await second.policy.effective(admin())).channels).toMatchObject({ value: ['art'], source: 'admin' });
  });
});
