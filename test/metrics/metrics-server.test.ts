import { describe, expect, it } from 'vitest';
import { createMetrics, startMetricsServer, type HealthCheck, type MetricsServer } from '../../src/metrics/index.js';
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
