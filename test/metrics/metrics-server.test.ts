import { afterEach, describe, expect, it, vi } from 'vitest';
import { BACKEND_WAIT_MS, createMetrics, startMetricsServer, type HealthCheck, type LedgerReadings, type MetricsServer } from '../../src/metrics/index.js';
import { useCleanup } from '../helpers/service-fakes.js';
import { scrape } from './scrape.js';

const defer = useCleanup();

async function serve(checks: Record<string, HealthCheck> = {}, extra: { checkTimeoutMs?: number } = {}): Promise<MetricsServer> {
  const metrics = createMetrics();
  const server = await startMetricsServer({ registry: metrics.registry, checks, port: 0, ...extra });
  defer(() => server.close());
  return server;
}

describe('the metrics server', () => {
  it('listens on loopback unless told otherwise, and serves the text format a Prometheus parser reads', async () => {
    const server = await serve();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const scraped = await scrape(`${server.url}/metrics`);

    expect(scraped.family('pictor_jobs_total').type).toBe('COUNTER');
    expect(scraped.family('pictor_reserved_usd').type).toBe('GAUGE');
    expect(scraped.family('pictor_request_duration_seconds').type).toBe('HISTOGRAM');
    // Node's own process metrics, under the same prefix.
    expect(scraped.families.some((f) => f.name === 'pictor_process_cpu_seconds_total')).toBe(true);
  });

  it('answers /healthz 200 with every check when all pass, and 503 naming the one that fails', async () => {
    let slackUp = true;
    const server = await serve({ discord: () => true, slack: () => slackUp, redis: async () => true });

    const ready = await fetch(`${server.url}/healthz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { discord: true, slack: true, redis: true } });

    slackUp = false;
    const down = await fetch(`${server.url}/healthz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'unavailable', checks: { discord: true, slack: false, redis: true } });
  });

  it('counts a check that throws or hangs as failed, and still answers in time', async () => {
    const server = await serve(
      { broken: () => Promise.reject(new Error('boom')), hung: () => new Promise<boolean>(() => {}) },
      { checkTimeoutMs: 200 },
    );

    const started = Date.now();
    const answer = await fetch(`${server.url}/healthz`);

    expect(answer.status).toBe(503);
    expect(await answer.json()).toEqual({ status: 'unavailable', checks: { broken: false, hung: false } });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('serves nothing else: other paths are 404, other methods 405', async () => {
    const server = await serve();

    expect((await fetch(`${server.url}/`)).status).toBe(404);
    expect((await fetch(`${server.url}/metrics/../.env`)).status).toBe(404);
    const post = await fetch(`${server.url}/metrics`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('stops listening when closed', async () => {
    const metrics = createMetrics();
    const server = await startMetricsServer({ registry: metrics.registry, checks: {}, port: 0 });
    await server.close();

    await expect(fetch(`${server.url}/metrics`)).rejects.toThrow();
  });

  it('exports readiness as a metric (for an alert rule) and what the account spent against its caps, read from the ledger', async () => {
    let up = true;
    const metrics = createMetrics();
    metrics.watchLedger({ spentUsd: async (period) => (period === 'day' ? 1.25 : 30.5), capUsd: { day: 5, month: undefined } });
    const server = await startMetricsServer({ registry: metrics.registry, checks: { discord: () => up }, port: 0 });
    defer(() => server.close());
    const text = async () => (await fetch(`${server.url}/metrics`)).text();
    let scraped = await text();
    expect(scraped).toMatch(/^pictor_ready 1$/m);
    expect(scraped).toMatch(/^pictor_account_spent_usd\{period="day"\} 1\.25$/m);
    expect(scraped).toMatch(/^pictor_account_spent_usd\{period="month"\} 30\.5$/m);
    expect(scraped).toMatch(/^pictor_account_cap_usd\{period="day"\} 5$/m);
    expect(scraped).not.toMatch(/^pictor_account_cap_usd\{period="month"\}/m);
    up = false;
    scraped = await text();
    expect(scraped).toMatch(/^pictor_ready 0$/m);
  });
});

describe('a scrape while Redis hangs', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A ledger whose reads never answer until `answer` is called; `reads` counts the reads started. */
  function stalledLedger() {
    let answer: (usd: number) => void = () => {};
    const hung = new Promise<number>((resolve) => (answer = resolve));
    const state = { reads: 0, hung: true };
    const ledger: LedgerReadings = {
      spentUsd: (period) => {
        state.reads += 1;
        return state.hung ? hung : Promise.resolve(period === 'day' ? 2 : 40);
      },
      capUsd: { day: 5, month: undefined },
    };
    return { ledger, state, answer: (usd: number) => ((state.hung = false), answer(usd)) };
  }

  it('is answered within the bound with pictor_ready 0 and without the ledger series, logged once until the ledger answers again', async () => {
    const logged: string[] = [];
    const logger = { info: (_: object, message?: string) => logged.push(`info: ${message}`), warn: (_: object, message?: string) => logged.push(`warn: ${message}`) };
    const metrics = createMetrics({ logger, backendWaitMs: 20 });
    const stalled = stalledLedger();
    metrics.watchLedger(stalled.ledger);
    const server = await startMetricsServer({ registry: metrics.registry, checks: { redis: () => new Promise<boolean>(() => {}) }, port: 0, checkTimeoutMs: 20 });
    defer(() => server.close());

    const first = await scrape(`${server.url}/metrics`);
    const second = await scrape(`${server.url}/metrics`);

    for (const scraped of [first, second]) {
      expect(scraped.value('pictor_ready')).toBe(0);
      expect(scraped.family('pictor_account_spent_usd').metrics).toEqual([]);
      expect(scraped.value('pictor_account_cap_usd', { period: 'day' })).toBe(5);
    }
    // The second scrape waited on the read the first left running, rather than piling another on the hung ledger.
    expect(stalled.state.reads).toBe(2);
    expect(logged).toEqual([expect.stringMatching(/^warn: could not read what the account spent for \/metrics/)]);

    stalled.answer(1.5);
    const back = await scrape(`${server.url}/metrics`);
    expect(back.value('pictor_account_spent_usd', { period: 'day' })).toBe(2);
    expect(back.value('pictor_account_spent_usd', { period: 'month' })).toBe(40);
    expect(logged).toEqual([expect.stringMatching(/^warn: /), 'info: the ledger answers /metrics again']);
  });

  it('leaves the series out of a scrape when the ledger fails, and answers the rest', async () => {
    const metrics = createMetrics();
    metrics.watchLedger({ spentUsd: () => Promise.reject(new Error('READONLY')), capUsd: { day: undefined, month: undefined } });
    const server = await startMetricsServer({ registry: metrics.registry, checks: { redis: () => true }, port: 0 });
    defer(() => server.close());

    const scraped = await scrape(`${server.url}/metrics`);

    expect(scraped.value('pictor_ready')).toBe(1);
    expect(scraped.family('pictor_account_spent_usd').metrics).toEqual([]);
  });

  it('waits 3 s by default, the bound of the readiness checks, for the checks and the ledger alike', async () => {
    const metrics = createMetrics();
    metrics.watchLedger(stalledLedger().ledger);
    const server = await startMetricsServer({ registry: metrics.registry, checks: { redis: () => new Promise<boolean>(() => {}) }, port: 0 });
    defer(() => server.close());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let text: string | undefined;

    const collected = metrics.registry.metrics().then((answer) => (text = answer));
    await vi.advanceTimersByTimeAsync(BACKEND_WAIT_MS - 1);
    expect(text).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await collected;

    expect(BACKEND_WAIT_MS).toBe(3_000);
    expect(text).toMatch(/^pictor_ready 0$/m);
    expect(text).not.toMatch(/^pictor_account_spent_usd\{/m);
  });
});
