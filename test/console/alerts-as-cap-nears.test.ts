import { execFile, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startService } from '../../bots/main.js';
import type { Alert } from '../../src/console/index.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { AlertWatcher, SETTLED_CHECK_GAP_MS } from '../../src/console/alerts/watcher.js';
import { MemoryAlertLog } from '../../src/console/alerts/alert-log.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import type { BudgetCode } from '../../src/spend/types.js';
import { builtFile } from '../helpers/built.js';
import { outputOf } from '../helpers/child-output.js';
import { killedAtTestEnd } from '../helpers/killed-at-test-end.js';
import { spyOnInstance } from '../helpers/instance-spy.js';
import { watchingAlerts } from './console-harness.js';
import { operatorWith } from './ledger-fixtures.js';
import { buttonsOf, type FakeDiscord, type FakeInteraction } from '../fakes/discord/FakeDiscord.js';
import { waitOnRealClock } from '../helpers/real-clock-wait.js';
import { startChatFakes, startUpstream, surfaceEnv, tempDataDir, useCleanup, type Defer } from '../helpers/service-fakes.js';

/**
 * `npm start` warns the owner as a cap nears, not a check period later: a job settled by the process and a job refused
 * by a cap look at the alerts at once (the clock's check is an hour away here). The alerts go to a webhook, a local
 * HTTP server that records what it is sent.
 */
const defer = useCleanup();

/** The account's daily cap's refusal. */
const ACCOUNT_DAILY: BudgetCode = 'budget_account_daily';

/** A webhook that records each alert as it arrives. */
async function webhook(defer: Defer) {
  const alerts: Alert[] = [];
  const changes = new EventEmitter();
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString('utf8')));
    req.on('end', () => {
      const alert = JSON.parse(text) as Alert;
      alerts.push(alert);
      res.writeHead(200).end();
      changes.emit('change');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(() => new Promise((resolve) => server.close(() => resolve())));
  const waitFor = <T>(check: () => T | undefined, what: string) => waitOnRealClock(check, what, { timeoutMs: 10_000, changes });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, alerts, waitFor };
}

async function serviceWith(dataDir: string) {
  const fakes = await startChatFakes(defer);
  const { url: upstreamUrl } = await startUpstream(defer, 0, { identifyAsEmulator: false }); // the real service: the account's ledger
  const hook = await webhook(defer);
  const service = await startService(
    {
      PICTOR_LOG_LEVEL: 'silent',
      PICTOR_DATA_DIR: dataDir,
      PICTOR_BASE_URL: upstreamUrl,
      PICTOR_API_KEY: DEV_API_KEY,
      PICTOR_PARTIAL_IMAGES: '0',
      PICTOR_ACCOUNT_DAILY_USD: '1',
      PICTOR_ALERT_WEBHOOK_URL: hook.url,
      PICTOR_ALERT_WEBHOOK_SECRET: 'a-webhook-secret-for-the-test',
      // The clock's check is an hour away: whatever arrives during the test was sent because of a job.
      PICTOR_ALERT_CHECK_SECONDS: '3600',
      ...surfaceEnv(fakes),
    },
    () => {},
  );
  defer(() => service.stop());
  return { discord: fakes.discord, hook, upstreamUrl };
}

/** `pictor generate` as its own process (the CLI beside the bots), on the same ledger and service: its exit code. */
export function cliJob(env: { dataDir: string; upstreamUrl: string }, args: string[]): Promise<number> {
  const cli = builtFile('dist/cli/pictor.js');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, 'generate', ...args, '--out', `${env.dataDir}/cli-out/`],
      { env: { PATH: process.env.PATH ?? '', PICTOR_DATA_DIR: env.dataDir, PICTOR_BASE_URL: env.upstreamUrl, PICTOR_API_KEY: DEV_API_KEY, PICTOR_ACCOUNT_DAILY_USD: '1' } },
      (error) => resolve(error ? ((error as { code?: number }).code ?? 1) : 0),
    );
  });
}

/**
 * `npm start` with a file ledger and an alert destination in a process of its own, stopped at once: whether the
 * ledger folder was watched while it ran, and what (of it, and of the fakes it talked to) still held the process once
 * it stopped and the fakes closed. The child ends by itself when nothing holds it.
 */
function serviceStoppedInAChild() {
  const here = (path: string) => JSON.stringify(new URL(path, import.meta.url).pathname);
  const script = `
    import { mkdtemp, rm } from 'node:fs/promises';
    import { tmpdir } from 'node:os';
    import { join } from 'node:path';
    const { startService } = await import(${here('../../bots/main.ts')});
    const { FakeDiscord } = await import(${here('../fakes/discord/FakeDiscord.ts')});
    const { DEV_API_KEY } = await import(${here('../../src/emulator/index.ts')});
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-stop-watch-'));
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    const service = await startService(
      {
        PICTOR_LOG_LEVEL: 'silent',
        PICTOR_DATA_DIR: dataDir,
        PICTOR_API_KEY: DEV_API_KEY,
        PICTOR_ALERT_WEBHOOK_URL: 'http://127.0.0.1:9/hook',
        PICTOR_ALERT_WEBHOOK_SECRET: 'a-webhook-secret-for-the-test',
        PICTOR_ALERT_CHECK_SECONDS: '3600',
        DISCORD_TOKEN: discord.botToken,
        DISCORD_APPLICATION_ID: discord.applicationId,
        DISCORD_API_BASE_URL: discord.apiBaseUrl,
      },
      () => {},
    );
    const watchedWhileRunning = process.getActiveResourcesInfo().includes('FSEventWrap');
    await service.stop();
    await discord.close();
    await new Promise((resolve) => setImmediate(resolve));
    const heldAfterStop = process.getActiveResourcesInfo().filter((what) => what === 'FSEventWrap');
    await rm(dataDir, { recursive: true, force: true });
    console.log(JSON.stringify({ watchedWhileRunning, heldAfterStop }));
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  killedAtTestEnd(child, 'the stopped service');
  const ended = outputOf(child).then(({ code, stdout, stderr }) => ({ code, stderr, said: JSON.parse(stdout.trim() || 'null') as unknown }));
  return { ended };
}

/** How a job's interaction ended: its result (with Reroll), or its refusal. */
function ended(discord: FakeDiscord, ix: FakeInteraction) {
  return discord.waitFor(() => {
    const message = discord.original(ix);
    if (!message) return undefined;
    if (/more than the|is left/.test(message.content)) return 'refused' as const;
    return buttonsOf(message).some((b) => /^pictor:reroll:/.test(b.custom_id)) ? ('done' as const) : undefined;
  }, 'the job’s end or its refusal');
}

describe('npm start alerts as a cap nears', () => {
  it('sends the 50 % alert of a $1 daily cap from the jobs settled alone, before any job is refused', async () => {
    const { discord, hook } = await serviceWith(await tempDataDir(defer));
    // Two jobs in quick succession: two images (about 45 % of the cap), one more (past 50 %).
    expect(await ended(discord, discord.slashCommand('imagine', { prompt: 'burst 1', quality: 'high', count: 2 }))).toBe('done');
    expect(await ended(discord, discord.slashCommand('imagine', { prompt: 'burst 2', quality: 'high', count: 1 }))).toBe('done');
    // Nothing else happens: no job is refused, and the clock's check is an hour away, so only a check the settles
    // called for can send it (at most the 3 s gap after the settle; the order against a job sent meanwhile is not kept).
    const half = await hook.waitFor(() => hook.alerts.find((a) => a.cap?.owner === 'account' && a.cap.threshold === 50), 'the 50 % alert');
    expect(half.cap).toMatchObject({ trigger: 'threshold', limitUsd: 1, period: 'day' });
    expect(hook.alerts).toHaveLength(1);
    // The cap then refuses a job that does not fit.
    expect(await ended(discord, discord.slashCommand('imagine', { prompt: 'burst 3', quality: 'high', count: 2 }))).toBe('refused');
  }, 60_000);

  it('refuses a job after another process spent most of the cap, and the cap’s alert goes out', async () => {
    const dataDir = await tempDataDir(defer);
    const { discord, hook, upstreamUrl } = await serviceWith(dataDir);
    // The CLI spends about two thirds of the account's $1 in the same ledger: nothing in this process settled.
    expect(await cliJob({ dataDir, upstreamUrl }, ['--prompt', 'three at once', '--quality', 'high', '--n', '3'])).toBe(0);
    expect(await ended(discord, discord.slashCommand('imagine', { prompt: 'does not fit', quality: 'high', count: 2 }))).toBe('refused');
    const half = await hook.waitFor(() => hook.alerts.find((a) => a.cap?.owner === 'account'), 'the account cap’s alert');
    expect(half.cap).toMatchObject({ trigger: 'threshold', threshold: 50, limitUsd: 1 });
  }, 60_000);
});

describe('npm start alerts for other processes’ jobs on its file ledger', () => {
  it('sends the 50 % alert as soon as the CLI spends past it, with no job of its own', async () => {
    const dataDir = await tempDataDir(defer);
    const { hook, upstreamUrl } = await serviceWith(dataDir);
    // The CLI spends about two thirds of the account's $1 in the same ledger; the clock's check is an hour away.
    expect(await cliJob({ dataDir, upstreamUrl }, ['--prompt', 'three at once', '--quality', 'high', '--n', '3'])).toBe(0);
    const half = await hook.waitFor(() => hook.alerts.find((a) => a.cap?.owner === 'account'), 'the account cap’s alert');
    expect(half.cap).toMatchObject({ trigger: 'threshold', threshold: 50, limitUsd: 1 });
  }, 60_000);

  it('stops watching the ledger folder when it stops: nothing of it holds the process', async () => {
    const { ended } = serviceStoppedInAChild();
    const { code, stderr, said } = await ended;
    expect(stderr).toBe('');
    expect(said).toEqual({ watchedWhileRunning: true, heldAfterStop: [] });
    expect(code).toBe(0);
  }, 60_000);
});

describe('the alert checks jobs settled call for', () => {
  const steps: (() => Promise<void>)[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    for (const step of steps.splice(0).reverse()) await step();
  });

  /** A watcher over a fresh file ledger with a $1 account cap, its checks counted (and answered at once), under fake timers. */
  async function watcherWithCountedChecks() {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-checks-'));
    steps.push(() => rm(dir, { recursive: true, force: true }));
    const store = new FileQuotaStore({ dir });
    await store.open();
    steps.push(() => store.close());
    const { watcher } = watchingAlerts(steps, { store, log: new MemoryAlertLog(), operator: operatorWith({ accountDailyUsd: 1 }), now: Date.now });
    const checks = spyOnInstance(AlertWatcher.prototype, 'check', (w) => w === watcher).mockResolvedValue([]);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    return { watcher, checks };
  }

  it('checks at once for a settle, then at most once per gap however many jobs settle in it', async () => {
    const { watcher, checks } = await watcherWithCountedChecks();

    watcher.settled();
    expect(checks).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 20; i++) watcher.settled();
    expect(checks).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(SETTLED_CHECK_GAP_MS - 1);
    expect(checks).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(checks).toHaveBeenCalledTimes(2);
    // Nothing settled since: no more checks.
    await vi.advanceTimersByTimeAsync(SETTLED_CHECK_GAP_MS * 3);
    expect(checks).toHaveBeenCalledTimes(2);
    // A settle long after the last: at once again.
    watcher.settled();
    expect(checks).toHaveBeenCalledTimes(3);
  });

  it('checks at once for a refusal by a cap, then at most once per gap however many a full cap refuses', async () => {
    const { watcher, checks } = await watcherWithCountedChecks();

    // A full cap refuses a burst of 50 jobs: each check reads the ledger (and takes its lock) for nothing new.
    for (let i = 0; i < 50; i++) watcher.refused(ACCOUNT_DAILY);
    expect(checks).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(SETTLED_CHECK_GAP_MS - 1);
    expect(checks).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(checks).toHaveBeenCalledTimes(2);
    // Refusals all along, one every 100 ms for 30 s: one check per gap.
    for (let t = 0; t < 30_000; t += 100) {
      watcher.refused(ACCOUNT_DAILY);
      await vi.advanceTimersByTimeAsync(100);
    }
    expect(checks.mock.calls.length).toBeLessThanOrEqual(2 + 30_000 / SETTLED_CHECK_GAP_MS + 1);
    // A user's pace is no cap: it calls for no check.
    await vi.advanceTimersByTimeAsync(SETTLED_CHECK_GAP_MS * 2);
    const settledDown = checks.mock.calls.length;
    watcher.refused('user_cooldown');
    await vi.advanceTimersByTimeAsync(SETTLED_CHECK_GAP_MS * 2);
    expect(checks.mock.calls.length).toBe(settledDown);
  });
});
