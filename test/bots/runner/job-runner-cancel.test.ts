import { describe, expect, it, vi } from 'vitest';
import type { JobRunner, JobSpec, Requester } from '../../../bots/runner/index.js';
import { ImageLimiter } from '../../../src/index.js';
import type { QuotaStore } from '../../../src/internal.js';
import { expectOrderedSequence, recordingSink, requester, useRunnerKit, waitUntil } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();

function job(who: Requester, prompt = 'a long winding road'): JobSpec {
  return { kind: 'generate', prompt, options: { quality: 'low' }, requester: who };
}

/** A runner whose client sends one request at a time, so a second job waits in the queue. */
async function oneAtATime(options: { partialImages?: number } = {}): Promise<{ runner: JobRunner; store: import('../../../bots/runner/index.js').FileQuotaStore }> {
  return kit.runner({ partialImages: options.partialImages ?? 0, clientOptions: { limiter: new ImageLimiter({ maxConcurrent: 1 }) } });
}

const bound = (target: object, name: string | symbol): unknown => {
  const value: unknown = Reflect.get(target, name);
  return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
};

/** A ledger that takes no settle until `open` is called: as one that is slow or unreachable, for as long as a test needs. */
function heldSettles(store: QuotaStore) {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  let asked = 0;
  const held: QuotaStore = new Proxy(store, {
    get: (target, name) =>
      name === 'settle'
        ? async (...args: Parameters<QuotaStore['settle']>) => {
            asked += 1;
            await opened;
            return target.settle(...args);
          }
        : bound(target, name),
  });
  return {
    held,
    open,
    get asked() {
      return asked;
    },
  };
}

describe('JobRunner cancel', () => {
  it('tells the member at once that a job is cancelled, with what it is charged, while the ledger has not taken its settle yet', async () => {
    // The service sends one partial, then holds the rest until the request is aborted: the cancel comes while it is sent.
    kit.emu.emulator.injectFault('stalled_stream');
    const ledger = heldSettles(await kit.store());
    const { runner, store } = await kit.runner({ partialImages: 2, store: ledger.held });
    const who = requester();
    let jobId = '';
    const rec = recordingSink({
      onUpdate: (update) => {
        if (update.type === 'partial') runner.cancel(jobId, who);
      },
    });
    const handle = await runner.submit(job(who), rec.sink);
    jobId = handle.id;

    await waitUntil(() => rec.types.includes('cancelled'), 'the member is told the job is cancelled');
    const estimate = runner.get(handle.id)!.estimate.totalUsd;
    expect(ledger.asked).toBe(1);
    // Sent, nothing came back: its estimate, which the ledger charges once it answers.
    expect(rec.final).toMatchObject({ type: 'cancelled', byUserId: who.userId, cost: { totalUsd: estimate } });

    ledger.open();
    expect(await handle.done).toEqual(rec.final);
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBeCloseTo(estimate, 9);
  });

  it('tells the member at once that a job failed, with what it is charged, while the ledger has not taken its settle yet', async () => {
    kit.emu.emulator.injectFault('reset_mid_stream');
    const ledger = heldSettles(await kit.store());
    const { runner, store } = await kit.runner({ partialImages: 0, store: ledger.held });
    const who = requester();
    const rec = recordingSink();
    const handle = await runner.submit(job(who), rec.sink);

    await waitUntil(() => rec.types.includes('failed'), 'the member is told the job failed');
    expect(ledger.asked).toBe(1);
    const said = (rec.final as { cost?: { totalUsd: number } }).cost?.totalUsd;
    expect(said).toBeGreaterThan(0);

    ledger.open();
    await handle.done;
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBeCloseTo(said!, 9);
  });

  it('shows a completed job’s images at once, while the ledger has not taken its settle yet; done waits for the settle', async () => {
    const ledger = heldSettles(await kit.store());
    const { runner, store } = await kit.runner({ partialImages: 0, store: ledger.held });
    const who = requester();
    const rec = recordingSink();
    const handle = await runner.submit(job(who), rec.sink);
    let done = false;
    void handle.done.then(() => (done = true));

    await waitUntil(() => rec.types.includes('completed'), 'the member gets the result');
    expect(ledger.asked).toBe(1);
    expect(rec.final).toMatchObject({ type: 'completed', images: [expect.any(Buffer)] });
    expect(await store.usage({})).toEqual([]);
    expect(done).toBe(false);

    ledger.open();
    expect(await handle.done).toEqual(rec.final);
    expect(await store.usage({})).toEqual([expect.objectContaining({ outcome: 'completed' })]);
  });

  it('releases a job cancelled while its "sent" mark was being recorded: no byte of it left, so nothing is charged and its update says no cost', async () => {
    const plain = await kit.store();
    let cancel = () => {};
    const cancelling: QuotaStore = new Proxy(plain, {
      get: (target, name) =>
        name === 'markSent'
          ? async (jobId: string) => {
              cancel();
              await target.markSent(jobId);
            }
          : bound(target, name),
    });
    const { runner, store } = await kit.runner({ partialImages: 0, store: cancelling });
    const who = requester();
    const rec = recordingSink();
    const handle = await runner.submit(job(who), rec.sink);
    cancel = () => void runner.cancel(handle.id, who);

    expect(await handle.done).toEqual({ type: 'cancelled', jobId: handle.id, byUserId: who.userId, reason: 'requested' });
    expect(kit.emu.emulator.requests).toHaveLength(0);
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBe(0);
    expect(await store.usage({})).toEqual([]);
    expect(await store.activeJobs()).toEqual([]);
  });

  it('cancels a queued job before it is sent: the sink hears it, the service never sees it, the reservation goes back', async () => {
    kit.emu.emulator.configure({ latencyMs: 800 });
    const { runner, store } = await oneAtATime();
    const [alice, bob] = [requester(), requester()];
    const running = await runner.submit(job(alice, 'first in line'), () => {});
    const waiting = recordingSink();
    const queued = await runner.submit(job(bob, 'second in line'), waiting.sink);
    await waitUntil(() => runner.get(running.id)?.status === 'running' && waiting.types.includes('queued'), 'the second job is queued');

    expect(runner.get(queued.id)?.status).toBe('queued');
    expect(runner.cancel(queued.id, bob)).toBe(true);
    const final = await queued.done;

    expect(final).toEqual({ type: 'cancelled', jobId: queued.id, byUserId: bob.userId, reason: 'requested' });
    expectOrderedSequence(waiting.received.map((r) => r.update));
    expect(waiting.types).not.toContain('started');
    expect(await store.spentToday(`discord:${bob.userId}`, Date.now())).toBe(0);
    expect((await running.done).type).toBe('completed');
    expect(kit.emu.emulator.requests.map((r) => r.parsed?.prompt)).toEqual(['first in line']);
  });

  it('cancels a streaming job by closing the upstream connection, and keeps its estimate charged: the request reached the service', async () => {
    kit.emu.emulator.configure({ latencyMs: 4000 });
    const { runner, store } = await kit.runner({ partialImages: 2 });
    const who = requester();
    let jobId = '';
    const rec = recordingSink({
      onUpdate: (update) => {
        if (update.type === 'partial') runner.cancel(jobId, who);
      },
    });

    const handle = await runner.submit(job(who), rec.sink);
    jobId = handle.id;
    const final = await handle.done;

    expect(final.type).toBe('cancelled');
    expect(rec.types).toEqual(['queued', 'started', 'partial', 'cancelled']);
    await waitUntil(() => kit.emu.emulator.stats().openStreams === 0, 'the emulator sees the stream closed');
    expect(kit.emu.emulator.stats().imagesGenerated).toBe(0);
    // Cancelled mid-flight: the service may bill it, so its estimate stays spent.
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBeCloseTo(runner.get(handle.id)!.estimate.totalUsd, 9);
    expect(runner.get(handle.id)?.status).toBe('cancelled');
    expect(runner.activeJobs()).toHaveLength(0);
  });

  it('lets only the requester or an admin of the same server cancel a job', async () => {
    kit.emu.emulator.configure({ latencyMs: 3000 });
    const { runner } = await kit.runner({ partialImages: 0 });
    const owner = requester({ scopeId: 'guild-a' });
    const handle = await runner.submit(job(owner), () => {});

    expect(runner.cancel(handle.id, requester({ scopeId: 'guild-a' }))).toBe(false);
    expect(runner.cancel(handle.id, requester({ scopeId: 'guild-b', isAdmin: true }))).toBe(false);
    expect(runner.cancel(handle.id, { ...owner, platform: 'slack', isAdmin: true })).toBe(false);
    expect(runner.cancel('no-such-job', owner)).toBe(false);
    expect(runner.activeJobs().map((j) => j.id)).toEqual([handle.id]);
    expect(runner.get(handle.id)?.requester.userId).toBe(owner.userId);

    const admin = requester({ scopeId: 'guild-a', isAdmin: true });
    expect(runner.cancel(handle.id, admin)).toBe(true);
    expect(await handle.done).toMatchObject({ type: 'cancelled', byUserId: admin.userId });
    expect(runner.cancel(handle.id, owner)).toBe(false);
  });

  it('refuses to cancel a job that has completed', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    const who = requester();
    const handle = await runner.submit(job(who), () => {});
    expect((await handle.done).type).toBe('completed');
    expect(runner.cancel(handle.id, who)).toBe(false);
    expect(runner.get(handle.id)).toMatchObject({ status: 'completed', kind: 'generate' });
  });

  it('on shutdown cancels queued jobs and lets the running one finish within the grace period', async () => {
    kit.emu.emulator.configure({ latencyMs: 500 });
    const { runner, store } = await oneAtATime();
    const [alice, bob] = [requester(), requester()];
    const running = await runner.submit(job(alice), () => {});
    const queued = await runner.submit(job(bob), () => {});
    await waitUntil(() => runner.get(running.id)?.status === 'running', 'the first job runs');

    await runner.shutdown({ graceMs: 20_000 });

    expect(await queued.done).toEqual({ type: 'cancelled', jobId: queued.id, byUserId: '', reason: 'shutdown' });
    expect((await running.done).type).toBe('completed');
    expect(await store.spentToday(`discord:${bob.userId}`, Date.now())).toBe(0);
    expect(kit.emu.emulator.requests).toHaveLength(1);
  });

  it('on shutdown waits within the grace for a completed job’s settle the ledger has not taken yet, counting its reservation meanwhile', async () => {
    const ledger = heldSettles(await kit.store());
    const { runner, store } = await kit.runner({ partialImages: 0, store: ledger.held });
    const who = requester();
    const rec = recordingSink();
    const handle = await runner.submit(job(who), rec.sink);
    await waitUntil(() => rec.types.includes('completed') && ledger.asked === 1, 'the member gets the result, its settle held');
    const estimate = runner.get(handle.id)!.estimate.totalUsd;
    expect(runner.liveReadings().reservedUsd()).toBeCloseTo(estimate, 9);

    // The ledger stays away longer than the few seconds a stop gives its last writes, less than the grace.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let stopped = false;
    const stopping = runner.shutdown({ graceMs: 60_000 }).then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(30_000);
    vi.useRealTimers();
    expect(stopped).toBe(false);

    ledger.open();
    await stopping;
    expect(await store.usage({})).toEqual([expect.objectContaining({ jobId: handle.id, outcome: 'completed', basis: 'table' })]);
    expect(runner.liveReadings().reservedUsd()).toBe(0);
  });

  it('on shutdown stops a running job that outlasts the grace period, closes its stream and keeps its estimate charged', async () => {
    kit.emu.emulator.configure({ latencyMs: 20_000 });
    const { runner, store } = await kit.runner({ partialImages: 0 });
    const who = requester();
    const handle = await runner.submit(job(who), () => {});
    await waitUntil(() => kit.emu.emulator.stats().openStreams === 1, 'the stream is open');

    await runner.shutdown({ graceMs: 50 });

    expect(await handle.done).toMatchObject({ type: 'cancelled', reason: 'shutdown' });
    await waitUntil(() => kit.emu.emulator.stats().openStreams === 0, 'the emulator sees the stream closed');
    expect(kit.emu.emulator.stats().imagesGenerated).toBe(0);
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBeCloseTo(runner.get(handle.id)!.estimate.totalUsd, 9);
  });

  it('on shutdown with until, waits for a job’s last update no later than that, the surface never taking it', async () => {
    kit.emu.emulator.configure({ latencyMs: 20_000 });
    const { runner } = await kit.runner({ partialImages: 0 });
    // A surface whose platform never takes the job's last message.
    let finalArrived = false;
    let release = () => {};
    const handle = await runner.submit(job(requester()), (update) => {
      if (update.type !== 'cancelled') return;
      finalArrived = true;
      return new Promise<void>((resolve) => (release = resolve));
    });
    await waitUntil(() => kit.emu.emulator.stats().openStreams === 1, 'the stream is open');

    // Without until it would wait 5 s for the last update, then 5 s more for the history.
    await runner.shutdown({ graceMs: 0, until: Date.now() + 300 });
    expect(finalArrived).toBe(true);
    expect(runner.get(handle.id)?.status).toBe('cancelled');
    release();
  }, 4_000);

  it('releases a job cancelled while it waits to retry a 429: what is at the service bills nothing, so nothing is charged', async () => {
    kit.emu.emulator.injectFault('rate_limited', { count: 1, retryAfterMs: 20_000 });
    const waits: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (_: object, msg?: string) => void waits.push(msg ?? '') };
    const { runner, store } = await kit.runner({ partialImages: 0, clientOptions: { logger } });
    const who = requester();
    const handle = await runner.submit(job(who), () => {});
    await waitUntil(() => waits.includes('retrying image request'), 'the job waits to be sent again');

    expect(runner.cancel(handle.id, who)).toBe(true);
    expect(await handle.done).toMatchObject({ type: 'cancelled' });
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBe(0);
    expect(kit.emu.emulator.requests).toHaveLength(1);
  });

  it('charges a job cancelled after its first image what it produced at table price, plus the estimate of the image cut off', async () => {
    kit.emu.emulator.configure({ latencyMs: 1500 });
    const { runner, store } = await kit.runner({ partialImages: 1 });
    const who = requester();
    const spec: JobSpec = { kind: 'generate', prompt: 'two lighthouses', options: { quality: 'low', size: '1024x1024', n: 2 }, requester: who };
    const sink = recordingSink();
    const handle = await runner.submit(spec, sink.sink);
    // The first image has completed (the runner counts it) while the second is still being drawn: its preview came.
    await waitUntil(() => sink.received.some(({ update }) => update.type === 'partial' && update.imageIndex === 1), 'the second image is being drawn', 15_000);
    expect(runner.cancel(handle.id, who)).toBe(true);
    expect(await handle.done).toMatchObject({ type: 'cancelled' });

    const estimate = runner.get(handle.id)!.estimate;
    // low 1024x1024 has a table price: one produced image plus one cut off mid-flight.
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBeCloseTo(2 * estimate.perImageUsd, 9);
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBeGreaterThan(0);
  });

  it('lets five jobs cancelled right after their first image spend no more than the budget allows', async () => {
    kit.emu.emulator.configure({ latencyMs: 600 });
    const { runner, store } = await kit.runner({ partialImages: 0, limits: { userDailyUsd: 0.05 } });
    const who = requester();
    const spec: JobSpec = { kind: 'generate', prompt: 'a fleet', options: { quality: 'low', size: '1024x1024', n: 2 }, requester: who };
    let accepted = 0;
    for (let i = 0; i < 5; i++) {
      const handle = await runner.submit(spec, () => {}).catch(() => undefined);
      if (!handle) continue;
      accepted++;
      const made = kit.emu.emulator.stats().imagesGenerated;
      await waitUntil(() => kit.emu.emulator.stats().imagesGenerated > made, 'the job’s first image is made', 15_000);
      runner.cancel(handle.id, who);
      await handle.done;
    }
    const spent = await store.spentToday(`discord:${who.userId}`, Date.now());
    expect(spent).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(0.05 + 1e-9);
    expect(accepted).toBeLessThan(5);
  });
});
