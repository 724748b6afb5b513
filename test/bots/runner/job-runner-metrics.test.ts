import { describe, expect, it } from 'vitest';
import type { JobSpec, QuotaStore } from '../../../bots/runner/index.js';
import { createMetrics, startMetricsServer, type Metrics } from '../../../src/metrics/index.js';
import { PRICE_TABLE } from '../../../src/index.js';
import { editBeingFetched, recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';
import { useCleanup } from '../../helpers/service-fakes.js';
import { scrape } from '../../metrics/scrape.js';

const kit = useRunnerKit();
const defer = useCleanup();
const LOW = PRICE_TABLE['1024x1024'].low;

function job(overrides: Partial<JobSpec> = {}): JobSpec {
  return { kind: 'generate', prompt: 'a windmill at dusk', options: { quality: 'low' }, requester: requester(), ...overrides };
}

/** A runner that counts into a registry of its own, served on a free loopback port like `npm start` does. */
async function meteredRunner(options: Parameters<typeof kit.runner>[0] = {}) {
  const metrics: Metrics = createMetrics();
  const made = await kit.runner({ ...options, metrics });
  metrics.watch(made.runner.liveReadings());
  const server = await startMetricsServer({ registry: metrics.registry, checks: {}, port: 0 });
  defer(() => server.close());
  return { ...made, metrics, scrape: () => scrape(`${server.url}/metrics`) };
}

describe('JobRunner metrics, as Prometheus scrapes them', () => {
  it('counts a completed job, its images by size and quality, and exactly the USD the ledger settled', async () => {
    const { runner, store, scrape } = await meteredRunner({ partialImages: 1 });

    const first = await (await runner.submit(job({ options: { quality: 'low', n: 2 } }), recordingSink().sink)).done;
    const second = await (await runner.submit(job({ options: { quality: 'medium', size: '1536x1024' } }), recordingSink().sink)).done;
    expect([first.type, second.type]).toEqual(['completed', 'completed']);

    const scraped = await scrape();
    expect(scraped.value('pictor_jobs_total', { surface: 'discord', outcome: 'completed' })).toBe(2);
    expect(scraped.value('pictor_images_total', { size: '1024x1024', quality: 'low' })).toBe(2);
    expect(scraped.value('pictor_images_total', { size: '1536x1024', quality: 'medium' })).toBe(1);
    const settled = (await store.usage({})).reduce((sum, r) => sum + r.costUsd, 0);
    expect(settled).toBeGreaterThan(2 * LOW - 1e-9);
    expect(scraped.value('pictor_spent_usd_total')).toBeCloseTo(settled, 9);
    expect(scraped.count('pictor_queue_wait_seconds')).toBe(2);
    expect(scraped.count('pictor_request_duration_seconds')).toBe(2);
    expect(scraped.text).toMatch(/^pictor_request_duration_seconds_count\{operation="generate",stream="true"\} 2$/m);
    // Nothing is left reserved or queued once the jobs have ended.
    expect(scraped.value('pictor_reserved_usd')).toBe(0);
    expect(scraped.value('pictor_queue_length')).toBe(0);
    expect(scraped.value('pictor_queued_input_bytes')).toBe(0);
  });

  it('shows the input bytes the queue holds for edits being fetched, and none once they are given back', async () => {
    const { runner, scrape } = await meteredRunner();
    const fetching = editBeingFetched(runner, requester(), 30_000);
    await fetching.admitted;

    expect((await scrape()).value('pictor_queued_input_bytes')).toBe(30_000);
    fetching.giveUp();
    await fetching.handle;
    expect((await scrape()).value('pictor_queued_input_bytes')).toBe(0);
  });

  it('shows what a running job holds in reserve while it runs', async () => {
    const { runner, scrape } = await meteredRunner({ partialImages: 0 });
    let reservedWhileRunning: number | undefined;
    const rec = recordingSink({
      onUpdate: async (update) => {
        if (update.type === 'started') reservedWhileRunning = (await scrape()).value('pictor_reserved_usd');
      },
    });

    const handle = await runner.submit(job({ options: { quality: 'high' } }), rec.sink);
    await handle.done;

    expect(reservedWhileRunning).toBeCloseTo(runner.get(handle.id)!.estimate.totalUsd, 9);
  });

  it('counts a refusal by its cap, as a refused job of its surface, with nothing spent', async () => {
    const { runner, scrape } = await meteredRunner({ limits: { userDailyUsd: LOW / 2 } });

    await expect(runner.submit(job({ requester: requester({ platform: 'slack' }) }), recordingSink().sink)).rejects.toMatchObject({ code: 'budget_user_daily' });

    const scraped = await scrape();
    expect(scraped.value('pictor_refusals_total', { code: 'budget_user_daily' })).toBe(1);
    expect(scraped.value('pictor_jobs_total', { surface: 'slack', outcome: 'refused' })).toBe(1);
    expect(scraped.value('pictor_spent_usd_total')).toBe(0);
  });

  it('counts a refusal before a form opens (a spent budget), as a refused job', async () => {
    const { runner, scrape } = await meteredRunner({ limits: { userDailyUsd: 0 } });
    let refusal: unknown;
    const opened = await runner.requestForm(requester(), { refuse: async (r) => void (refusal = r), accept: async () => {} });

    expect(opened).toBe(false);
    expect(refusal).toMatchObject({ code: 'budget_user_daily' });
    const scraped = await scrape();
    expect(scraped.value('pictor_refusals_total', { code: 'budget_user_daily' })).toBe(1);
    expect(scraped.value('pictor_jobs_total', { surface: 'discord', outcome: 'refused' })).toBe(1);
  });

  it('counts as spent only what this process settled in the ledger: not a job another process already ended', async () => {
    const ledger = await kit.store();
    // The reservation ends just before this process settles, as a reconcile by another process would after this one's
    // lease lapsed (there it is charged at its estimate, and counted by that process).
    const store = new Proxy(ledger, {
      get(target, property) {
        if (property === 'settle') {
          return async (...args: Parameters<QuotaStore['settle']>) => {
            await target.release(args[0]);
            return target.settle(...args);
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { runner, scrape } = await meteredRunner({ store });

    const final = await (await runner.submit(job(), recordingSink().sink)).done;

    expect(final.type).toBe('completed');
    expect(await ledger.usage({})).toEqual([]);
    const scraped = await scrape();
    expect(scraped.value('pictor_spent_usd_total')).toBe(0);
    expect(scraped.value('pictor_jobs_total', { surface: 'discord', outcome: 'completed' })).toBe(1);
  });

  it('counts the 429s of the image service and the retries they caused', async () => {
    const { runner, scrape } = await meteredRunner({ partialImages: 0 });
    kit.emu.emulator.injectFault('rate_limited', { count: 2, retryAfterMs: 20 });

    const final = await (await runner.submit(job(), recordingSink().sink)).done;

    expect(final.type).toBe('completed');
    const scraped = await scrape();
    expect(scraped.value('pictor_rate_limited_total')).toBe(2);
    expect(scraped.value('pictor_retries_total', { code: 'rate_limited' })).toBe(2);
  });

  it('counts a failed job and a cancelled one under their outcomes', async () => {
    const { runner, scrape } = await meteredRunner();

    const failed = await (await runner.submit(job({ prompt: 'something forbidden' }), recordingSink().sink)).done;
    const by = requester();
    const handle = await runner.submit(job({ requester: by }), recordingSink().sink);
    runner.cancel(handle.id, by);
    const cancelled = await handle.done;

    expect([failed.type, cancelled.type]).toEqual(['failed', 'cancelled']);
    const scraped = await scrape();
    expect(scraped.value('pictor_jobs_total', { surface: 'discord', outcome: 'failed' })).toBe(1);
    expect(scraped.value('pictor_jobs_total', { surface: 'discord', outcome: 'cancelled' })).toBe(1);
  });

  it('never labels a series with a user, a prompt or a job id', async () => {
    const { runner, scrape } = await meteredRunner();
    const spec = job({ prompt: 'a very particular prompt', requester: requester({ userId: 'user-4242', scopeId: 'guild-4242' }) });

    const handle = await runner.submit(spec, recordingSink().sink);
    await handle.done;

    const { text } = await scrape();
    for (const secretish of ['user-4242', 'guild-4242', 'particular prompt', handle.id]) expect(text).not.toContain(secretish);
  });
});
