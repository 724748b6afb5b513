import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startConsole } from '../../src/console/index.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import { startThrowawayRedis } from '../setup/redis-server.js';
import { requireRedisUrl, testRedis } from '../helpers/shared-limits-redis.js';
import { NO_ALERTS, NO_DEAD_PROCESSES, TOKEN } from './console-harness.js';

// A Redis of its own, stopped and started again under the console. Skipped without redis-server (failed in CI).
const present = testRedis();
const redis = present.skipReason ? undefined : (requireRedisUrl(present), await startThrowawayRedis());

describe.skipIf(present.skipReason)(`the console with its ledger out of reach ${present.skipReason ? `(${present.skipReason})` : ''}`, () => {
  it('answers each page 503 "the ledger cannot be reached" within its wait, logs it, and asks again at the next page', async () => {
    const store = await RedisQuotaStore.connect({ url: redis!.url, prefix: 'pictor-unreachable' });
    const warnings: string[] = [];
    const logger = { debug: () => {}, info: () => {}, error: () => {}, warn: (_fields: object, message?: string) => void warnings.push(message ?? '') };
    const consoleWaiting = (ledgerWaitMs?: number) =>
      startConsole({
        source: { store, operator: { caps: { accountDailyUsd: 2 }, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' } },
        config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: false },
        alerts: NO_ALERTS,
        ledgerWhere: 'the account’s Redis ledger (prefix pictor-unreachable)',
        logger,
        ledgerWaitMs,
        tellReconciles: NO_DEAD_PROCESSES,
      });
    // The console as it runs (its 5 s wait), and one over the same ledger that waits not at all: Redis gone, a page of
    // it answers 503 at once, whatever the clock says (a read of Redis cannot answer in no time).
    const running = (await consoleWaiting())!;
    const impatient = (await consoleWaiting(0))!;
    const logIn = async (url: string) => {
      const login = await fetch(`${url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }), redirect: 'manual', headers: { origin: url } });
      return login.headers.get('set-cookie')!.split(';')[0]!;
    };
    try {
      const cookie = await logIn(running.url!);
      const impatientCookie = await logIn(impatient.url!);
      expect((await fetch(`${running.url}/spend`, { headers: { cookie } })).status).toBe(200);

      // Redis goes away (its process ends), to come back later on the same port.
      const admin = new Redis(redis!.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      await admin.connect();
      await admin.shutdown('NOSAVE').catch(() => undefined);
      admin.disconnect();
      for (const path of ['/spend', '/settings']) {
        const res = await fetch(`${impatient.url}${path}`, { headers: { cookie: impatientCookie } });
        expect(res.status, path).toBe(503);
        const body = await res.text();
        expect(body).toContain('<h1>The ledger cannot be reached</h1>');
        expect(body).toContain('the account’s Redis ledger (prefix pictor-unreachable)');
      }
      expect(warnings.filter((w) => w.includes('could not reach the ledger in time'))).toHaveLength(2);

      // Back: the next page asks again, and is answered.
      await redis!.restart();
      await expect.poll(async () => (await fetch(`${running.url}/spend`, { headers: { cookie } })).status, { timeout: 20_000 }).toBe(200);
      await redis!.stop();
    } finally {
      // All it opened is closed before the test ends (test files share a worker): the store's client, which Redis being
      // gone leaves retrying, and Redis itself when a failure came before it was stopped.
      await running.close();
      await impatient.close();
      await store.close();
      await redis!.stop();
    }
  });
});
