import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, DEV_API_KEY, type Emulator, type EmulatorServer } from '../../src/emulator/index.js';
import { startChildren } from '../helpers/shared-limits-fleet.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const redis = testRedis();

describe.skipIf(redis.skipReason)(`a process killed while it holds the shared slots ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  let emulator: Emulator;
  let server: EmulatorServer;
  let url: string;
  const prefix = uniquePrefix('killed');

  beforeAll(async () => {
    url = requireRedisUrl(redis);
    // Each request takes 2 s, so the slots are held while the process dies; images per minute are plenty.
    emulator = createEmulator({ imagesPerMinute: 600, latencyMs: 2000 });
    server = await emulator.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await server?.close();
    if (url) await deleteKeys(url, prefix);
  });

  it('does not starve the others: its slots expire, its queue tickets vanish, and the other two finish every job', async () => {
    const [doomed, a, b] = await startChildren(3, {
      redisUrl: url,
      prefix,
      baseURL: server.url,
      apiKey: DEV_API_KEY,
      imagesPerMinute: 600,
      maxConcurrent: 2,
      leaseMs: 3000,
    }, ['K', 'A', 'B']);
    const survivors = [a!, b!];
    try {
      // K takes both slots of the account and queues two more requests, then dies without a word.
      doomed!.run([0, 1, 2, 3].map((i) => ({ id: `K${i}`, n: 1 })));
      await doomed!.waitFor('two started jobs', (events) => events.filter((e) => e.type === 'started').length === 2);
      const ids = (name: string) => [0, 1, 2].map((i) => `${name}${i}`);
      for (const child of survivors) child.run(ids(child.name).map((id) => ({ id, n: 1 })));
      await Promise.all(survivors.map((c) => c.waitFor('its requests queued', (events) => events.some((e) => e.type === 'queued'))));
      doomed!.kill();

      await Promise.all(survivors.map((c) => c.finished(ids(c.name), 40_000)));
      for (const child of survivors) {
        expect(child.of('failed')).toEqual([]);
        expect(child.of('done').map((d) => d.id).sort()).toEqual(ids(child.name));
      }
      expect(doomed!.of('done')).toEqual([]);

      // The dead process's two waiting tickets no longer count (the survivors needed at least 6 s, more
      // than a ticket's 5 s life): a request queued now behind two of A's own sees its count reach 0.
      const later = [0, 1, 2].map((i) => ({ id: `A-later${i}`, n: 1 }));
      a!.run(later);
      await a!.finished(later.map((j) => j.id), 20_000);
      const lastPositions = a!.of('queued').filter((q) => q.id === 'A-later2').map((q) => q.ahead);
      expect(lastPositions).toContain(0);
      expect(Math.max(...lastPositions)).toBeLessThanOrEqual(2);
    } finally {
      doomed!.kill();
      await Promise.all(survivors.map((c) => c.stop()));
    }
  }, 120_000);
});
