import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryAlertLog, type AlertRules } from '../../src/console/alerts/alert-log.js';
import { startConsole, type RunningConsole } from '../../src/console/index.js';
import { startConsoleServer } from '../../src/console/server.js';
import { createLogger } from '../../src/core/logger.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import type { ActiveJob, BreakerState } from '../../src/spend/types.js';
import { consoleReads, csrfOf, loginCookie, NO_ALERTS, NO_DEAD_PROCESSES, TOKEN } from './console-harness.js';
import { LEDGER_WAIT_MS } from '../../src/console/server.js';

const steps: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of steps.splice(0).reverse()) await step();
});

/** A promise that never settles: a backend that took the request and never answers. */
const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** A file ledger whose live reads and resumes stall once `stalled` is set. */
class StallingStore extends FileQuotaStore {
  stalled = false;
  override activeJobs(): Promise<ActiveJob[]> {
    return this.stalled ? never() : super.activeJobs();
  }
  override resumeScope(scopeKey: string, by: string, now: number): Promise<BreakerState | undefined> {
    return this.stalled ? never() : super.resumeScope(scopeKey, by, now);
  }
}

/** An alert log whose writes stall. */
class StallingLog extends MemoryAlertLog {
  override setRules(_rules: AlertRules): Promise<void> {
    return never();
  }
}

/** A gate the test opens: what waits on `opened` goes on once `open()` is called. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** A file ledger whose resume waits for the test to let it through. */
class HeldStore extends FileQuotaStore {
  resume = gate();
  override async resumeScope(scopeKey: string, by: string, now: number): Promise<BreakerState | undefined> {
    await this.resume.opened;
    return super.resumeScope(scopeKey, by, now);
  }
}

/** An alert log whose rules are written once the test lets them through. */
class HeldLog extends MemoryAlertLog {
  write = gate();
  override async setRules(rules: AlertRules): Promise<void> {
    await this.write.opened;
    return super.setRules(rules);
  }
}

/** The console over a stalling ledger, kept images that never answer, and a stalling alert log; logged in. */
async function stalledConsole() {
  const dir = await mkdtemp(join(tmpdir(), 'pictor-console-stalls-'));
  steps.push(() => rm(dir, { recursive: true, force: true }));
  const store = new StallingStore({ dir });
  await store.open();
  steps.push(() => store.close());
  const warnings: string[] = [];
  const logger = { debug: () => {}, info: () => {}, error: () => {}, warn: (_fields: object, message?: string) => void warnings.push(message ?? '') };
  const running = (await startConsole({
    source: {
      store,
      operator: { caps: {}, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' },
      bots: { images: { indices: async () => new Map(), read: () => never(), has: () => never() } },
    },
    config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: true },
    alerts: NO_ALERTS,
    alertLog: new StallingLog(),
    ledgerWhere: `the file ledger in ${dir}`,
    logger,
    tellReconciles: NO_DEAD_PROCESSES,
    // A change, the live stream and a thumbnail not answered at once are late: the backends here never answer.
    backendWaitMs: 0,
  })) as RunningConsole;
  steps.push(() => running.close());
  const url = running.url!;
  const cookie = await loginCookie(url, '/spend');
  const csrf = await csrfOf(url, cookie);
  return { url, cookie, csrf, store, warnings };
}

describe('the console when the ledger, the alert log or the kept images stall', () => {
  it('answers a change 503 within its wait, logged, instead of holding the form for ever', async () => {
    const { url, cookie, csrf, store, warnings } = await stalledConsole();
    expect(csrf).toBeDefined();
    store.stalled = true;
    const post = (path: string, form: Record<string, string>) =>
      fetch(`${url}${path}`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf!, ...form }), headers: { cookie, origin: url }, redirect: 'manual' });
    const resumed = await post('/breaker/resume', { scope: 'discord:222222222222222222' });
    expect(resumed.status).toBe(503);
    expect(await resumed.text()).toMatch(/^No answer from the ledger within 0 ms: /);
    const rules = await post('/alerts/rules', { thresholds: '40, 90' });
    expect(rules.status).toBe(503);
    expect(await rules.text()).toMatch(/^No answer from the alert log within 0 ms: /);
    expect(warnings).toEqual(['the console had no answer from the ledger in time: answered 503', 'the console had no answer from the alert log in time: answered 503']);
  });

  it('makes a change answered 503 once the ledger answers: logged then, the alerts checked, and the reload shows it, not a page read before it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-console-stalls-'));
    steps.push(() => rm(dir, { recursive: true, force: true }));
    const time = { now: Date.now() - 2 * 86_400_000 };
    const store = new HeldStore({ dir, clock: () => time.now });
    await store.open();
    steps.push(() => store.close());
    // A server the breaker paused: $0.01 two days ago, then $0.30 and $0.30 in an hour, past the $0.50 floor.
    const breaker = { factor: 10, floorUsd: 0.5 };
    const scopeKey = 'discord:222222222222222222';
    const ask = (jobId: string, estimateUsd: number) => ({ jobId, userKey: 'discord:1', scopeKey, estimateUsd, limits: { breaker }, now: time.now });
    expect(await store.reserve(ask('old', 0.01))).toEqual({ ok: true });
    await store.markSent('old');
    await store.settle('old', 0.01);
    time.now = Date.now();
    expect(await store.reserve(ask('a', 0.3))).toEqual({ ok: true });
    expect(await store.reserve(ask('b', 0.3))).toMatchObject({ code: 'scope_paused', tripped: true });
    // The settings page is held after it read the breaker's state (at its chat settings), until the test lets it go.
    const settingsRead = gate();
    const pageHeld = gate();
    const log = new HeldLog();
    const infos: string[] = [];
    let pokes = 0;
    const logger = { debug: () => {}, warn: () => {}, error: () => {}, info: (_fields: object, message?: string) => void infos.push(message ?? '') };
    const server = await startConsoleServer({
      source: {
        store,
        operator: { caps: {}, dmCaps: {}, breaker, imagesPerMinute: undefined, ledger: 'account' },
        bots: {
          chatSettings: async () => {
            settingsRead.open();
            await pageHeld.opened;
            return {};
          },
        },
      },
      config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: true },
      token: TOKEN,
      generatedToken: false,
      ...consoleReads(store, { readWaitMs: 0 }),
      alerts: { config: NO_ALERTS, log, channels: [], poke: () => void pokes++ },
      ledgerWhere: `the file ledger in ${dir}`,
      logger,
      // Every read that is not answered at once is late.
      ledgerWaitMs: 0,
      backendWaitMs: 0,
    });
    steps.push(() => server.close());
    const { url } = server;
    const cookie = await loginCookie(url, '/spend');
    const alertsPage = await fetch(`${url}/alerts`, { headers: { cookie } });
    expect(alertsPage.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await alertsPage.text())![1]!;
    const post = (path: string, form: Record<string, string>) =>
      fetch(`${url}${path}`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf, ...form }), headers: { cookie, origin: url }, redirect: 'manual' });
    // A settings page read before the change: answered 503, its render kept for the reload.
    expect((await fetch(`${url}/settings`, { headers: { cookie } })).status).toBe(503);
    await settingsRead.opened;
    // Both changes are late: 503.
    expect((await post('/breaker/resume', { scope: scopeKey })).status).toBe(503);
    expect((await post('/alerts/rules', { thresholds: '40, 90' })).status).toBe(503);
    expect(infos).toEqual([]);
    expect(pokes).toBe(0);
    // The ledger and the alert log answer: the changes are made, and what follows a change is done then.
    store.resume.open();
    log.write.open();
    await vi.waitFor(() => expect([...infos].sort()).toEqual(['the owner changed the alert rules', 'the owner resumed a server the breaker had paused']));
    expect(pokes).toBe(1);
    const state = (await store.breakerStates())[scopeKey];
    expect(state?.pausedAt).toBeUndefined();
    expect(state?.resumedBy).toBe('console');
    expect((await log.rules())?.thresholds).toEqual([40, 90]);
    // The page read before the change ends; the reload the 503 suggested shows the server resumed, not that page.
    pageHeld.open();
    const reloaded = await vi.waitFor(async () => {
      const res = await fetch(`${url}/settings`, { headers: { cookie } });
      expect(res.status).toBe(200);
      return res.text();
    });
    expect(reloaded).not.toContain(`data-paused="${scopeKey}"`);
    expect(reloaded).toContain('Nothing is paused.');
  });

  it('shows a change’s notice on no page after the one it was answered 503 on: the next read of that address renders it afresh', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-console-stalls-'));
    steps.push(() => rm(dir, { recursive: true, force: true }));
    const store = new FileQuotaStore({ dir });
    await store.open();
    steps.push(() => store.close());
    // The settings page is held at its chat settings until the test lets it go.
    const pageHeld = gate();
    const server = await startConsoleServer({
      source: {
        store,
        operator: { caps: {}, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' },
        bots: {
          chatSettings: async () => {
            await pageHeld.opened;
            return {};
          },
        },
      },
      config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: true },
      token: TOKEN,
      generatedToken: false,
      ...consoleReads(store, { readWaitMs: 0 }),
      alerts: { config: NO_ALERTS, log: new MemoryAlertLog(), channels: [], poke: () => undefined },
      ledgerWhere: `the file ledger in ${dir}`,
      logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
      // A page not read at once is late; a change is made in time.
      ledgerWaitMs: 0,
      backendWaitMs: LEDGER_WAIT_MS,
    });
    steps.push(() => server.close());
    const { url } = server;
    const cookie = await loginCookie(url, '/spend');
    const csrf = await csrfOf(url, cookie);
    const resumed = await fetch(`${url}/breaker/resume`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf, scope: 'discord:222222222222222222' }), headers: { cookie, origin: url }, redirect: 'manual' });
    expect(resumed.headers.get('location')).toBe('/settings');
    // The page the change sends to, with its notice, is late: 503.
    expect((await fetch(`${url}/settings`, { headers: { cookie } })).status).toBe(503);
    pageHeld.open();
    // Another page of the owner's, then the settings page again: no notice there.
    expect((await fetch(`${url}/alerts`, { headers: { cookie } })).status).toBe(200);
    const again = await vi.waitFor(async () => {
      const res = await fetch(`${url}/settings`, { headers: { cookie } });
      expect(res.status).toBe(200);
      return res.text();
    });
    expect(again).not.toContain('class="notice"');
  });

  it('logs a change answered 503 that fails later, with its code and its message with secrets hidden', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-console-stalls-'));
    steps.push(() => rm(dir, { recursive: true, force: true }));
    const refusal = Object.assign(new Error('connect ECONNREFUSED redis://default:hunter2hunter2@redis.internal:6379'), { code: 'ECONNREFUSED' });
    /** A ledger whose resume fails once the test lets it answer. */
    class FailingStore extends FileQuotaStore {
      resume = gate();
      override async resumeScope(): Promise<BreakerState | undefined> {
        await this.resume.opened;
        throw refusal;
      }
    }
    /** An alert log whose rules fail to be written once the test lets it answer. */
    class FailingLog extends MemoryAlertLog {
      write = gate();
      override async setRules(): Promise<void> {
        await this.write.opened;
        throw Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' });
      }
    }
    const store = new FailingStore({ dir });
    await store.open();
    steps.push(() => store.close());
    const log = new FailingLog();
    // The logger the console runs with, its lines as written.
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } });
    const warnings = () => lines.map((line) => JSON.parse(line) as { path?: string; msg: string; err?: { code?: string; message?: string } });
    const running = (await startConsole({
      source: { store, operator: { caps: {}, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' } },
      config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: true },
      alerts: NO_ALERTS,
      alertLog: log,
      ledgerWhere: `the file ledger in ${dir}`,
      logger,
      tellReconciles: NO_DEAD_PROCESSES,
      // The pages are read in time; a change not answered at once is late.
      ledgerWaitMs: LEDGER_WAIT_MS,
      backendWaitMs: 0,
    })) as RunningConsole;
    steps.push(() => running.close());
    const url = running.url!;
    const cookie = await loginCookie(url, '/spend');
    const csrf = await csrfOf(url, cookie);
    const post = (path: string, form: Record<string, string>) =>
      fetch(`${url}${path}`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf, ...form }), headers: { cookie, origin: url }, redirect: 'manual' });
    expect((await post('/breaker/resume', { scope: 'discord:222222222222222222' })).status).toBe(503);
    expect((await post('/alerts/rules', { thresholds: '40, 90' })).status).toBe(503);
    store.resume.open();
    log.write.open();
    const failed = await vi.waitFor(() => {
      const late = warnings().filter((w) => w.msg.startsWith('a change the console answered 503 for failed later'));
      expect(late).toHaveLength(2);
      return late;
    });
    expect(failed.map((w) => w.msg).sort()).toEqual([
      'a change the console answered 503 for failed later: the alert log did not make it',
      'a change the console answered 503 for failed later: the ledger did not make it',
    ]);
    const resume = failed.find((w) => w.path === '/breaker/resume')!;
    expect(resume.err).toMatchObject({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED redis://default:[redacted]@redis.internal:6379' });
    expect(lines.join('')).not.toContain('hunter2hunter2');
    expect(failed.find((w) => w.path === '/alerts/rules')!.err).toMatchObject({ code: 'EROFS', message: 'EROFS: read-only file system' });
  });

  it('closes the live stream, saying why, when the ledger does not answer its first read', async () => {
    const { url, cookie, store, warnings } = await stalledConsole();
    store.stalled = true;
    const res = await fetch(`${url}/events/jobs`, { headers: { cookie } });
    expect(res.status).toBe(200);
    // The whole body: the stream has ended.
    expect(await res.text()).toBe('retry: 3000\n\nevent: unavailable\ndata: "the ledger did not answer in time; trying again"\n\n');
    expect(warnings).toContain('the console could not read the live jobs in time: the live stream was closed');
  });

  it('sends the live jobs with their keys when the names are not found within the wait', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-console-stalls-'));
    steps.push(() => rm(dir, { recursive: true, force: true }));
    const store = new FileQuotaStore({ dir });
    await store.open();
    steps.push(() => store.close());
    expect(await store.reserve({ jobId: 'running', userKey: 'discord:1', scopeKey: 'discord:guild', estimateUsd: 0.2, limits: {}, now: Date.now() })).toEqual({ ok: true });
    const running = (await startConsole({
      source: { store, operator: { caps: {}, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' }, bots: { names: () => never() } },
      config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: false },
      alerts: NO_ALERTS,
      ledgerWhere: `the file ledger in ${dir}`,
      logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
      tellReconciles: NO_DEAD_PROCESSES,
      // Long enough for the file ledger's first read; the names never answer.
      backendWaitMs: 1000,
    })) as RunningConsole;
    steps.push(() => running.close());
    const url = running.url!;
    const cookie = await loginCookie(url, '/spend');
    const abort = new AbortController();
    const res = await fetch(`${url}/events/jobs`, { headers: { cookie }, signal: abort.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!/event: live\ndata: .*\n\n/.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    abort.abort();
    const data = JSON.parse(/event: live\ndata: (.*)\n\n/.exec(text)![1]!) as unknown[];
    expect(data).toHaveLength(1);
    expect(JSON.stringify(data[0])).toContain('discord:1');
  });

  it('answers a thumbnail 503 when the kept images do not answer', async () => {
    const { url, cookie, warnings } = await stalledConsole();
    const res = await fetch(`${url}/thumbs/job-1/0`, { headers: { cookie } });
    expect(res.status).toBe(503);
    expect(await res.text()).toMatch(/^No answer from the kept images within 0 ms: try again in a moment\.\n$/);
    expect(warnings).toEqual(['the console had no answer from the kept images in time: answered 503']);
  });
});
