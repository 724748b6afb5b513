import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { historyOf, historyOfScope, keepInHistory, openBotState, stateKeyOf, type BotState, type Space } from '../../../bots/state/index.js';
import { RedisLink, silentLogger } from '../../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { testTempDir } from '../../helpers/temp-dir.js';

const redis = testRedis();
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The bots' state on one backend, and everything it keeps there as text: every file of the data folder, or every key's values under its prefix. */
async function stateOn(backend: 'file' | 'redis', logger = silentLogger()): Promise<{ state: BotState; everything(): Promise<string> }> {
  const dataDir = await testTempDir('pictor-forget-step-');
  const prefix = uniquePrefix('forget-step');
  const link = backend === 'redis' ? await RedisLink.open({ url: requireRedisUrl(redis), prefix }) : undefined;
  const state = await openBotState({ dataDir, redis: link, leaseMs: 300, logger });
  closers.push(async () => {
    await state.close().catch(() => undefined);
    await link?.close();
    if (link) await deleteKeys(requireRedisUrl(redis), prefix);
  });
  const everything = async () => {
    const texts: string[] = [];
    for (const entry of await readdir(dataDir, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) texts.push(await readFile(join(entry.parentPath, entry.name), 'utf8'));
    }
    if (link) {
      const r = link.commands;
      for (const key of await r.keys(`${prefix}:*`)) {
        const type = await r.type(key);
        if (type === 'string') texts.push((await r.get(key)) ?? '');
        else if (type === 'hash') texts.push(JSON.stringify(await r.hgetall(key)));
        else if (type === 'zset') texts.push(JSON.stringify(await r.zrange(key, 0, -1)));
        else if (type === 'set') texts.push(JSON.stringify(await r.smembers(key)));
        else if (type === 'list') texts.push(JSON.stringify(await r.lrange(key, 0, -1)));
        else texts.push(`${key}: ${type}`);
      }
    }
    return texts.join('\n');
  };
  return { state, everything };
}

describe.each([
  { backend: 'file' as const, skip: undefined },
  { backend: 'redis' as const, skip: redis.skipReason },
])('forget of a Slack request that kept its Workflow Builder step, on the $backend backend', ({ backend, skip }) => {
  it.skipIf(skip)('erases the prompt and keeps the step of every request whose step is still open, running or ended, so the step can still be ended (a sweep after a crash); the token goes once the step is ended', async () => {
    const { state, everything } = await stateOn(backend);
    const store = new RequestStore(state);
    const request = (token: string) => ({
      kind: 'generate' as const,
      prompt: 'a fox',
      options: {},
      teamId: 'T1',
      userId: 'U1',
      channelId: 'C1',
      status: 'active' as const,
      step: { executionId: `Fx${token}`, token: `xwfp-${token}` },
    });
    // Ended with its step still open: a crash came between the job's end and the step's (or letting go of it failed).
    const [running, unrecorded, recorded] = [await store.create(request('RUNNINGSTEP')), await store.create(request('UNRECORDEDSTEP')), await store.create(request('RECORDEDSTEP'))];
    const end = { type: 'failed' as const, code: 'server_error' };
    await store.update(unrecorded.id, { status: 'ended', end });
    await store.update(recorded.id, { status: 'ended', end });
    await store.update(recorded.id, { endRecorded: true });

    await state.forget('slack:U1');
    expect(await everything()).not.toContain('a fox');
    expect(await store.get(running.id)).toMatchObject({ prompt: '', status: 'active', step: { executionId: 'FxRUNNINGSTEP', token: 'xwfp-RUNNINGSTEP' } });
    expect(await store.get(unrecorded.id)).toMatchObject({ prompt: '', status: 'ended', end, step: { token: 'xwfp-UNRECORDEDSTEP' } });
    expect(await store.get(recorded.id)).toMatchObject({ prompt: '', status: 'ended', step: { token: 'xwfp-RECORDEDSTEP' } });
    // Once each step is ended (taken out of its request), no token is left anywhere.
    for (const { id } of [running, unrecorded, recorded]) await store.takeStep(id);
    const after = await everything();
    for (const token of ['RUNNINGSTEP', 'UNRECORDEDSTEP', 'RECORDEDSTEP']) expect(after).not.toContain(token);
  });
});

describe.each([
  { backend: 'file' as const, skip: undefined },
  { backend: 'redis' as const, skip: redis.skipReason },
])('a member’s forget and the history’s index of each server’s members, on the $backend backend', ({ backend, skip }) => {
  it.skipIf(skip)('erases the member from every server’s list of members with history, and keeps the others there', async () => {
    const { state, everything } = await stateOn(backend);
    const entry = (key: string, scopeKey: string) => ({ key, scopeKey, at: Date.now() });
    await keepInHistory(state, 'discord:4242MARKER', [entry('j1', 'discord:G1'), entry('j2', 'discord:G2')]);
    await keepInHistory(state, 'discord:77', [entry('j3', 'discord:G1')]);
    expect(await everything()).toContain('4242MARKER');

    await state.forget('discord:4242MARKER');
    expect(await everything()).not.toContain('4242MARKER');
    expect(await historyOfScope(state, 'discord:G1')).toMatchObject([{ key: 'j3' }]);
  });

  it.skipIf(skip)('leaves no server listing the member when one of their jobs ends as the forget runs (its history written, then its list)', async () => {
    const { state } = await stateOn(backend);
    const entry = (key: string, scopeKey: string) => ({ key, scopeKey, at: Date.now() });
    await keepInHistory(state, 'discord:4242MARKER', [entry('j1', 'discord:G1')]);
    // The job ends just before the forget erases the history: its entry and its server's list are written first.
    const space = state.store.space.bind(state.store);
    let ended = false;
    vi.spyOn(state.store, 'space').mockImplementation(<T>(definition: Parameters<typeof space>[0]) => {
      const opened = space<T>(definition);
      if (definition.name !== state.spaces.history.name || ended) return opened;
      const update: Space<T>['update'] = async (...args) => {
        ended = true;
        await keepInHistory(state, 'discord:4242MARKER', [entry('j2', 'discord:G2')]);
        return opened.update(...args);
      };
      return Object.assign(Object.create(opened) as Space<T>, { update });
    });

    await state.forget('discord:4242MARKER');
    vi.mocked(state.store.space).mockRestore();
    expect(await historyOf(state, 'discord:4242MARKER')).toEqual([]);
    for (const scope of ['discord:G1', 'discord:G2']) expect(await state.store.space<string[]>(state.spaces.historyScopes).get(stateKeyOf(scope))).toBeUndefined();
  });

  it.skipIf(skip)('erases the member from every other list when one server’s list is not a list (a hand edit): that one goes, logged', async () => {
    const logger = { ...silentLogger(), warn: vi.fn() };
    const { state } = await stateOn(backend, logger);
    await keepInHistory(state, 'discord:4242MARKER', [{ key: 'j1', scopeKey: 'discord:G1', at: Date.now() }]);
    const scopes = state.store.space<unknown>(state.spaces.historyScopes);
    await scopes.put(stateKeyOf('discord:G0'), { 0: 'discord:4242MARKER' });

    await state.forget('discord:4242MARKER');
    expect(await scopes.get(stateKeyOf('discord:G1'))).toBeUndefined();
    expect(await scopes.has(stateKeyOf('discord:G0'))).toBe(false);
    expect(logger.warn).toHaveBeenCalledWith({ key: stateKeyOf('discord:G0') }, expect.stringContaining('not a list'));
  });
});
