import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileQuotaStore, JobRunner, type JobUpdate, type Requester } from '../../bots/runner/index.js';
import { QUEUE_TROUBLE_NOTICE } from '../../bots/runner/JobRunner.js';
import { PictorClient } from '../../src/index.js';
import { createImageLimiter } from '../../src/internal.js';
import { createEmulator, DEV_API_KEY } from '../../src/emulator/index.js';
import { startCuttableLink, type CuttableLink } from '../helpers/shared-limits-proxy.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const redis = testRedis();
const requester: Requester = { platform: 'slack', userId: 'U1', channelId: 'C1', scopeId: 'T1' };

describe.skipIf(redis.skipReason)(`a chat job waiting while Redis is lost ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  let link: CuttableLink;
  let url: string;
  const prefix = uniquePrefix('runner-outage');
  beforeAll(async () => {
    url = requireRedisUrl(redis);
    link = await startCuttableLink(url);
  });
  afterAll(async () => {
    await link?.close();
    if (url) await deleteKeys(url, prefix);
  });

  it('tells the user why it waits, keeps its place, and finishes once Redis is back', async () => {
    const emulator = createEmulator({ latencyMs: 600 });
    const server = await emulator.listen({ port: 0 });
    const dir = await mkdtemp(join(tmpdir(), 'pictor-outage-'));
    const limiter = await createImageLimiter({ maxConcurrent: 1, redis: { url: link.url, prefix } });
    const store = new FileQuotaStore({ dir });
    const runner = new JobRunner({ client: new PictorClient({ baseURL: server.url, apiKey: DEV_API_KEY, limiter }), store, limits: {}, minUpdateIntervalMs: 0, partialImages: 0 });
    try {
      const first: JobUpdate[] = [];
      const second: JobUpdate[] = [];
      const a = await runner.submit({ kind: 'generate', prompt: 'first', options: { quality: 'low' }, requester }, (u) => void first.push(u));
      await expect.poll(() => first.some((u) => u.type === 'started'), { timeout: 10_000 }).toBe(true);
      const b = await runner.submit({ kind: 'generate', prompt: 'second', options: { quality: 'low' }, requester: { ...requester, userId: 'U2' } }, (u) => void second.push(u));
      await expect.poll(() => second.some((u) => u.type === 'queued'), { timeout: 10_000 }).toBe(true);

      link.cut();
      await expect.poll(() => second.some((u) => u.type === 'queued' && u.notice === QUEUE_TROUBLE_NOTICE), { timeout: 10_000 }).toBe(true);
      link.restore();

      expect((await a.done).type).toBe('completed');
      expect((await b.done).type).toBe('completed');
      expect(emulator.stats().imagesGenerated).toBe(2);
    } finally {
      await runner.shutdown({ graceMs: 1000 });
      await store.close();
      await limiter.stop();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
