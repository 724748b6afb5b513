import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileAlertLog, RedisAlertLog, type AlertLog } from '../../src/console/alerts/alert-log.js';
import type { Alert } from '../../src/console/alerts/channels.js';
import type { OperatorSettings } from '../../src/console/source.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import type { QuotaStore } from '../../src/spend/types.js';
import { deleteKeys, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { watchingAlerts } from './console-harness.js';
import { operatorWith, spend } from './ledger-fixtures.js';

/**
 * A cap whose amount changes within its period — a chat admin lowers a server's cap and clears it again, the operator
 * restarts with another amount — gets the warnings of each amount it has, once per amount, period and threshold, on the
 * file ledger and on Redis alike. The clock is the test's: the ledger, the usage index and the watcher all read it.
 */
const redis = testRedis();
const steps: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of steps.splice(0).reverse()) await step();
});

const GUILD = 'discord:guild';
const ADMIN = 'discord:100000000000000009';

/** A ledger and its alert log where the console keeps them: a data folder, or a Redis prefix. */
interface Ledger {
  store: QuotaStore;
  log: AlertLog;
}

const backends: Record<string, (now: () => number) => Promise<Ledger>> = {
  file: async (now) => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-alerts-cap-changes-'));
    steps.push(() => rm(dir, { recursive: true, force: true }));
    const store = new FileQuotaStore({ dir, clock: now });
    await store.open();
    steps.push(() => store.close());
    return { store, log: new FileAlertLog(dir) };
  },
  redis: async (now) => {
    const prefix = uniquePrefix('alerts-cap-changes');
    steps.push(() => deleteKeys(redis.url!, prefix));
    const store = await RedisQuotaStore.connect({ url: redis.url!, prefix }, { clock: now });
    steps.push(() => store.close());
    const storage = store.storage;
    if (storage.kind !== 'redis') throw new Error('a Redis ledger keeps its storage in Redis');
    return { store, log: new RedisAlertLog(storage.redis, storage.prefix) };
  },
};

/** A console process watching `ledger` with the operator's `operator`: restart by calling again with the same ledger. */
const watching = ({ store, log }: Ledger, operator: OperatorSettings, now: () => number) => watchingAlerts(steps, { store, log, operator, now });

/** What an alert said, in short: its trigger (a threshold's percent), of which amount. */
const said = (alerts: readonly Alert[]) => alerts.map((a) => `${a.cap?.trigger === 'threshold' ? a.cap.threshold : a.cap?.trigger} of $${a.cap?.limitUsd}`);

describe.each(Object.keys(backends).filter((kind) => kind !== 'redis' || !redis.skipReason))('alerts of a cap whose amount changes within its period (%s ledger)', (kind) => {
  it('warns before the operator’s cap of a server bites once a chat admin’s lower cap is cleared, having told the lower cap’s own event', async () => {
    let t = Date.UTC(2030, 5, 15, 10);
    const now = () => t;
    const ledger = await backends[kind]!(now);
    const { watcher, sent } = watching(ledger, operatorWith({ scopeDailyUsd: 10 }), now);
    await ledger.store.setCapOverride(GUILD, 'scopeDailyUsd', 1, ADMIN, t);
    // $0.85 of the admin's $1: $0.150 left, less than one image reserves.
    await spend(ledger.store, 'a', 'discord:1', GUILD, 0.85, t);
    t += 1000;
    await watcher.check();
    expect(said(sent)).toEqual(['full of $1']);
    await ledger.store.setCapOverride(GUILD, 'scopeDailyUsd', undefined, ADMIN, t);
    t += 1000;
    // $9.85 of the operator's $10: 98 %, and $0.150 left: it cannot take one more image, a warning before it refuses.
    await spend(ledger.store, 'b', 'discord:1', GUILD, 9, t);
    t += 1000;
    await watcher.check();
    expect(said(sent)).toEqual(['full of $1', 'full of $10']);
    expect(sent[1]!.cap).toMatchObject({ trigger: 'full', limitUsd: 10, usedUsd: 9.85, percent: 98 });
    t += 1000;
    expect(await watcher.check()).toEqual([]);
  });

  it('tells a cap that goes back and forth between two amounts once per amount, period and threshold', async () => {
    let t = Date.UTC(2030, 5, 15, 10);
    const now = () => t;
    const ledger = await backends[kind]!(now);
    const { watcher, sent } = watching(ledger, operatorWith({ scopeDailyUsd: 10 }), now);
    const setTo = async (usd: number | undefined) => {
      await ledger.store.setCapOverride(GUILD, 'scopeDailyUsd', usd, ADMIN, t);
      t += 1000;
      return watcher.check();
    };
    await spend(ledger.store, 'a', 'discord:1', GUILD, 3, t);
    expect(said(await setTo(5))).toEqual(['50 of $5']);
    // $3 of $10 (30 %), of $5 again, of $10 again: nothing new to tell.
    for (const usd of [undefined, 5, undefined, 5, undefined]) expect(await setTo(usd)).toEqual([]);
    // $5.50: past 50 % of $10, told once; back to $5 (used up), its refusal once; and back and forth again, nothing.
    await spend(ledger.store, 'b', 'discord:1', GUILD, 2.5, t);
    t += 1000;
    expect(said(await watcher.check())).toEqual(['50 of $10']);
    expect(said(await setTo(5))).toEqual(['100 of $5']);
    for (const usd of [undefined, 5, undefined]) expect(await setTo(usd)).toEqual([]);
    expect(said(sent)).toEqual(['50 of $5', '50 of $10', '100 of $5']);
  });

  it('tells a chat admin who changes the server’s cap ten times, each past what it has used, that its jobs are refused once', async () => {
    let t = Date.UTC(2030, 5, 15, 10);
    const now = () => t;
    const ledger = await backends[kind]!(now);
    const { watcher, sent } = watching(ledger, operatorWith({ scopeDailyUsd: 10 }), now);
    await spend(ledger.store, 'a', 'discord:1', GUILD, 3, t);
    // $3 used: $2.00, $2.01 … $2.09 all refuse its jobs, which the first alert said; the spend has not moved.
    for (let i = 0; i < 10; i++) {
      await ledger.store.setCapOverride(GUILD, 'scopeDailyUsd', 2 + i / 100, ADMIN, t);
      t += 1000;
      await watcher.check();
    }
    expect(said(sent)).toEqual(['100 of $2']);
    // Raised past what it has used: $3 of $4 (75 %) passes no threshold that $3 of $2 did not; used up again, that is news.
    await ledger.store.setCapOverride(GUILD, 'scopeDailyUsd', 4, ADMIN, t);
    t += 1000;
    expect(await watcher.check()).toEqual([]);
    await spend(ledger.store, 'b', 'discord:1', GUILD, 1, t);
    t += 1000;
    expect(said(await watcher.check())).toEqual(['100 of $4']);
  });

  it('tells a cap lowered below what was told only of the events the lower amount brings', async () => {
    let t = Date.UTC(2030, 5, 15, 10);
    const now = () => t;
    const ledger = await backends[kind]!(now);
    const { watcher, sent } = watching(ledger, operatorWith({ scopeDailyUsd: 10 }), now);
    const setTo = async (usd: number) => {
      await ledger.store.setCapOverride(GUILD, 'scopeDailyUsd', usd, ADMIN, t);
      t += 1000;
      return said(await watcher.check());
    };
    await spend(ledger.store, 'a', 'discord:1', GUILD, 5.5, t);
    // $5.50 of the operator's $10, no admin's cap set: past 50 %.
    t += 1000;
    expect(said(await watcher.check())).toEqual(['50 of $10']);
    // $5.50 of $6 (91 %): past 80 %, never told this period.
    expect(await setTo(6)).toEqual(['80 of $6']);
    // $5.50 of $5.80 (94 %): past 80 % still, told at $6 with the same $5.50 used.
    expect(await setTo(5.8)).toEqual([]);
    // $5.50 of $5: its jobs are refused, new.
    expect(await setTo(5)).toEqual(['100 of $5']);
    expect(await setTo(4)).toEqual([]);
    expect(said(sent)).toEqual(['50 of $10', '80 of $6', '100 of $5']);
  });

  it('tells an operator’s cap raised by a restart mid-period of its new amount’s thresholds, the highest passed once', async () => {
    let t = Date.UTC(2030, 5, 15, 10);
    const now = () => t;
    const ledger = await backends[kind]!(now);
    const first = watching(ledger, operatorWith({ accountDailyUsd: 10 }), now);
    await spend(ledger.store, 'a', 'cli:me', 'cli', 8.5, t);
    t += 1000;
    await first.watcher.check();
    expect(said(first.sent)).toEqual(['80 of $10']);
    await first.watcher.stop();
    // A restart with $20: $8.50 is 42 % of it, nothing to tell.
    const second = watching(ledger, operatorWith({ accountDailyUsd: 20 }), now);
    t += 1000;
    expect(await second.watcher.check()).toEqual([]);
    // $17 of $20: past 50 and 80 % of the new amount at once; only 80 % is sent, once.
    await spend(ledger.store, 'b', 'cli:me', 'cli', 8.5, t);
    t += 1000;
    expect(said(await second.watcher.check())).toEqual(['80 of $20']);
    t += 1000;
    expect(await second.watcher.check()).toEqual([]);
  });
});
