import type { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_KEPT_IMAGE_BYTES, StateJobRecordStore } from '../../../bots/discord/StateJobRecordStore.js';
import { RedisStateStore } from '../../../bots/state/index.js';
import { closeRedis, connectRedis, silentLogger } from '../../../src/index.js';
import { makeImage } from '../../helpers/images.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';

const redis = testRedis();
const requester = { platform: 'discord' as const, userId: '1', channelId: '2', scopeId: '3' };

describe.skipIf(redis.skipReason)(`Discord job records shared by replicas through Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  let url: string;
  const connections: Redis[] = [];
  const stores: RedisStateStore[] = [];
  let prefix: string;

  /** A replica: its own connection and lease, the shared prefix. */
  async function replica(leaseMs = 300): Promise<{ state: RedisStateStore; jobs: StateJobRecordStore; connection: Redis }> {
    const connection = await connectRedis(url);
    connections.push(connection);
    const state = await RedisStateStore.open({ redis: connection, prefix, leaseMs });
    stores.push(state);
    const jobs = new StateJobRecordStore({ state, logger: silentLogger() });
    await jobs.open();
    return { state, jobs, connection };
  }

  beforeAll(() => {
    url = requireRedisUrl(redis);
  });
  afterEach(async () => {
    for (const state of stores.splice(0)) await state.close();
    for (const connection of connections.splice(0)) await closeRedis(connection);
    await deleteKeys(url, prefix);
  });

  it('gives replica B the record, inputs and outputs of a job replica A ran (what Reroll and Edit need)', async () => {
    prefix = uniquePrefix('discord-jobs');
    const a = await replica();
    const b = await replica();
    const png = Buffer.from(await makeImage('png', 8, 8));
    const key = a.jobs.newKey();
    await a.jobs.add({ key, kind: 'edit', prompt: 'p', options: { size: '1024x1536' }, requester, status: 'running' }, [{ data: png, filename: 'a.png' }]);
    await a.jobs.update(key, { status: 'completed', runnerJobId: 'job1' });
    await a.jobs.saveOutputs(key, [png, png], 'png');

    expect(await b.jobs.get(key)).toMatchObject({ kind: 'edit', prompt: 'p', options: { size: '1024x1536' }, status: 'completed', runnerJobId: 'job1' });
    expect((await b.jobs.readInputs(key)).map((i) => [i.filename, i.data.equals(png)])).toEqual([['a.png', true]]);
    expect((await b.jobs.readOutput(key, 1))?.data.equals(png)).toBe(true);
    expect(await b.jobs.readOutput(key, 2)).toBeUndefined();
    await b.jobs.remove(key);
    expect(await a.jobs.get(key)).toBeUndefined();
    expect(await a.jobs.readOutput(key, 0)).toBeUndefined();
  });

  it('hands a running job of a replica that died to one survivor, and tells the others it is not theirs while the holder lives', async () => {
    prefix = uniquePrefix('discord-jobs');
    const a = await replica();
    const b = await replica();
    const key = a.jobs.newKey();
    await a.jobs.add({ key, kind: 'generate', prompt: 'running on a', options: {}, requester, status: 'running', reply: { applicationId: 'app', token: 't', issuedAt: Date.now() } });
    expect(await b.jobs.runsElsewhere(key)).toBe(true);
    expect(await b.jobs.claimInterrupted()).toEqual([]);

    a.connection.disconnect(); // as kill -9: the lease is not renewed
    await new Promise((r) => setTimeout(r, 450));
    expect(await b.jobs.runsElsewhere(key)).toBe(false);
    const [claimed, ...rest] = await b.jobs.claimInterrupted();
    expect(rest).toEqual([]);
    expect(claimed).toMatchObject({ key, prompt: 'running on a', reply: { token: 't' } });
    await b.jobs.update(key, { status: 'failed' });
    expect(await b.jobs.get(key)).not.toHaveProperty('reply');
    expect(await b.jobs.claimInterrupted()).toEqual([]);
  });

  it('keeps no image over the bound, and an edit’s inputs all or none', async () => {
    prefix = uniquePrefix('discord-jobs');
    const a = await replica();
    const small = Buffer.from(await makeImage('png', 4, 4));
    const huge = Buffer.alloc(MAX_KEPT_IMAGE_BYTES + 1, 1);
    const key = a.jobs.newKey();
    await a.jobs.add({ key, kind: 'edit', prompt: 'p', options: {}, requester, status: 'running' }, [{ data: small }, { data: huge }]);
    expect((await a.jobs.get(key))?.inputs).toEqual([]);
    expect(await a.jobs.readInputs(key)).toEqual([]);
    await a.jobs.saveOutputs(key, [huge, small], 'png');
    expect(await a.jobs.readOutput(key, 0)).toMatchObject({ data: small });
  });

  it('lists a member’s drafts of the "Edit image" menu to any replica, oldest first', async () => {
    prefix = uniquePrefix('discord-jobs');
    const a = await replica();
    const b = await replica();
    const sources = [{ url: 'https://cdn.discordapp.com/x.png', filename: 'x.png', label: 'x' }] as never;
    const first = a.jobs.newKey();
    await a.jobs.add({ key: first, kind: 'edit', prompt: '', options: {}, requester, status: 'draft', sources, createdAt: 1 });
    const second = b.jobs.newKey();
    await b.jobs.add({ key: second, kind: 'edit', prompt: '', options: {}, requester, status: 'draft', sources, createdAt: 2 });
    expect((await a.jobs.drafts('1')).map((r) => r.key)).toEqual([first, second]);
    await b.jobs.remove(first);
    expect((await a.jobs.drafts('1')).map((r) => r.key)).toEqual([second]);
    expect(await a.jobs.drafts('someone else')).toEqual([]);
  });
});
