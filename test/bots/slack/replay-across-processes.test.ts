import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../../src/core/redis-connection.js';
import { RedisQuotaStore } from '../../../src/index.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { finishedJob, jobMessages, startHarness, type Harness } from './harness.js';

/** Closed last first; a harness sharing another's fake leaves it open. */
const harnesses: { h: Harness; keepFake?: boolean }[] = [];
afterEach(async () => {
  for (const { h, keepFake } of harnesses.splice(0).reverse()) await h.close(keepFake ? { fake: true } : {});
});

const generations = (h: Harness) => h.emulator.requests.filter((r) => r.path === '/v1/images/generations');

describe('a replayed signed Slack request', () => {
  it('is dropped after a restart: the signatures seen are kept in the data folder', async () => {
    const before = await startHarness({ emulator: { latencyMs: 10 } });
    await before.fake.command({ command: '/imagine', text: 'a cat --quality low', channel: 'C0REPLAY' });
    await finishedJob(before.fake, 'C0REPLAY');
    await before.close({ fake: true, dataDir: true });

    const after = await startHarness({ emulator: { latencyMs: 10 }, fake: before.fake, dataDir: before.dataDir });
    harnesses.push({ h: after });
    const replayed = await after.fake.replayLastDelivery();
    expect(replayed.status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(generations(after)).toHaveLength(0);
    expect(jobMessages(after.fake, 'C0REPLAY')).toHaveLength(1);
  });
});

const redis = testRedis();

describe.skipIf(redis.skipReason)(`a replayed signed Slack request, two bots on one Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  let url: string;
  let client: Redis;
  const prefixes: string[] = [];

  beforeAll(async () => {
    url = requireRedisUrl(redis);
    client = await connectRedis(url);
  });
  afterAll(async () => {
    client?.disconnect();
    if (url) for (const prefix of prefixes) await deleteKeys(url, prefix);
  });

  it('is dropped by the second bot when the first one ran it', async () => {
    const prefix = uniquePrefix('replay');
    prefixes.push(prefix);
    const first = await startHarness({ emulator: { latencyMs: 10 }, store: new RedisQuotaStore({ redis: client, prefix }) });
    harnesses.push({ h: first });
    const second = await startHarness({ emulator: { latencyMs: 10 }, fake: first.fake, store: new RedisQuotaStore({ redis: client, prefix }) });
    harnesses.push({ h: second, keepFake: true });

    first.fake.deliverOverHttp(first.bot.url!);
    await first.fake.command({ command: '/imagine', text: 'a cat --quality low', channel: 'C0TWO' });
    await finishedJob(first.fake, 'C0TWO');
    first.fake.deliverOverHttp(second.bot.url!);
    const replayed = await first.fake.replayLastDelivery();
    expect(replayed.status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(generations(first)).toHaveLength(1);
    expect(generations(second)).toHaveLength(0);
    expect(jobMessages(first.fake, 'C0TWO')).toHaveLength(1);
  });
});
