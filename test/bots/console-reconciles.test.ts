import { describe, expect, it, vi } from 'vitest';
import { startService } from '../../bots/main.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import { openQuotaStore } from '../../src/spend/open-store.js';
import type { QuotaStore } from '../../src/spend/types.js';
import { startChatFakes, startUpstream, surfaceEnv, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

// The service's ledger, as it opens it (its `onReconciled` included), seen by the test: a step can land while the console reads.
vi.mock('../../src/spend/open-store.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/spend/open-store.js')>();
  return { ...actual, openQuotaStore: vi.fn(actual.openQuotaStore) };
});

const defer = useCleanup();
const redis = testRedis();
const CONSOLE_TOKEN = 'console-reconciles-test-token-0123456789';

describe('the console of npm start, on a Redis ledger whose store ends a dead replica’s job by itself', () => {
  it.skipIf(redis.skipReason)('shows the job running or among the recent jobs when the store’s own step ends it while the page reads the records: never in neither list', async () => {
    const { discord } = await startChatFakes(defer);
    const upstream = await startUpstream(defer, 20);
    const dataDir = await tempDataDir(defer, 'pictor-console-reconciles-');
    const redisUrl = requireRedisUrl(redis);
    const prefix = uniquePrefix('console-reconciles');
    defer(() => deleteKeys(redisUrl, prefix));
    // The service's ledger; the step that ends the dead job lands once its records were read, before they are answered.
    let landNext = false;
    let ledger: QuotaStore | undefined;
    const { openQuotaStore: actualOpen } = await vi.importActual<typeof import('../../src/spend/open-store.js')>('../../src/spend/open-store.js');
    vi.mocked(openQuotaStore).mockImplementationOnce(async (options) => {
      const store = await actualOpen(options);
      ledger = store;
      const usageSince: QuotaStore['usageSince'] = async (cursor) => {
        const feed = await store.usageSince(cursor);
        if (landNext) {
          landNext = false;
          await store.reconcile(Date.now());
        }
        return feed;
      };
      return new Proxy(store, {
        get: (target, name) => {
          if (name === 'usageSince') return usageSince;
          const value: unknown = Reflect.get(target, name);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    });
    const service = await startService(
      {
        PICTOR_LOG_LEVEL: 'silent',
        PICTOR_DATA_DIR: dataDir,
        PICTOR_BASE_URL: upstream.url,
        PICTOR_API_KEY: DEV_API_KEY,
        PICTOR_CONSOLE_PORT: '0',
        PICTOR_CONSOLE_TOKEN: CONSOLE_TOKEN,
        REDIS_URL: redisUrl,
        PICTOR_REDIS_PREFIX: prefix,
        ...surfaceEnv({ discord }),
      },
      () => undefined,
    );
    defer(() => service.stop());
    expect(ledger).toBeDefined();
    const url = service.console!.url!;
    const login = await fetch(`${url}/login`, { method: 'POST', body: new URLSearchParams({ token: CONSOLE_TOKEN, next: '/jobs' }), redirect: 'manual', headers: { origin: url } });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const jobsPage = async () => (await fetch(`${url}/jobs`, { headers: { cookie } })).text();
    // The console's own reconcile runs now, then not again for 5 s: the store's step is the one that ends the job.
    expect(await jobsPage()).not.toContain('data-job="d-sent"');

    // A process that died with a sent job (another replica sharing the Redis ledger): its lease has lapsed.
    const storage = ledger!.storage;
    if (storage?.kind !== 'redis') throw new Error('expected the Redis ledger');
    const client = await connectRedis(redisUrl);
    defer(async () => client.disconnect());
    const dead = new RedisQuotaStore({ redis: client, prefix: storage.prefix, leaseMs: 60_000 });
    await dead.reserve({ jobId: 'd-sent', userKey: 'discord:1', scopeKey: 'discord:guild', estimateUsd: 0.5, limits: {}, now: Date.now() });
    await dead.markSent('d-sent');
    await dead.close(); // renews no more, as a killed process
    const [job] = await ledger!.activeJobs();
    await client.del(`${storage.prefix}:quota:owner:${job!.owner}`);
    landNext = true;
    expect(await jobsPage()).toContain('data-job="d-sent"'); // ended meanwhile: among the recent jobs
    expect(landNext).toBe(false);
    expect((await ledger!.usage({})).map((record) => record.jobId)).toEqual(['d-sent']);
  }, 30_000);
});
