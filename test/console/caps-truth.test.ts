import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryAlertLog } from '../../src/console/alerts/alert-log.js';
import type { Alert, AlertChannel } from '../../src/console/alerts/channels.js';
import { AlertWatcher } from '../../src/console/alerts/watcher.js';
import { spendFigures } from '../../src/console/figures.js';
import { startConsole } from '../../src/console/index.js';
import type { OperatorSettings } from '../../src/console/source.js';
import { UsageIndex } from '../../src/console/usage-index.js';
import { silentLogger } from '../../src/internal.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import type { QuotaStore } from '../../src/spend/types.js';
import { NO_ALERTS, TOKEN } from './console-harness.js';

const steps: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of steps.splice(0).reverse()) await step();
});

const DAY_MS = 86_400_000;

async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pictor-caps-'));
  steps.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function opened(store: FileQuotaStore): Promise<FileQuotaStore> {
  await store.open();
  steps.push(() => store.close());
  return store;
}

async function spend(store: QuotaStore, jobId: string, userKey: string, scopeKey: string, usd: number, now: number) {
  expect(await store.reserve({ jobId, userKey, scopeKey, estimateUsd: usd, limits: {}, now })).toEqual({ ok: true });
  await store.markSent(jobId);
  await store.settle(jobId, usd);
}

const operatorWith = (caps: OperatorSettings['caps']): OperatorSettings => ({ caps, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' });

async function figuresOf(store: FileQuotaStore, operator: OperatorSettings, now: number, roleBudgets?: Parameters<typeof spendFigures>[0]['roleBudgets']) {
  const index = new UsageIndex({ store, now: () => now });
  await index.refresh();
  const [active, overrides] = await Promise.all([store.activeJobs(), store.allCapOverrides()]);
  return spendFigures({ index, operator, active, overrides, refusals: {}, now, chartDays: 1, ledger: store, roleBudgets });
}

describe('the caps as the console shows them and alerts of them', () => {
  it('alerts once that a cap is refusing jobs while it is below 100 %, saying what is left against what a job reserves', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    const now = Date.now();
    const limits = { scopeDailyUsd: 0.3 };
    await spend(store, 'a', 'discord:1', 'discord:guild', 0.1, now);
    await spend(store, 'b', 'discord:1', 'discord:guild', 0.1, now);
    // The next job (one image of quality auto) reserves more than the $0.10 left: refused at 67 %.
    const refused = await store.reserve({ jobId: 'c', userKey: 'discord:2', scopeKey: 'discord:guild', estimateUsd: 0.22366, limits, now });
    expect(refused).toMatchObject({ ok: false, code: 'budget_scope_daily' });
    await store.countRefusals({ budget_scope_daily: 1 }, now);
    const sent: Alert[] = [];
    const channel: AlertChannel = { id: 'test', send: async (alert) => void sent.push(alert) };
    const watcher = new AlertWatcher({
      source: { store, operator: operatorWith(limits) },
      index: new UsageIndex({ store }),
      log: new MemoryAlertLog(),
      channels: [channel],
      config: NO_ALERTS,
      logger: silentLogger(),
    });
    steps.push(() => watcher.stop());
    await watcher.check();
    expect(sent.map((a) => a.id).sort()).toEqual([expect.stringMatching(/^cap:scope:discord:guild:day:[\d-]+:50$/), expect.stringMatching(/^cap:scope:discord:guild:day:[\d-]+:refusing$/)]);
    const refusing = sent.find((a) => a.cap?.trigger === 'refusing')!;
    expect(refusing.cap).toMatchObject({ usedUsd: 0.2, leftUsd: 0.1, percent: 67, refusals: 1 });
    expect(refusing.text).toMatch(/its daily cap is refusing jobs/);
    expect(sent.find((a) => a.cap?.trigger === 'threshold')!.text).toMatch(/\$0\.100 is left, and a job that reserves more is refused \(one image of quality auto reserves \$0\.224\)/);
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
    const dir = await folder();
    const now = Date.UTC(2030, 5, 27, 12);
    const then = now - 10 * DAY_MS;
    const old = new FileQuotaStore({ dir, clock: () => then, usageRetentionDays: 7 });
    await old.open();
    await spend(old, 'old', 'cli:owner', 'cli', 0.4, then);
    await old.close();
    const store = await opened(new FileQuotaStore({ dir, clock: () => now, usageRetentionDays: 7 }));
    await spend(store, 'new', 'cli:owner', 'cli', 0.05, now);
    expect(await store.spentThisMonth('account', now)).toBe(0.45);
    const figures = await figuresOf(store, operatorWith({ accountMonthlyUsd: 0.5 }), now);
    expect(figures.caps.find((c) => c.period === 'month')).toMatchObject({ usedUsd: 0.45, ratio: 0.9 });
  });

  it('no longer shows in flight, nor counts, the job of a process whose lease lapsed: it is recorded as interrupted', async () => {
    const dir = await folder();
    const start = Date.now();
    const dead = new FileQuotaStore({ dir, leaseMs: 1_000 });
    await dead.open();
    expect(await dead.reserve({ jobId: 'held', userKey: 'discord:123', scopeKey: 'discord:guild-9', estimateUsd: 0.25, limits: {}, now: start })).toEqual({ ok: true });
    await dead.markSent('held');
    await dead.close(); // stops renewing its lease, as a killed process does
    let now = start;
    const store = await opened(new FileQuotaStore({ dir, leaseMs: 1_000, clock: () => now }));
    const running = await startConsole({
      source: { store, operator: operatorWith({ accountDailyUsd: 1 }) },
      config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: false },
      alerts: NO_ALERTS,
      ledgerWhere: 'a file ledger',
      logger: silentLogger(),
      now: () => now,
    });
    steps.push(() => running!.close());
    const url = running!.url!;
    const login = await fetch(`${url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN, next: '/jobs' }), redirect: 'manual', headers: { origin: url } });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    now = start + 5_000; // the lease lapsed
    const jobs = await (await fetch(`${url}/jobs`, { headers: { cookie } })).text();
    expect(jobs).not.toMatch(/in flight<\/td>/);
    expect(jobs).toMatch(/interrupted/);
    expect(await store.activeJobs()).toEqual([]);
  });
});
