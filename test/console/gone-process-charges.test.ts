import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startConsole } from '../../src/console/index.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { silentLogger } from '../../src/internal.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import type { LedgerOptions, QuotaStore, ReconcileReport } from '../../src/spend/types.js';
import { deleteKeys, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { NO_ALERTS, loginCookie, TOKEN } from './console-harness.js';
import { ledgerFixtures, operatorWith } from './ledger-fixtures.js';

const steps: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of steps.splice(0).reverse()) await step();
});
const { folder } = ledgerFixtures(steps, 'gone-charges');

const redis = testRedis();
let client: Redis | undefined;
beforeAll(async () => {
  if (redis.url) client = await connectRedis(redis.url);
});
afterAll(() => client?.disconnect());

/** Stores standing for processes that share one ledger, and how a killed one's lease lapses. */
interface Ledger {
  open(options: LedgerOptions): Promise<QuotaStore>;
  lapse(): Promise<void>;
}

const ledgers: Record<string, () => Promise<Ledger>> = {
  file: async () => {
    const dir = await folder();
    return {
      open: async (options) => {
        const store = new FileQuotaStore({ dir, ...options });
        await store.open();
        return store;
      },
      lapse: async () => undefined, // by the stores' clock, which the test moves
    };
  },
  redis: async () => {
    const prefix = uniquePrefix('console-gone');
    steps.push(() => deleteKeys(redis.url!, prefix));
    return {
      open: async (options) => new RedisQuotaStore({ redis: client!, prefix, ...options }),
      lapse: async () => {
        const owners = await client!.keys(`${prefix}:quota:owner:*`);
        if (owners.length > 0) await client!.del(...owners);
      },
    };
  },
};
const kinds = Object.keys(ledgers).filter((kind) => kind !== 'redis' || !redis.skipReason);

/** A process on the ledger that sent job d-sent, then was killed: its lease renews no more. Returns the stores' clock and lease. */
async function killedAfterSending(ledger: Ledger) {
  const storeTime = { now: Date.now() };
  const lease = { leaseMs: 60_000, clock: () => storeTime.now };
  const dead = await ledger.open(lease);
  await dead.reserve({ jobId: 'd-sent', userKey: 'discord:1', scopeKey: 'discord:guild', estimateUsd: 0.5, limits: {}, now: storeTime.now });
  await dead.markSent('d-sent');
  await dead.close(); // renews no more, as a killed process
  return { storeTime, lease };
}

describe.each(kinds)('the console on a %s ledger whose process died', (kind) => {
  it('tells onReconciled once what ending its sent job charged, whichever of the console’s reads and changes ended it', async () => {
    const ledger = await ledgers[kind]!();
    const { storeTime, lease } = await killedAfterSending(ledger);
    const reports: ReconcileReport[] = [];
    let tell: (() => void) | undefined;
    const store = await ledger.open({
      ...lease,
      onReconciled: (report) => {
        reports.push(report);
        tell?.();
      },
    });
    steps.push(() => store.close());
    // The console's own clock stays within its 5 s between reconciles: what ends the job is a read or a change.
    const consoleTime = { now: storeTime.now };
    const running = (await startConsole({
      source: { store, operator: operatorWith({}) },
      config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: true },
      alerts: NO_ALERTS,
      ledgerWhere: `a ${kind} ledger`,
      logger: silentLogger(),
      now: () => consoleTime.now,
      tellReconciles: (listener) => void (tell = listener),
    }))!;
    steps.push(() => running.close());
    const url = running.url!;
    const cookie = await loginCookie(url, '/spend');
    const spendPage = async () => expect((await fetch(`${url}/spend`, { headers: { cookie } })).status).toBe(200);

    await spendPage(); // its lease holds: nothing ends
    expect(reports).toEqual([]);
    storeTime.now += 60_001;
    await ledger.lapse();
    await spendPage(); // Redis ends it as it reads what each cap counts
    const settings = await (await fetch(`${url}/settings`, { headers: { cookie } })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(settings)![1]!;
    const resume = await fetch(`${url}/breaker/resume`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf, scope: 'discord:guild' }), redirect: 'manual', headers: { cookie, origin: url } });
    expect(resume.status).toBe(303); // the file ledger ends it as it writes the change
    consoleTime.now += 5_001;
    await spendPage(); // the console's own reconcile: nothing is left to end
    expect(reports).toEqual([{ released: [], settledAtEstimate: ['d-sent'], chargedUsd: 0.5 }]);
    expect((await store.usage({})).map((record) => [record.jobId, record.basis, record.costUsd])).toEqual([['d-sent', 'uncertain', 0.5]]);
  });
});

describe.each(kinds)('the console on a %s ledger whose store ends a dead process’s job by itself', (kind) => {
  it('shows the job running or among the recent jobs when the store’s own reconcile ends it while the page reads the records: never in neither list', async () => {
    const ledger = await ledgers[kind]!();
    const { storeTime, lease } = await killedAfterSending(ledger);
    // Opened as `pictor console` opens it: every step of the store that ends a dead process's reservations is told.
    let tell: (() => void) | undefined;
    const store = await ledger.open({ ...lease, onReconciled: () => tell?.() });
    steps.push(() => store.close());
    // The store's own reconcile (the one it runs each lease) lands once the records were read, before they are answered.
    let landNext = false;
    const usageSince: QuotaStore['usageSince'] = async (cursor) => {
      const feed = await store.usageSince(cursor);
      if (landNext) {
        landNext = false;
        await store.reconcile(storeTime.now);
      }
      return feed;
    };
    const seen = new Proxy(store, {
      get: (target, name) => {
        if (name === 'usageSince') return usageSince;
        const value: unknown = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    // The console's own clock stays within its 5 s between reconciles: the store's reconcile is the one that ends the job.
    const running = (await startConsole({
      source: { store: seen, operator: operatorWith({}) },
      config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: false },
      alerts: NO_ALERTS,
      ledgerWhere: `a ${kind} ledger`,
      logger: silentLogger(),
      now: () => 0,
      tellReconciles: (listener) => void (tell = listener),
    }))!;
    steps.push(() => running.close());
    const url = running.url!;
    const cookie = await loginCookie(url, '/jobs');
    const jobsPage = async () => (await fetch(`${url}/jobs`, { headers: { cookie } })).text();

    expect(await jobsPage()).toContain('data-job="d-sent"'); // running: its lease holds
    storeTime.now += 60_001;
    await ledger.lapse();
    landNext = true;
    expect(await jobsPage()).toContain('data-job="d-sent"'); // ended meanwhile: among the recent jobs
    expect(landNext).toBe(false);
    expect((await store.usage({})).map((record) => record.jobId)).toEqual(['d-sent']);
  });
});
