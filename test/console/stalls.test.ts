import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryAlertLog, type AlertRules } from '../../src/console/alerts/alert-log.js';
import { startConsole, type RunningConsole } from '../../src/console/index.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import type { ActiveJob, BreakerState } from '../../src/spend/types.js';
import { NO_ALERTS, TOKEN } from './console-harness.js';

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
    // A change, the live stream and a thumbnail not answered at once are late: the backends here never answer.
    backendWaitMs: 0,
  })) as RunningConsole;
  steps.push(() => running.close());
  const url = running.url!;
  const login = await fetch(`${url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }), redirect: 'manual', headers: { origin: url } });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const settings = await (await fetch(`${url}/alerts`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(settings)?.[1];
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
    expect(await resumed.text()).toMatch(/^No answer from the ledger within 0 s/);
    const rules = await post('/alerts/rules', { thresholds: '40, 90' });
    expect(rules.status).toBe(503);
    expect(await rules.text()).toMatch(/^No answer from the alert log within 0 s/);
    expect(warnings).toEqual(['the console had no answer from the ledger in time: answered 503', 'the console had no answer from the alert log in time: answered 503']);
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

  it('answers a thumbnail 503 when the kept images do not answer', async () => {
    const { url, cookie, warnings } = await stalledConsole();
    const res = await fetch(`${url}/thumbs/job-1/0`, { headers: { cookie } });
    expect(res.status).toBe(503);
    expect(await res.text()).toMatch(/^No answer from the kept images within 0 s: try again in a moment\.\n$/);
    expect(warnings).toEqual(['the console had no answer from the kept images in time: answered 503']);
  });
});
