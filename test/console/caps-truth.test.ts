import { readFile, rm, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryAlertLog } from '../../src/console/alerts/alert-log.js';
import { spendFigures } from '../../src/console/figures.js';
import { startConsole } from '../../src/console/index.js';
import { UsageIndex } from '../../src/console/usage-index.js';
import { estimateOf } from '../../src/core/pricing.js';
import { silentLogger } from '../../src/internal.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import type { ScopeRoleBudgets } from '../../src/spend/role-budgets.js';
import type { OperatorSettings } from '../../src/console/source.js';
import { ledgerFixtures, operatorWith, spend } from './ledger-fixtures.js';
import { NO_ALERTS, NO_DEAD_PROCESSES, loginCookie, TOKEN, watchingAlerts } from './console-harness.js';
import { LEDGER_WAIT_MS } from '../../src/console/server.js';
import { newestUsageFile, writeUsageDays } from '../helpers/usage-days.js';

const steps: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of steps.splice(0).reverse()) await step();
});

const DAY_MS = 86_400_000;

const { folder, opened } = ledgerFixtures(steps, 'caps');

async function figuresOf(store: FileQuotaStore, operator: OperatorSettings, now: number, roleBudgets?: Parameters<typeof spendFigures>[0]['roleBudgets']) {
  const index = new UsageIndex({ readWaitMs: LEDGER_WAIT_MS, store, now: () => now });
  await index.refresh();
  const [active, overrides] = await Promise.all([store.activeJobs(), store.allCapOverrides()]);
  return spendFigures({ index, operator, active, overrides, refusals: {}, now, chartDays: 1, ledger: store, roleBudgets });
}

/** The spend page as the console serves it at `now`. */
/** A logger that keeps its warnings and infos in `logged`, each as `warn …` or `info …`. */
const loggingTo = (logged: string[]) => ({
  ...silentLogger(),
  warn: (_fields: object, message?: string) => void logged.push(`warn ${message}`),
  info: (_fields: object, message?: string) => void logged.push(`info ${message}`),
});

/**
 * A ledger kept 7 days, at `now`: it settled $0.40 of `cli:owner` ten days before (whose usage record the retention has
 * dropped since) and $0.05 of theirs now (its record kept).
 */
async function ledgerPastRetention(now: number): Promise<FileQuotaStore> {
  const dir = await folder();
  const then = now - 10 * DAY_MS;
  const old = new FileQuotaStore({ dir, clock: () => then, usageRetentionDays: 7 });
  await old.open();
  await spend(old, 'old', 'cli:owner', 'cli', 0.4, then);
  await old.close();
  const writer = await opened(new FileQuotaStore({ dir, clock: () => now, usageRetentionDays: 7 }));
  await spend(writer, 'new', 'cli:owner', 'cli', 0.05, now);
  // The day's first commit starts the clean-up of records past retention behind its answers; a closed store finished it.
  await writer.close();
  return opened(new FileQuotaStore({ dir, clock: () => now, usageRetentionDays: 7 }));
}

async function spendPageOf(store: FileQuotaStore, operator: OperatorSettings, now: number): Promise<string> {
  const running = await startConsole({
    source: { store, operator },
    config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: false },
    alerts: NO_ALERTS,
    ledgerWhere: 'a file ledger',
    logger: silentLogger(),
    now: () => now,
    tellReconciles: NO_DEAD_PROCESSES,
  });
  steps.push(() => running!.close());
  const url = running!.url!;
  const cookie = await loginCookie(url, '/spend');
  return (await fetch(`${url}/spend`, { headers: { cookie } })).text();
}

/** The value of the figure `name` on a page (`data-figure`). */
function figureIn(page: string, name: string): number | undefined {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const found = new RegExp(`<data value="([^"]*)"[^>]*data-figure="${escaped}"`).exec(page);
  return found ? Number(found[1]) : undefined;
}

const watching = (store: FileQuotaStore, operator: OperatorSettings, now: () => number, roleBudgets?: Record<string, ScopeRoleBudgets>) =>
  watchingAlerts(steps, { store, log: new MemoryAlertLog(), operator, now, roleBudgets });

/** A process with a 1 s lease on the ledger in `dir` that runs `work` (reserving and sending a job, say), then is killed: it renews its lease no more. */
async function killedAfter(dir: string, work: (dead: FileQuotaStore) => Promise<void>): Promise<void> {
  const dead = new FileQuotaStore({ dir, leaseMs: 1_000 });
  await dead.open();
  await work(dead);
  await dead.close(); // stops renewing its lease, as a killed process does
}

/**
 * The console's page at `path` over the ledger in `dir`, logged in at `start` while the dead process's lease holds and
 * loaded for the first time once it lapsed; with the store the console reads (its reconciles told as `pictor console` tells them).
 */
async function firstLoadAfterLapse(dir: string, start: number, operator: OperatorSettings, path: string): Promise<{ store: FileQuotaStore; page: string }> {
  let now = start;
  let tell: (() => void) | undefined;
  const store = await opened(new FileQuotaStore({ dir, leaseMs: 1_000, clock: () => now, onReconciled: () => tell?.() }));
  const running = await startConsole({
    source: { store, operator },
    config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: false },
    alerts: NO_ALERTS,
    ledgerWhere: 'a file ledger',
    logger: silentLogger(),
    now: () => now,
    tellReconciles: (listener) => void (tell = listener),
  });
  steps.push(() => running!.close());
  const url = running!.url!;
  const cookie = await loginCookie(url, path);
  now = start + 5_000; // the lease lapsed
  return { store, page: await (await fetch(`${url}${path}`, { headers: { cookie } })).text() };
}

describe('the caps as the console shows them and alerts of them', () => {
  it('alerts once that a cap cannot take one more image while it is below 100 %, one message for the event, claiming no refusal', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    let now = Date.now();
    const limits = { scopeDailyUsd: 0.3 };
    await spend(store, 'a', 'discord:1', 'discord:guild', 0.1, now);
    await spend(store, 'b', 'discord:1', 'discord:guild', 0.1, now);
    const { watcher, sent } = watching(store, operatorWith(limits), () => now);
    await watcher.check();
    // 66.7 % (said 66 %, rounded down): past 50, and $0.100 is left, less than a job of one image reserves: one alert, not a threshold's as well.
    expect(sent.map((a) => a.id)).toEqual([expect.stringMatching(/^cap:scope:discord:guild:day:[\d-]+:0\.3usd:full$/)]);
    expect(sent[0]!.cap).toMatchObject({ trigger: 'full', usedUsd: 0.2, leftUsd: 0.1, percent: 66 });
    expect(sent[0]!.text).toMatch(/its daily cap cannot take one more image \(a job reserves up to \$0\.224\)\. It has used \$0\.200 of its daily cap of \$0\.300 \(66 %/);
    expect(sent[0]!.text).not.toMatch(/refus/);
    expect(await watcher.check()).toEqual([]);
    // The same cap used up later in the period: its 100 % counts as sent, and the refusal is told once, on its own.
    await spend(store, 'c', 'discord:2', 'discord:guild', 0.1, now);
    now += 1;
    expect((await watcher.check()).map((a) => a.id)).toEqual([expect.stringMatching(/^cap:scope:discord:guild:day:[\d-]+:0\.3usd:refused$/)]);
    now += 1;
    expect(await watcher.check()).toEqual([]);
  });

  it('says a cap cannot take one more image only when the spend guard would refuse that image (to the nano-dollar, not by float subtraction)', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    const now = Date.now();
    const oneImage = estimateOf({ operation: 'generate', n: 1 }).totalUsd;
    // $1 − $0.77634 is 0.22365999999999997 in floats: exactly one image left, which the guard reserves.
    const limits = { accountDailyUsd: 1 };
    await spend(store, 'a', 'discord:1', 'discord:guild', 1 - oneImage, now);
    const { watcher, sent } = watching(store, operatorWith(limits), () => now);
    await watcher.check();
    expect(sent.map((a) => a.cap?.trigger)).toEqual(['threshold']);
    expect(sent[0]!.text).not.toMatch(/cannot take one more image|Its jobs are refused/);
    expect(await store.reserve({ jobId: 'b', userKey: 'discord:1', scopeKey: 'discord:guild', estimateUsd: oneImage, limits, now })).toEqual({ ok: true });
  });

  it('tells once a cap that refuses its cheapest job that it refuses, though its 80 % alert went out and its percent shows 99', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    let now = Date.now();
    const limits = { accountDailyUsd: 10 };
    await spend(store, 'a', 'discord:1', 'discord:guild', 8, now);
    const { watcher, sent } = watching(store, operatorWith(limits), () => now);
    await watcher.check();
    expect(sent.map((a) => a.id)).toEqual([expect.stringMatching(/^cap:account:account:day:[\d-]+:10usd:80$/)]);
    // $9.996 of $10: said 99 %, and $0.004 left, less than the cheapest image: the guard refuses every job.
    await spend(store, 'b', 'discord:1', 'discord:guild', 1.996, now);
    now += 1;
    await watcher.check();
    expect(sent.map((a) => a.id)).toEqual([expect.stringMatching(/:80$/), expect.stringMatching(/^cap:account:account:day:[\d-]+:10usd:refused$/)]);
    expect(sent[1]!.cap).toMatchObject({ trigger: 'refused', percent: 99, threshold: 80, leftUsd: 0.004 });
    expect(sent[1]!.text).toMatch(/the whole account: its daily cap refuses its jobs: not even the cheapest image \(\$0\.0053\) fits in what is left\. It has used \$10\.00 of its daily cap of \$10\.00 \(99 %/);
    expect(await store.reserve({ jobId: 'c', userKey: 'discord:1', scopeKey: 'discord:guild', estimateUsd: 0.0053, limits, now })).toMatchObject({ ok: false });
    // Once per period: checked again, and reaching 100 % later, nothing more.
    now += 1;
    expect(await watcher.check()).toEqual([]);
    await spend(store, 'd', 'discord:1', 'discord:guild', 0.004, now);
    now += 1;
    expect(await watcher.check()).toEqual([]);
    expect(sent).toHaveLength(2);
  });

  it('tells a cap that could not take one more image, and later refuses its jobs, both: once each', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    let now = Date.now();
    const limits = { accountDailyUsd: 10 };
    await spend(store, 'a', 'discord:1', 'discord:guild', 9.9, now);
    const { watcher, sent } = watching(store, operatorWith(limits), () => now);
    await watcher.check();
    // $9.90 of $10: $0.100 left, less than one image of quality auto reserves, more than the cheapest image.
    expect(sent.map((a) => a.id)).toEqual([expect.stringMatching(/^cap:account:account:day:[\d-]+:10usd:full$/)]);
    expect(sent[0]!.text).toMatch(/its daily cap cannot take one more image/);
    // Low-quality jobs bring it to $9.996: $0.004 left, the guard refuses every job.
    await spend(store, 'b', 'discord:1', 'discord:guild', 0.096, now);
    now += 1;
    await watcher.check();
    expect(sent.map((a) => a.id)).toEqual([expect.stringMatching(/:full$/), expect.stringMatching(/^cap:account:account:day:[\d-]+:10usd:refused$/)]);
    expect(sent[1]!.text).toMatch(/the whole account: its daily cap refuses its jobs: not even the cheapest image \(\$0\.0053\) fits in what is left\. It has used \$10\.00 of its daily cap of \$10\.00 \(99 %/);
    expect(await store.reserve({ jobId: 'c', userKey: 'discord:1', scopeKey: 'discord:guild', estimateUsd: 0.0053, limits, now })).toMatchObject({ ok: false });
    // Once each: checked again, and reaching 100 % later, nothing more.
    now += 1;
    expect(await watcher.check()).toEqual([]);
    await spend(store, 'd', 'discord:1', 'discord:guild', 0.004, now);
    now += 1;
    expect(await watcher.check()).toEqual([]);
    expect(sent).toHaveLength(2);
  });

  it('tells a small cap that could not take one more image, and later in the same period refuses its jobs below its first threshold, both: once each', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    let now = Date.now();
    const limits = { accountDailyUsd: 0.01 };
    await spend(store, 'a', 'discord:1', 'discord:guild', 0.001, now);
    const { watcher, sent } = watching(store, operatorWith(limits), () => now);
    await watcher.check();
    // $0.001 of $0.01 (10 %): less left than one image of quality auto reserves, more than the cheapest image.
    expect(sent.map((a) => a.id)).toEqual([expect.stringMatching(/^cap:account:account:day:[\d-]+:0\.01usd:full$/)]);
    // $0.0048 (48 %, no threshold passed): $0.0052 left, the guard refuses every job.
    await spend(store, 'b', 'discord:1', 'discord:guild', 0.0038, now);
    now += 1;
    await watcher.check();
    expect(sent.map((a) => a.id)).toEqual([expect.stringMatching(/:full$/), expect.stringMatching(/^cap:account:account:day:[\d-]+:0\.01usd:refused$/)]);
    expect(sent[1]!.cap).toMatchObject({ trigger: 'refused', percent: 48, threshold: 0 });
    expect(sent[1]!.text).toMatch(/its daily cap refuses its jobs: not even the cheapest image \(\$0\.0053\) fits in what is left/);
    expect(await store.reserve({ jobId: 'c', userKey: 'discord:1', scopeKey: 'discord:guild', estimateUsd: 0.0053, limits, now })).toMatchObject({ ok: false });
    now += 1;
    expect(await watcher.check()).toEqual([]);
  });

  it.each([
    ['passed a threshold', 2, 1.04, ':50', 'threshold', /has used \$1\.04 of its daily cap of \$2\.00 \(52 %, past 50 %/],
    ['cannot take one more image', 10, 9.9, ':full', 'full', /its daily cap cannot take one more image/],
    ['refuses its jobs', 0.01, 0.0048, ':refused', 'refused', /its daily cap refuses its jobs/],
  ] as const)('gives the alert of a cap that %s its own id and trigger', async (_event, capUsd, spentUsd, id, trigger, says) => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    const now = Date.now();
    await spend(store, 'a', 'discord:1', 'discord:guild', spentUsd, now);
    const { watcher, sent } = watching(store, operatorWith({ accountDailyUsd: capUsd }), () => now);
    await watcher.check();
    expect(sent.map((a) => a.id)).toEqual([expect.stringMatching(new RegExp(`^cap:account:account:day:[\\d-]+:${String(capUsd).replace('.', '\\.')}usd${id}$`))]);
    expect(sent[0]!.cap?.trigger).toBe(trigger);
    expect(sent[0]!.text).toMatch(says);
  });

  it('gives up a check whose ledger read stalls (nothing sent, said once in the log), and the next check alerts once the ledger answers', async () => {
    const dir = await folder();
    /** A file ledger whose usage records are not answered while `stalled` is set. */
    class StallingStore extends FileQuotaStore {
      stalled = false;
      override usageSince(cursor?: string) {
        return this.stalled ? new Promise<never>(() => undefined) : super.usageSince(cursor);
      }
    }
    const store = (await opened(new StallingStore({ dir }))) as StallingStore;
    const now = Date.now();
    await spend(store, 'a', 'discord:1', 'discord:guild', 9.9, now);
    const logged: string[] = [];
    const { watcher, sent } = watchingAlerts(steps, { store, log: new MemoryAlertLog(), operator: operatorWith({ accountDailyUsd: 10 }), now: () => now, logger: loggingTo(logged) });
    store.stalled = true;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      for (let i = 0; i < 2; i++) {
        const checking = watcher.check();
        await vi.advanceTimersByTimeAsync(LEDGER_WAIT_MS);
        expect(await checking).toEqual([]);
      }
    } finally {
      vi.useRealTimers();
    }
    expect(logged).toEqual(['warn the alert check had no answer from the ledger in time: nothing is sent until it answers; the next check asks again']);
    store.stalled = false;
    expect((await watcher.check()).map((a) => a.cap?.trigger)).toEqual(['full']);
    expect(sent).toHaveLength(1);
    expect(logged.slice(1, 2)).toEqual(['info the alert check reads the ledger again']);
  });

  it('waits for the bots’ role budgets apart from the ledger, and names them, not the ledger, when they do not answer in time', async () => {
    const dir = await folder();
    /** A file ledger that says when a check's reads of it are done (the refusals are read last). */
    class ReadStore extends FileQuotaStore {
      onRead = () => {};
      override async refusals(since: string) {
        const refusals = await super.refusals(since);
        this.onRead();
        return refusals;
      }
    }
    const store = (await opened(new ReadStore({ dir }))) as ReadStore;
    const now = Date.now();
    await spend(store, 'a', 'discord:1', 'discord:guild', 5.5, now);
    let rolesAnswer = false;
    const logged: string[] = [];
    const { watcher, sent } = watchingAlerts(steps, {
      store,
      log: new MemoryAlertLog(),
      operator: operatorWith({ accountDailyUsd: 10 }),
      now: () => now,
      roleBudgets: () => (rolesAnswer ? Promise.resolve({}) : new Promise<never>(() => undefined)),
      logger: loggingTo(logged),
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const ledgerRead = new Promise<void>((done) => (store.onRead = done));
      const checking = watcher.check();
      // The ledger answered in time; the role budgets do not.
      await ledgerRead;
      await vi.advanceTimersByTimeAsync(LEDGER_WAIT_MS);
      expect(await checking).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
    expect(logged).toEqual(['warn the alert check had no answer from the bots’ role budgets in time: nothing is sent until it answers; the next check asks again']);
    rolesAnswer = true;
    expect((await watcher.check()).map((a) => a.cap?.threshold)).toEqual([50]);
    expect(sent).toHaveLength(1);
    expect(logged.slice(1, 2)).toEqual(['info the alert check reads the ledger again']);
  });

  it('gives up a check whose claim the alert log does not answer (said once in the log), the next check still runs, and the alert goes out once the stalled claim lapses', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    let now = Date.now();
    await spend(store, 'a', 'discord:1', 'discord:guild', 5.5, now);
    /** An alert log whose claims wait while `stalled` is set (as Redis queues them while it is down), made once it answers. */
    class StallingLog extends MemoryAlertLog {
      stalled = false;
      claims = 0;
      /** Called at each claim. */
      onClaim = () => {};
      readonly #waiting: (() => void)[] = [];
      override claim(keys: readonly string[], at: number, leaseMs: number): Promise<Set<string>> {
        this.claims++;
        this.onClaim();
        if (!this.stalled) return super.claim(keys, at, leaseMs);
        return new Promise((answer) => this.#waiting.push(() => answer(super.claim(keys, at, leaseMs))));
      }
      answer(): void {
        this.stalled = false;
        for (const claim of this.#waiting.splice(0)) claim();
      }
    }
    const log = new StallingLog();
    const logged: string[] = [];
    const { watcher, sent } = watchingAlerts(steps, { store, log, operator: operatorWith({ accountDailyUsd: 10 }), now: () => now, logger: loggingTo(logged) });
    log.stalled = true;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      for (let i = 1; i <= 2; i++) {
        const asked = new Promise<void>((claimed) => (log.onClaim = claimed));
        const checking = watcher.check();
        // The reads answered; the claim does not.
        await asked;
        await vi.advanceTimersByTimeAsync(LEDGER_WAIT_MS);
        // The check has ended: the next one runs.
        expect(await Promise.race([checking, Promise.resolve('still waiting for the claim')])).toEqual([]);
        expect(log.claims).toBe(i);
      }
    } finally {
      vi.useRealTimers();
    }
    expect(sent).toEqual([]);
    expect(logged).toEqual(['warn the alert check had no answer from the alert log in time: nothing is sent until it answers; the next check asks again']);
    // The alert log answers: the stalled claims are made late, and hold the alert for their minute.
    log.answer();
    now += 1;
    expect(await watcher.check()).toEqual([]);
    // Their minute past, the alert goes out, from the figures read then.
    await spend(store, 'b', 'discord:1', 'discord:guild', 3, now);
    now += 61_000;
    expect((await watcher.check()).map((a) => a.cap?.threshold)).toEqual([80]);
    expect(sent).toHaveLength(1);
  });

  it('tells a cap that refuses its jobs once, with its highest threshold when that is new: one message, not a second for the event', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    let now = Date.now();
    const limits = { accountDailyUsd: 10 };
    await spend(store, 'a', 'discord:1', 'discord:guild', 9.996, now);
    const { watcher, sent } = watching(store, operatorWith(limits), () => now);
    await watcher.check();
    expect(sent.map((a) => a.cap?.threshold)).toEqual([80]);
    expect(sent[0]!.cap?.trigger).toBe('threshold');
    expect(sent[0]!.text).toContain('Its jobs are refused until the cap resets');
    now += 1;
    expect(await watcher.check()).toEqual([]);
  });

  it('says a cap cannot take one more image only of the cap that is that full, whatever a cap of its kind refused: no count, no fullest one', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    const now = Date.now();
    const operator = operatorWith({ userDailyUsd: 1 });
    // User A was refused earlier today by their daily cap; user B has used 3 % of theirs.
    await spend(store, 'a', 'discord:a', 'discord:guild', 0.9, now);
    expect(await store.reserve({ jobId: 'a2', userKey: 'discord:a', scopeKey: 'discord:guild', estimateUsd: 0.22366, limits: operator.caps, now })).toMatchObject({ ok: false, code: 'budget_user_daily' });
    await store.countRefusals({ budget_user_daily: 1 }, now);
    await store.release('a2');
    await spend(store, 'b', 'discord:b', 'discord:guild', 0.03, now);
    const { watcher, sent } = watching(store, operator, () => now);
    await watcher.check();
    expect(sent.map((a) => `${a.cap?.key} ${a.cap?.trigger}`)).toEqual(['discord:a full']);
    // Later B comes within one image of their cap: told so, and not that a job was refused.
    await spend(store, 'b2', 'discord:b', 'discord:guild', 0.8, now);
    await watcher.check();
    const b = sent.find((a) => a.cap?.key === 'discord:b')!;
    expect(b.cap).toMatchObject({ trigger: 'full', usedUsd: 0.83 });
    expect(b.cap).not.toHaveProperty('refusals');
    expect(b.text).toMatch(/cannot take one more image/);
    expect(b.text).not.toMatch(/refus/);
  });

  it('shows a member’s cap where their roles are not known as a lower bound: never said to refuse, never full', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    const now = Date.now();
    const operator = operatorWith({ userDailyUsd: 1 });
    const roleBudgets = { 'discord:guild': [{ roleId: 'r-vip', userDailyUsd: 20 }] };
    // A VIP (a $20 role budget over the $1 cap of each member) used $5: the ledger took it.
    await spend(store, 'vip', 'discord:vip', 'discord:guild', 5, now);
    const figures = await figuresOf(store, operator, now, roleBudgets);
    const row = figures.caps.find((c) => c.owner === 'user' && c.key === 'discord:vip')!;
    expect(row).toMatchObject({ limitUsd: 1, usedUsd: 5, bound: 'lower', scopeKey: 'discord:guild', source: expect.stringContaining('unless the member holds a role with a larger budget') });
    const { watcher, sent } = watching(store, operator, () => now, roleBudgets);
    await watcher.check();
    expect(sent.map((a) => a.cap?.trigger)).toEqual(['threshold']);
    expect(sent[0]!.cap).toMatchObject({ bound: 'lower', threshold: 100 });
    expect(sent[0]!.text).toMatch(/of its daily cap of at least \$1\.00 \(at most 500 %, if the member holds no role with a larger budget/);
    expect(sent[0]!.text).not.toMatch(/refus/);
  });

  it('alerts once per server whose role budgets cannot be read, not once per member', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    const now = Date.now();
    const operator = operatorWith({ userDailyUsd: 1 });
    for (const member of ['1', '2', '3']) await spend(store, member, `discord:${member}`, 'discord:guild', 0.01, now);
    const roleBudgets = { 'discord:guild': 'unreadable' as const };
    const figures = await figuresOf(store, operator, now, roleBudgets);
    const members = figures.caps.filter((c) => c.owner === 'user');
    expect(members).toHaveLength(6); // each member's day and month
    for (const row of members) expect(row).toMatchObject({ limitUsd: 0, ratio: Infinity, bound: 'unreadable' });
    const { watcher, sent } = watching(store, operator, () => now, roleBudgets);
    await watcher.check();
    expect(sent.map((a) => a.id)).toEqual([expect.stringMatching(/^role-budgets:discord:guild:[\d-]+$/)]);
    expect(sent[0]!.text).toBe('Pictor: the role budgets of discord:guild cannot be read: its members may spend nothing until an admin of it sets them again.');
    expect(await watcher.check()).toEqual([]);
  });

  it('lists the caps chat admins set for their members and the role budgets, through the rules the jobs are reserved with', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    const now = Date.now();
    await store.setCapOverride('discord:guild-u', 'userDailyUsd', 0.02, 'discord:admin1', now);
    await spend(store, 'u1', 'discord:900', 'discord:guild-u', 0.03, now);
    await spend(store, 'r1', 'discord:901', 'discord:guild-r', 0.01, now);
    const figures = await figuresOf(store, operatorWith({ scopeDailyUsd: 0.3 }), now, { 'discord:guild-r': [{ roleId: 'r-artists', userMonthlyUsd: 0.5 }] });
    expect(figures.caps.find((c) => c.owner === 'user' && c.key === 'discord:900')).toMatchObject({
      period: 'day',
      limitUsd: 0.02,
      usedUsd: 0.03,
      scopeKey: 'discord:guild-u',
      source: 'set by discord:admin1 (chat admin)',
    });
    expect(figures.caps.find((c) => c.owner === 'user' && c.key === 'discord:901')).toMatchObject({ period: 'month', limitUsd: 0.5, usedUsd: 0.01, scopeKey: 'discord:guild-r', source: expect.stringContaining('r-artists') });
  });

  it('counts a month’s cap as the ledger does, records dropped by PICTOR_USAGE_RETENTION_DAYS included', async () => {
    const now = Date.UTC(2030, 5, 27, 12);
    const store = await ledgerPastRetention(now);
    expect(await store.spentThisMonth('account', now)).toBe(0.45);
    const figures = await figuresOf(store, operatorWith({ accountMonthlyUsd: 0.5 }), now);
    expect(figures.caps.find((c) => c.period === 'month')).toMatchObject({ usedUsd: 0.45, ratio: 0.9 });
  });

  it('shows the account’s spent figure as its cap row does once the month’s usage records were pruned, and what the records kept add up to', async () => {
    const now = Date.UTC(2030, 5, 27, 12);
    const store = await ledgerPastRetention(now);
    expect(await store.usage({})).toHaveLength(1);

    const figures = await figuresOf(store, operatorWith({ accountMonthlyUsd: 0.5 }), now);
    const cap = figures.caps.find((c) => c.owner === 'account' && c.period === 'month')!;
    expect(figures.account.month).toEqual({ settledUsd: 0.45, reservedUsd: 0, usedUsd: 0.45, jobs: 1, images: 0, uncertainUsd: 0, recordsUsd: 0.05 });
    expect(figures.account.month.usedUsd).toBe(cap.usedUsd);

    const page = await spendPageOf(store, operatorWith({ accountMonthlyUsd: 0.5 }), now);
    expect(figureIn(page, 'account-month-settled')).toBe(0.45);
    expect(figureIn(page, 'account-month-used')).toBe(figureIn(page, 'cap-used:account:account:month'));
    expect(figureIn(page, 'account-month-records')).toBe(0.05);
    expect(page).toContain('records older than <code>PICTOR_USAGE_RETENTION_DAYS</code> are dropped');
  });

  it('names the damaged lines of the usage records, not retention, when they are why the records kept add up to less than the ledger settled', async () => {
    const dir = await folder();
    const now = Date.UTC(2030, 5, 27, 12);
    const store = await opened(new FileQuotaStore({ dir, clock: () => now }));
    await spend(store, 'first', 'cli:owner', 'cli', 0.4, now);
    await spend(store, 'second', 'cli:owner', 'cli', 0.05, now);
    const file = await newestUsageFile(dir);
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[0] = '{"jobId":"first","dam';
    await writeFile(file, lines.join('\n'));

    const figures = await figuresOf(store, operatorWith({ accountMonthlyUsd: 1 }), now);
    expect(figures.damagedUsageLines).toEqual({ day: 1, month: 1 });
    const page = await spendPageOf(store, operatorWith({ accountMonthlyUsd: 1 }), now);
    expect(figureIn(page, 'account-month-records')).toBe(0.05);
    expect(page).toContain('1 damaged line of the usage records (<code>usage/</code>) was skipped');
    expect(page).not.toContain('PICTOR_USAGE_RETENTION_DAYS</code> are dropped');
  });

  it('says today’s records are missing, not that retention dropped them, when the usage folder was emptied by hand', async () => {
    const dir = await folder();
    const now = Date.UTC(2030, 5, 27, 12);
    const store = await opened(new FileQuotaStore({ dir, clock: () => now }));
    await spend(store, 'first', 'cli:owner', 'cli', 0.4, now);
    await rm(store.usagePath, { recursive: true });

    const page = await spendPageOf(store, operatorWith({ accountMonthlyUsd: 1 }), now);
    const today = page.slice(page.indexOf('data-period="2030-06-27"'), page.indexOf('data-period="2030-06"'));
    expect(figureIn(today, 'account-day-records')).toBe(0);
    expect(today).toContain('some of the day’s records are missing from <code>usage/</code>');
    expect(today).not.toContain('PICTOR_USAGE_RETENTION_DAYS</code> are dropped');
    // The month's may have been dropped by retention too: both are said.
    expect(page).toContain('records older than <code>PICTOR_USAGE_RETENTION_DAYS</code> are dropped, or some are missing from <code>usage/</code>');
  });

  it('blames retention, not a damaged line of the usage records written before the month, for records adding up to less this month', async () => {
    const now = Date.UTC(2030, 5, 27, 12);
    const store = await ledgerPastRetention(now);
    // Two records of May with a damaged line between them, before this month's record: the damage is May's.
    const file = await newestUsageFile(store.usagePath, '');
    const [today] = (await readFile(file, 'utf8')).split('\n');
    const may = (jobId: string, at: number) => JSON.stringify({ ...JSON.parse(today!), jobId, time: at, day: new Date(at).toISOString().slice(0, 10), month: '2030-05' });
    await rm(file);
    await writeUsageDays(store.usagePath, [may('may-1', Date.UTC(2030, 4, 3)), '{"jobId":"may-2","dam', may('may-3', Date.UTC(2030, 4, 4)), today, ''].join('\n'), '');

    const figures = await figuresOf(store, operatorWith({ accountMonthlyUsd: 1 }), now);
    expect(figures.damagedUsageLines).toEqual({ day: 0, month: 0 });
    const page = await spendPageOf(store, operatorWith({ accountMonthlyUsd: 1 }), now);
    expect(figureIn(page, 'account-month-records')).toBe(0.05);
    expect(page).toContain('records older than <code>PICTOR_USAGE_RETENTION_DAYS</code> are dropped');
    expect(page).not.toContain('damaged line');
  });

  it('gives a user with spend in the ledger and no usage record kept a row, with the ledger’s amount and no jobs claimed', async () => {
    const dir = await folder();
    const now = Date.UTC(2030, 5, 27, 12);
    const then = now - 10 * DAY_MS;
    const old = new FileQuotaStore({ dir, clock: () => then, usageRetentionDays: 7 });
    await old.open();
    await spend(old, 'gone', 'discord:555', 'discord:guild-old', 0.4, then);
    await old.setCapOverride('discord:guild-old', 'scopeMonthlyUsd', 5, 'discord:admin1', then);
    await old.close();
    const store = await opened(new FileQuotaStore({ dir, clock: () => now, usageRetentionDays: 7 }));
    await spend(store, 'kept', 'cli:owner', 'cli', 0.05, now);
    expect(await store.usage({})).toEqual([expect.objectContaining({ userKey: 'cli:owner' })]);

    const figures = await figuresOf(store, operatorWith({}), now);
    // The server (a chat admin set its cap), the CLI's scope and the account are not users.
    expect(figures.byUser).toEqual([
      { key: 'discord:555', usd: 0.4, recordsUsd: 0, jobs: 0, images: 0, uncertainUsd: 0, ledgerOnly: true },
      { key: 'cli:owner', usd: 0.05, recordsUsd: 0.05, jobs: 1, images: 0, uncertainUsd: 0 },
    ]);

    const page = await spendPageOf(store, operatorWith({}), now);
    expect(figureIn(page, 'user-month:discord:555')).toBe(0.4);
    expect(page).toMatch(/<tr data-user="discord:555">.*<td colspan="2">no usage record kept<\/td><\/tr>/);
    expect(figureIn(page, 'user-jobs:cli:owner')).toBe(1);
  });

  it('no longer shows in flight, nor counts, the job of a process whose lease lapsed: it is recorded as interrupted', async () => {
    const dir = await folder();
    const start = Date.now();
    await killedAfter(dir, async (dead) => {
      expect(await dead.reserve({ jobId: 'held', userKey: 'discord:123', scopeKey: 'discord:guild-9', estimateUsd: 0.25, limits: {}, now: start })).toEqual({ ok: true });
      await dead.markSent('held');
    });
    const { store, page: jobs } = await firstLoadAfterLapse(dir, start, operatorWith({ accountDailyUsd: 1 }), '/jobs');
    expect(jobs).not.toMatch(/in flight<\/td>/);
    // Its own row among the recent jobs, on this first load (the outcome filter names "interrupted" on every page).
    expect(jobs).toMatch(/<tr data-job="held">(?:(?!<\/tr>).)*<td>interrupted<\/td>/);
    expect(await store.activeJobs()).toEqual([]);
  });

  it('charges the job of a process whose lease lapsed on the first load of the spend page: its uncertain amount shown, no records said dropped', async () => {
    const dir = await folder();
    const start = Date.now();
    await killedAfter(dir, async (dead) => {
      await spend(dead, 'done', 'cli:owner', 'cli', 0.05, start);
      expect(await dead.reserve({ jobId: 'held', userKey: 'cli:owner', scopeKey: 'cli', estimateUsd: 0.25, limits: {}, now: start })).toEqual({ ok: true });
      await dead.markSent('held');
    });
    const { page } = await firstLoadAfterLapse(dir, start, operatorWith({}), '/spend');
    expect(figureIn(page, 'account-month-settled')).toBe(0.3);
    expect(figureIn(page, 'account-month-jobs')).toBe(2);
    expect(figureIn(page, 'account-month-uncertain')).toBe(0.25);
    expect(figureIn(page, 'account-month-records')).toBeUndefined();
    expect(page).not.toContain('PICTOR_USAGE_RETENTION_DAYS</code> are dropped');
  });
});
