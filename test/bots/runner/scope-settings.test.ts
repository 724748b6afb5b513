import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  FileScopeSettingsStore,
  JobRefusedError,
  RedisScopeSettingsStore,
  ScopeSettingsUnreadableError,
  type JobRunner,
  type JobSpec,
  type Requester,
} from '../../../bots/runner/index.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();
const change = (by: string) => ({ by, at: Date.now() });
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

describe('the chat settings file', () => {
  it('keeps a server’s settings across a restart of the bot', async () => {
    const dir = await kit.newDir();
    const first = new FileScopeSettingsStore({ dir });
    await first.open();
    const { runner } = await kit.runner({ scopeSettings: first });
    expect((await runner.policy.set(admin(), 'blockedWords', ['kraken'])).ok).toBe(true);

    const reopened = new FileScopeSettingsStore({ dir });
    await reopened.open();
    const { runner: next } = await kit.runner({ scopeSettings: reopened });
    expect(await refusalCode(next, job(requester(), 'a kraken'))).toBe('blocked_word');
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('loses no change when two processes change settings at the same moment', async () => {
    const dir = await kit.newDir();
    const a = new FileScopeSettingsStore({ dir });
    const b = new FileScopeSettingsStore({ dir });
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).set(`discord:guild-${i}`, 'maxImages', 1 + (i % 9), change('discord:admin'))),
    );
    for (let i = 0; i < 10; i++) expect((await a.get(`discord:guild-${i}`)).values.maxImages).toBe(1 + (i % 9));
  });

  it('restores a damaged file from its backup, keeping the damaged copy beside it', async () => {
    const dir = await kit.newDir();
    const store = new FileScopeSettingsStore({ dir });
    await store.set('slack:T1', 'maxImages', 3, change('slack:U1'));
    await store.set('slack:T1', 'maxImages', 2, change('slack:U1'));
    await writeFile(store.path, '{"version":1,"scop');

    const reopened = new FileScopeSettingsStore({ dir });
    const opened = await reopened.open();
    expect(opened.restoredFromBackup).toBe(true);
    expect(await readFile(opened.brokenCopy!, 'utf8')).toBe('{"version":1,"scop');
    expect((await reopened.get('slack:T1')).values.maxImages).toBe(3);
  });

  it('refuses to start on a damaged file with no good backup, naming the file', async () => {
    const dir = await kit.newDir();
    await writeFile(join(dir, 'scope-settings.json'), 'not json');
    const store = new FileScopeSettingsStore({ dir });
    const error = await store.open().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ScopeSettingsUnreadableError);
    expect((error as ScopeSettingsUnreadableError).path).toBe(join(dir, 'scope-settings.json'));
  });

  it('keeps applying the last good settings when the file is damaged while the bot runs', async () => {
    const dir = await kit.newDir();
    const store = new FileScopeSettingsStore({ dir });
    await store.open();
    const { runner } = await kit.runner({ scopeSettings: store, settingsCacheMs: 0 });
    await runner.policy.set(admin(), 'blockedWords', ['kraken']);
    await writeFile(store.path, '][');
    expect(await refusalCode(runner, job(requester(), 'a kraken'))).toBe('blocked_word');
    expect(await refusalCode(runner, job(requester(), 'a squid'))).toBeUndefined();
  });
});

const redis = testRedis();

describe.skipIf(redis.skipReason)(`chat settings on Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  const prefix = uniquePrefix('scope-settings');
  const stores: RedisScopeSettingsStore[] = [];
  afterAll(async () => {
    for (const store of stores) await store.close();
    if (redis.url) await deleteKeys(redis.url, prefix);
  });

  it('applies a change made through one process to the jobs of another on the same Redis', async () => {
    const url = requireRedisUrl(redis);
    const one = await RedisScopeSettingsStore.connect({ url, prefix });
    const two = await RedisScopeSettingsStore.connect({ url, prefix });
    stores.push(one, two);
    const { runner: first } = await kit.runner({ scopeSettings: one });
    const { runner: second } = await kit.runner({ scopeSettings: two, settingsCacheMs: 0 });

    expect(await refusalCode(second, job(requester({ channelId: 'general' })))).toBeUndefined();
    expect((await first.policy.set(admin(), 'channels', ['art'])).ok).toBe(true);
    expect(await refusalCode(second, job(requester({ channelId: 'general' })))).toBe('channel_not_allowed');
    expect(kit.emu.emulator.requests).toHaveLength(1);
    expect((await second.policy.effective(admin())).channels).toMatchObject({ value: ['art'], source: 'admin' });
  });
});
