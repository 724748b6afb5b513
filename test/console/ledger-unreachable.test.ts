import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startConsole } from '../../src/console/index.js';
import { LEDGER_WAIT_MS } from '../../src/console/server.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import { startThrowawayRedis } from '../setup/redis-server.js';
import { requireRedisUrl, testRedis } from '../helpers/shared-limits-redis.js';
import { NO_ALERTS, TOKEN } from './console-harness.js';

// A Redis of its own, stopped and started again under the console. Skipped without redis-server (failed in CI).
const present = testRedis();
const redis = present.skipReason ? undefined : (requireRedisUrl(present), await startThrowawayRedis());

afterEach(() => {
  vi.useRealTimers();
});

/**
 * The answer to `answer` once the console's wait for the ledger has run out: the clock is moved on by the console's wait
 * until the page has answered (the request reaches the console, and its wait starts, when the event loop says).
 */
async function pastTheWait(answer: Promise<Response>): Promise<Response> {
  let res: Response | undefined;
  void answer.then((r) => (res = r));
  await vi.waitFor(async () => {
    await vi.advanceTimersByTimeAsync(LEDGER_WAIT_MS);
    expect(res).toBeDefined();
  });
  return answer;
}

describe.skipIf(present.skipReason)(`the console with its ledger out of reach ${present.skipReason ? `(${present.skipReason})` : ''}`, () => {
  it('answers each page 503 "the ledger cannot be reached" within its wait, logs it, and asks again at the next page', async () => {
    const store = await RedisQuotaStore.connect({ url: redis!.url, prefix: 'pictor-unreachable' });
    const warnings: string[] = [];
    const logger = { debug: () => {}, info: () => {}, error: () => {}, warn: (_fields: object, message?: string) => void warnings.push(message ?? '') };
    const running = (await startConsole({
      source: { store, operator: { caps: { accountDailyUsd: 2 }, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' } },
      config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: false },
      alerts: NO_ALERTS,
      ledgerWhere: 'the account’s Redis ledger (prefix pictor-unreachable)',
      logger,
    }))!;
    try {
      const login = await fetch(`${running.url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }), redirect: 'manual', headers: { origin: running.url! } });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      expect((await fetch(`${running.url}/spend`, { headers: { cookie } })).status).toBe(200);

      // Redis goes away (its process ends), to come back later on the same port.
      const admin = new Redis(redis!.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      await admin.connect();
      await admin.shutdown('NOSAVE').catch(() => undefined);
      admin.disconnect();
      // The console's own wait (5 s), on a clock the test moves: no real time passes.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      for (const path of ['/spend', '/settings']) {
        const res = await pastTheWait(fetch(`${running.url}${path}`, { headers: { cookie } }));
        expect(res.status, path).toBe(503);
        const body = await res.text();
        expect(body).toContain('<h1>The ledger cannot be reached</h1>');
        expect(body).toContain('the account’s Redis ledger (prefix pictor-unreachable)');
      }
      expect(warnings.filter((w) => w.includes('could not reach the ledger in time'))).toHaveLength(2);

      vi.useRealTimers();
      // Back: the next page asks again, and is answered.
      await redis!.restart();
      await expect.poll(async () => (await fetch(`${running.url}/spend`, { headers: { cookie } })).status, { timeout: 20_000 }).toBe(200);
      await redis!.stop();
    } finally {
      // All it opened is closed before the test ends (test files share a worker): the store's client, which Redis being
      // gone leaves retrying, and Redis itself when a failure came before it was stopped.
      await running.close();
      await store.close();
      await redis!.stop();
    }
  });
});
