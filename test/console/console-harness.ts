import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import sharp from 'sharp';
import { LedgerNow } from '../../src/console/ledger-now.js';
import { LEDGER_WAIT_MS } from '../../src/console/server.js';
import { UsageIndex } from '../../src/console/usage-index.js';
import { startConsole, type BotsView, type ChatSettingRow, type RunningConsole, type StartConsoleOptions } from '../../src/console/index.js';
import { DEFAULT_ALERT_THRESHOLDS, type AlertConfig } from '../../src/console/alerts/config.js';
import type { AlertLog } from '../../src/console/alerts/alert-log.js';
import type { Alert } from '../../src/console/alerts/channels.js';
import { AlertWatcher } from '../../src/console/alerts/watcher.js';
import type { OperatorSettings } from '../../src/console/source.js';
import type { ScopeRoleBudgets } from '../../src/spend/role-budgets.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import type { JobDetails, QuotaStore } from '../../src/spend/types.js';
import { silentLogger } from '../../src/internal.js';
import type { LoggerLike } from '../../src/client/PictorClient.js';

/** The prompt that must show as text, never run. */
export const XSS_PROMPT = '<img src=x onerror=alert(1)>';
export const TOKEN = 'console-test-token-0123456789';

/** Chromium on PATH (Debian's `chromium`), or undefined. */
export function findChromium(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) {
      const path = join(dir, name);
      if (dir && existsSync(path)) return path;
    }
  }
  try {
    return execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The flags a headless Chromium runs with here: no sandbox (root in a container), no network of its own. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** A job of the seeded set: who, where, what it cost. */
export interface SeededJob {
  jobId: string;
  userKey: string;
  scopeKey: string;
  usd: number;
  job: JobDetails;
  outcome: 'completed' | 'failed' | 'cancelled';
  /** Days before today it was reserved and settled. */
  daysAgo: number;
}

const HOUR = 60 * 60_000;

/** Jobs on every surface (Discord, Slack, a Discord DM, the CLI, n8n), today and on earlier days, one with the XSS prompt. */
export function seededJobs(): SeededJob[] {
  const job = (n: number, quality: string, prompt: string): JobDetails => ({ operation: 'generate', n, size: '1024x1024', quality, prompt });
  return [
    { jobId: 'd-1', userKey: 'discord:111111111111111111', scopeKey: 'discord:222222222222222222', usd: 0.0636, job: job(1, 'medium', 'a lighthouse at dawn'), outcome: 'completed', daysAgo: 0 },
    { jobId: 'd-2', userKey: 'discord:111111111111111112', scopeKey: 'discord:222222222222222222', usd: 0.5, job: job(2, 'high', XSS_PROMPT), outcome: 'completed', daysAgo: 0 },
    { jobId: 'd-4', userKey: 'discord:111111111111111111', scopeKey: 'discord:222222222222222222', usd: 0.0636, job: job(1, 'medium', 'an earlier one'), outcome: 'completed', daysAgo: 2 },
    { jobId: 'd-3', userKey: 'discord:111111111111111113', scopeKey: 'discord:dm:111111111111111113', usd: 0.011, job: job(1, 'low', 'a cat in a hat'), outcome: 'cancelled', daysAgo: 0 },
    { jobId: 's-1', userKey: 'slack:U0001', scopeKey: 'slack:T0001', usd: 0.25, job: job(1, 'high', 'logo ideas'), outcome: 'completed', daysAgo: 0 },
    { jobId: 's-2', userKey: 'slack:U0002', scopeKey: 'slack:T0001', usd: 0.0127, job: job(1, 'low', 'a failed one'), outcome: 'failed', daysAgo: 1 },
    { jobId: 'c-1', userKey: 'cli:owner', scopeKey: 'cli', usd: 0.17, job: job(1, 'high', 'cli job'), outcome: 'completed', daysAgo: 0 },
    { jobId: 'c-2', userKey: 'cli:owner', scopeKey: 'cli', usd: 0.34, job: job(2, 'high', 'older cli job'), outcome: 'completed', daysAgo: 3 },
    { jobId: 'n-1', userKey: 'n8n:workflow-7', scopeKey: 'n8n', usd: 0.042, job: job(1, 'medium', 'n8n job'), outcome: 'completed', daysAgo: 0 },
    { jobId: 'n-2', userKey: 'n8n:workflow-7', scopeKey: 'n8n', usd: 0.084, job: job(2, 'medium', 'n8n earlier'), outcome: 'completed', daysAgo: 2 },
  ];
}

/**
 * Writes the seeded jobs into a ledger as the surfaces do (reserve, mark sent, settle), each at its own time: a
 * store whose clock is set per job. Today's jobs are settled a minute apart in the last hour (closer together, and from
 * midnight UTC, when today began less than an hour ago).
 */
export async function seedLedger(dir: string, now: number): Promise<void> {
  const time = { now };
  const store = new FileQuotaStore({ dir, clock: () => time.now });
  await store.open();
  // Today's jobs from an hour ago, or from midnight (UTC) when the day is younger than that: always today, never later than now.
  const startOfToday = Math.floor(now / (24 * HOUR)) * 24 * HOUR;
  const todayFrom = Math.max(startOfToday, now - HOUR);
  const step = Math.min(60_000, (now - todayFrom) / (seededJobs().length + 1));
  try {
    let i = 0;
    for (const s of seededJobs()) {
      time.now = s.daysAgo === 0 ? todayFrom + i++ * step : now - s.daysAgo * 24 * HOUR;
      const reservedAt = s.daysAgo === 0 ? Math.max(startOfToday, time.now - 20_000) : time.now - 20_000;
      const reserved = await store.reserve({ jobId: s.jobId, userKey: s.userKey, scopeKey: s.scopeKey, estimateUsd: s.usd * 1.5, limits: {}, now: reservedAt, job: s.job });
      if (!reserved.ok) throw new Error(`seeding: ${s.jobId} refused`);
      await store.markSent(s.jobId);
      await store.settle(s.jobId, s.usd, { outcome: s.outcome, images: s.outcome === 'completed' ? s.job.n : 0, basis: s.outcome === 'completed' ? 'table' : 'estimate' });
    }
    time.now = todayFrom;
    await store.countRefusals({ budget_user_daily: 2, scope_paused: 1, queue_full: 1 }, todayFrom);
    await store.setCapOverride('discord:222222222222222222', 'scopeDailyUsd', 5, 'discord:999999999999999999', now - 2 * HOUR);
  } finally {
    await store.close();
  }
}

/**
 * The images the bots' stand-in keeps, by job, numbered as the job's: `d-2` made two and its first was not kept (a
 * gap); `live-1` (the browser test's live job) the same.
 */
export const KEPT_IMAGES: ReadonlyMap<string, readonly number[]> = new Map([
  ['d-1', [0]],
  ['d-2', [1]],
  ['live-1', [1]],
]);

/** A stand-in for the bots: names (one of them hostile markup), and the kept images of `KEPT_IMAGES`. */
export async function fakeBots(): Promise<BotsView> {
  const image = await sharp({ create: { width: 256, height: 256, channels: 3, background: { r: 40, g: 90, b: 200 } } })
    .png()
    .toBuffer();
  return {
    async names(keys) {
      const known: Record<string, string> = {
        'discord:222222222222222222': 'Design team',
        'slack:T0001': 'Acme <b>Workspace</b>',
        'discord:111111111111111111': 'ada',
      };
      return new Map(keys.filter((k) => known[k]).map((k) => [k, known[k]!]));
    },
    images: {
      async indices(jobIds) {
        return new Map(jobIds.flatMap((id) => (KEPT_IMAGES.has(id) ? [[id, KEPT_IMAGES.get(id)!] as const] : [])));
      },
      async read(jobId, index) {
        return KEPT_IMAGES.get(jobId)?.includes(index) ? { data: image } : undefined;
      },
      async has(jobId, index) {
        return KEPT_IMAGES.get(jobId)?.includes(index) ?? false;
      },
    },
    settings: () => [{ name: 'Jobs one user may have at once', value: '2', source: 'default' }],
    // A server whose admins chose channels, and two settings kept that cannot be read: a rule (its jobs are refused) and a default.
    async chatSettings(scopeKeys): Promise<Record<string, Record<string, ChatSettingRow>>> {
      const server = 'discord:222222222222222222';
      if (!scopeKeys.includes(server)) return {};
      return {
        [server]: {
          channels: { value: ['333333333333333333'], by: 'discord:999999999999999999', at: Date.UTC(2026, 0, 2) },
          blocked: { unreadable: 'jobs_refused' },
          defaultSize: { unreadable: 'default_applies' },
          roleBudgets: { unreadable: 'spend_nothing' },
        },
      };
    },
  };
}

/**
 * `tellReconciles` for a console over a ledger no dead process left a reservation in: no step of its store ends one,
 * so there is nothing to tell. A test with a dead process's job wires the store's `onReconciled` instead, as
 * `pictor console` and `npm start` do.
 */
export const NO_DEAD_PROCESSES: StartConsoleOptions['tellReconciles'] = () => undefined;

/**
 * The usage index and the ledger's reservations read through it, as `startConsole` makes them for its pages and its
 * alerts, over a ledger no dead process shared (see `NO_DEAD_PROCESSES`). `now`: the index's clock, and the reconcile's
 * unless `reconcileNow`; `readWaitMs`: default the ledger wait.
 */
export function consoleReads(store: QuotaStore, options: { now?: () => number; reconcileNow?: () => number; readWaitMs?: number } = {}): { index: UsageIndex; ledgerNow: LedgerNow } {
  const readWaitMs = options.readWaitMs ?? LEDGER_WAIT_MS;
  const index = new UsageIndex({ readWaitMs, store, now: options.now });
  return { index, ledgerNow: new LedgerNow(store, { index, now: options.reconcileNow ?? options.now, readWaitMs }) };
}

export const NO_ALERTS: AlertConfig = { thresholds: DEFAULT_ALERT_THRESHOLDS, breaker: true, checkMs: 60_000, discord: undefined, slack: undefined, webhook: undefined };

/**
 * A console process's alert watcher over `store` with the operator's `operator` (and the bots' role budgets, if given:
 * their answer, or how they answer), keeping what it told in `log` and sending to one destination whose alerts `sent`
 * lists; it logs to `logger` (nowhere by default); `steps` stops it after the test.
 */
export function watchingAlerts(
  steps: (() => Promise<void>)[],
  {
    store,
    log,
    operator,
    now,
    roleBudgets,
    logger = silentLogger(),
  }: {
    store: QuotaStore;
    log: AlertLog;
    operator: OperatorSettings;
    now: () => number;
    roleBudgets?: Record<string, ScopeRoleBudgets> | (() => Promise<Record<string, ScopeRoleBudgets>>);
    logger?: LoggerLike;
  },
): { watcher: AlertWatcher; sent: Alert[] } {
  const sent: Alert[] = [];
  const answer = typeof roleBudgets === 'function' ? roleBudgets : roleBudgets && (async () => roleBudgets);
  const watcher = new AlertWatcher({
    readWaitMs: LEDGER_WAIT_MS,
    source: { store, operator, ...(answer && { bots: { roleBudgets: answer } }) },
    ...consoleReads(store, { now }),
    log,
    channels: [{ id: 'hook', send: async (alert) => void sent.push(alert) }],
    config: NO_ALERTS,
    logger,
    now,
  });
  steps.push(() => watcher.stop());
  return { watcher, sent };
}

/** Logs in to the console at `url` with `TOKEN`, headed for `next`, as a browser does; returns the cookie it sets. */
export async function loginCookie(url: string, next: string): Promise<string> {
  const login = await fetch(`${url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN, next }), redirect: 'manual', headers: { origin: url } });
  return login.headers.get('set-cookie')!.split(';')[0]!;
}

/** The form token of the console at `url` logged in with `cookie`, as its alerts page carries it. */
export async function csrfOf(url: string, cookie: string): Promise<string> {
  const page = await (await fetch(`${url}/alerts`, { headers: { cookie } })).text();
  return /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
}

export interface ConsoleUnderTest {
  url: string;
  /** The alerts the console's webhook destination received (JSON bodies). */
  alerts: unknown[];
  store: QuotaStore;
  dir: string;
  console: RunningConsole;
  close(): Promise<void>;
}

/** A console over a seeded file ledger, as `npm start` runs it (with the bots' stand-in), changes allowed. */
export async function startSeededConsole(
  options: {
    allowChanges?: boolean;
    caps?: Record<string, number>;
    bots?: Partial<BotsView>;
    publicOrigin?: string;
    /** Where it listens (`PICTOR_CONSOLE_HOST`); default 127.0.0.1. */
    host?: string;
    /** Started without PICTOR_CONSOLE_TOKEN: the console makes a token and a login link (`console.loginLink`). */
    madeToken?: boolean;
    /** Where the console logs (default: nowhere). */
    logger?: LoggerLike;
    seed?: (store: QuotaStore, now: number) => Promise<void>;
    /** The console's clock (default: the wall clock); the ledger is seeded at its time. */
    now?: () => number;
  } = {},
): Promise<ConsoleUnderTest> {
  const dir = await mkdtemp(join(tmpdir(), 'pictor-console-'));
  const now = options.now?.() ?? Date.now();
  await seedLedger(dir, now);
  const store = new FileQuotaStore({ dir });
  await store.open();
  await options.seed?.(store, now);
  // A webhook destination on loopback, so the alerts page has somewhere to send to and something sent.
  const alerts: unknown[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      alerts.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const webhook = { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/pictor-alerts`, secret: 'a-shared-secret-for-tests' };
  const running = await startConsole({
    source: {
      store,
      operator: {
        caps: { accountDailyUsd: 2, accountMonthlyUsd: 40, scopeDailyUsd: 10, userDailyUsd: 1, ...options.caps },
        dmCaps: { dailyUsd: 0.5 },
        breaker: { factor: 10, floorUsd: 5 },
        imagesPerMinute: 5,
        ledger: 'account',
      },
      bots: { ...(await fakeBots()), ...options.bots },
    },
    config: { port: 0, host: options.host ?? '127.0.0.1', token: options.madeToken ? undefined : TOKEN, allowChanges: options.allowChanges ?? true, publicOrigin: options.publicOrigin },
    alerts: { ...NO_ALERTS, webhook },
    tellReconciles: NO_DEAD_PROCESSES,
    ledgerWhere: `the file ledger in ${dir}`,
    logger: options.logger ?? silentLogger(),
    now: options.now,
    liveIntervalMs: 200,
  });
  return {
    url: running!.url!,
    alerts,
    store,
    dir,
    console: running!,
    async close() {
      await running!.close();
      await new Promise((resolve) => receiver.close(resolve));
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
