import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isJobRefusedError, JobRefusedError, type JobRunner, type JobSpec, type Requester } from '../../../bots/runner/index.js';
import { describeQueueFull, QueueBound, QueuePositions } from '../../../bots/runner/queue-bound.js';
import { describeFailure } from '../../../bots/runner/describe-failure.js';
import { sayWords } from '../../../bots/runner/index.js';
import { ImageLimiter } from '../../../src/index.js';
import { makeImage } from '../../helpers/images.js';
import { editBeingFetched, recordingSink, requester, useRunnerKit, waitUntil } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();

function lowJob(prompt: string): JobSpec {
  return { kind: 'generate', prompt, options: { quality: 'low' }, requester: requester() };
}

describe('the runner with a bound on queued jobs', () => {
  it('refuses a job of a burst at once once as many jobs wait as the bound allows: nothing is reserved or sent for it', async () => {
    kit.emu.emulator.configure({ latencyMs: 300 });
    const limiter = new ImageLimiter({ maxConcurrent: 1 });
    const { runner, store } = await kit.runner({ partialImages: 0, maxQueuedJobs: 2, clientOptions: { limiter } });
    const late = requester();

    const submits = await Promise.allSettled([
      runner.submit(lowJob('one'), recordingSink().sink),
      runner.submit(lowJob('two'), recordingSink().sink),
      runner.submit({ ...lowJob('three'), requester: late }, recordingSink().sink),
    ]);

    expect(submits.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    const error = (submits[2] as PromiseRejectedResult).reason as JobRefusedError;
    expect(isJobRefusedError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'queue_full', limit: 2, used: 2 });
    expect(error.words).toMatchObject({ key: 'refusal.queue_full', values: { queued: 2, max: 2, known: 'no' } });
    expect(describeFailure(error)).toMatchObject({ code: 'queue_full', retryable: true });
    for (const s of submits) if (s.status === 'fulfilled') expect((await s.value.done).type).toBe('completed');
    expect(kit.emu.emulator.requests).toHaveLength(2);
    expect(await store.spentToday(`discord:${late.userId}`, Date.now())).toBe(0);
    await limiter.stop();
  });

  it('takes jobs again once the queue has room', async () => {
    const { runner } = await kit.runner({ partialImages: 0, maxQueuedJobs: 1 });
    const first = await runner.submit(lowJob('first'), recordingSink().sink);
    await expect(runner.submit(lowJob('too soon'), recordingSink().sink)).rejects.toMatchObject({ code: 'queue_full' });
    expect((await first.done).type).toBe('completed');
    const next = await runner.submit(lowJob('next'), recordingSink().sink);
    expect((await next.done).type).toBe('completed');
  });

  it('refuses a bound that is not a whole number of jobs, 1 or more', async () => {
    await expect(kit.runner({ maxQueuedJobs: 0 })).rejects.toMatchObject({ code: 'validation_error', param: 'maxQueuedJobs' });
  });
});

/** A limiter that keeps every request waiting until `open`, then lets them go (or, with `fail`, refuses them): jobs stay queued meanwhile. */
class GateLimiter extends ImageLimiter {
  #open!: (fail: boolean) => void;
  readonly #gate = new Promise<boolean>((resolve) => (this.#open = resolve));

  override async acquire(options: Parameters<ImageLimiter['acquire']>[0]): Promise<() => void> {
    if (await this.#gate) throw new Error('the limiter broke');
    return super.acquire(options);
  }

  open(options: { fail?: boolean } = {}): void {
    this.#open(options.fail ?? false);
  }
}

describe('the runner with a bound on the input images held by queued jobs', () => {
  let image: Buffer;
  const edit = (who: Requester, prompt = 'make it blue'): JobSpec => ({ kind: 'edit', prompt, options: { quality: 'low' }, images: [{ data: image, filename: 'a.png' }], requester: who });

  /** A runner whose queue holds the images of one edit and not two, and whose requests wait at the gate. */
  async function oneEditOfRoom(): Promise<{ runner: JobRunner; gate: GateLimiter; store: Awaited<ReturnType<typeof kit.runner>>['store'] }> {
    image = Buffer.from(await makeImage('png'));
    const gate = new GateLimiter({ maxConcurrent: 1 });
    const { runner, store } = await kit.runner({ partialImages: 0, maxQueuedInputBytes: Math.floor(image.length * 1.5), clientOptions: { limiter: gate } });
    return { runner, gate, store };
  }

  it('refuses an edit whose images would take the queued ones past the bound: queue_full, nothing reserved or sent; a generation is still taken', async () => {
    const { runner, gate, store } = await oneEditOfRoom();
    const first = await runner.submit(edit(requester(), 'first'), recordingSink().sink);
    const late = requester();

    const refused = await runner.submit(edit(late, 'second'), recordingSink().sink).catch((error: unknown) => error);

    expect(isJobRefusedError(refused)).toBe(true);
    expect(refused).toMatchObject({ code: 'queue_full', limit: Math.floor(image.length * 1.5), used: image.length });
    expect(describeFailure(refused)).toMatchObject({ code: 'queue_full', retryable: true });
    expect(await store.spentToday(`discord:${late.userId}`, Date.now())).toBe(0);
    const generation = await runner.submit({ kind: 'generate', prompt: 'no images', options: { quality: 'low' }, requester: requester() }, recordingSink().sink);
    gate.open();
    expect((await first.done).type).toBe('completed');
    expect((await generation.done).type).toBe('completed');
    expect(kit.emu.emulator.requests.map((r) => r.parsed?.prompt).sort()).toEqual(['first', 'no images']);
    await gate.stop();
  });

  it('refuses an edit whose images alone pass the bound, even with nothing else held: input_too_large, not worth retrying, nothing reserved or sent', async () => {
    const { runner, gate, store } = await oneEditOfRoom();
    const who = requester();
    const big = { ...edit(who), images: [{ data: image }, { data: image }] };
    const refused = await runner.submit(big, recordingSink().sink).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'input_too_large', limit: Math.floor(image.length * 1.5), used: 2 * image.length });
    expect((refused as Error).message).toMatch(/^This edit’s images come to \d+ MB, more than this bot takes at once \(\d+ MB\), so it was not started and costs nothing; use fewer or smaller images\.$/);
    expect(describeFailure(refused)).toMatchObject({ code: 'input_too_large', retryable: false });
    const fetching = editBeingFetched(runner, who, 2 * image.length);
    expect(await fetching.admitted).toMatchObject({ code: 'input_too_large' });
    expect(fetching.fetchStarted).toBe(false);
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBe(0);
    gate.open();
    expect(kit.emu.emulator.requests).toHaveLength(0);
    await gate.stop();
  });

  it('counts a sent edit’s bytes until the service has taken its request, then gives them back', async () => {
    image = Buffer.from(await makeImage('png'));
    const held = await holdingService(kit.emu.url);
    try {
      const { runner: sending } = await kit.runner({ partialImages: 0, maxQueuedInputBytes: Math.floor(image.length * 1.5), clientOptions: { baseURL: held.url } });
      const first = await sending.submit(edit(requester(), 'first'), recordingSink().sink);
      // Its whole body has reached the service, which has not answered yet: a retry (a 429, a 5xx) would need the images.
      await held.bodyReceived;
      expect(sending.get(first.id)?.status).toBe('running');
      expect(sending.liveReadings().queuedInputBytes()).toBe(image.length);
      await expect(sending.submit(edit(requester()), recordingSink().sink)).rejects.toMatchObject({ code: 'queue_full' });

      held.answer();
      await waitUntil(() => sending.liveReadings().queuedInputBytes() === 0, 'the service to take the first edit');
      const next = await sending.submit(edit(requester(), 'next'), recordingSink().sink);
      expect((await first.done).type).toBe('completed');
      expect((await next.done).type).toBe('completed');
    } finally {
      await held.close();
    }
  });

  it('gives a queued edit’s bytes back once it is sent and the service has taken it', async () => {
    const { runner, gate } = await oneEditOfRoom();
    const first = await runner.submit(edit(requester(), 'first'), recordingSink().sink);
    await expect(runner.submit(edit(requester()), recordingSink().sink)).rejects.toMatchObject({ code: 'queue_full' });
    kit.emu.emulator.configure({ latencyMs: 2000 });
    gate.open();
    await waitUntil(() => runner.get(first.id)?.status === 'running' && runner.liveReadings().queuedInputBytes() === 0, 'the first edit is taken');

    const next = await runner.submit(edit(requester(), 'next'), recordingSink().sink);
    expect(runner.get(first.id)?.status).toBe('running');
    expect((await next.done).type).toBe('completed');
    await gate.stop();
  });

  it('gives a queued edit’s bytes back when it is cancelled', async () => {
    const { runner, gate } = await oneEditOfRoom();
    const who = requester();
    const first = await runner.submit(edit(who, 'first'), recordingSink().sink);
    await expect(runner.submit(edit(requester()), recordingSink().sink)).rejects.toMatchObject({ code: 'queue_full' });

    expect(runner.cancel(first.id, who)).toBe(true);
    const next = await runner.submit(edit(requester(), 'next'), recordingSink().sink);
    gate.open();
    expect((await first.done).type).toBe('cancelled');
    expect((await next.done).type).toBe('completed');
    await gate.stop();
  });

  it('gives a queued edit’s bytes back when it fails before it is sent', async () => {
    const { runner, gate } = await oneEditOfRoom();
    const first = await runner.submit(edit(requester(), 'first'), recordingSink().sink);
    await expect(runner.submit(edit(requester()), recordingSink().sink)).rejects.toMatchObject({ code: 'queue_full' });

    gate.open({ fail: true });
    expect((await first.done).type).toBe('failed');
    expect(kit.emu.emulator.requests).toHaveLength(0);
    const next = editBeingFetched(runner, requester(), image.length);
    expect(await next.admitted).toBeUndefined();
    next.giveUp();
    await next.handle;
    await gate.stop();
  });

  it('holds room for an edit whose images are being fetched: another is refused before it fetches anything, until the download is given up', async () => {
    const { runner, gate, store } = await oneEditOfRoom();
    const fetching = editBeingFetched(runner, requester(), image.length);
    expect(await fetching.admitted).toBeUndefined();

    const other = requester();
    const refused = editBeingFetched(runner, other, image.length);
    expect(await refused.admitted).toMatchObject({ code: 'queue_full', used: image.length });
    expect(await refused.handle).toBeUndefined();
    await expect(runner.submit(edit(requester()), recordingSink().sink)).rejects.toMatchObject({ code: 'queue_full' });
    expect(refused.fetchStarted).toBe(false);
    expect(await store.spentToday(`discord:${other.userId}`, Date.now())).toBe(0);

    fetching.giveUp();
    expect(await fetching.handle).toBeUndefined();
    const handle = await runner.submit(edit(requester()), recordingSink().sink);
    gate.open();
    expect((await handle.done).type).toBe('completed');
    await gate.stop();
  });

  it('refuses an edit whose images turn out larger than declared once they are here, when the queue has no room for them: nothing sent or charged', async () => {
    const { runner, gate, store } = await oneEditOfRoom();
    const first = await runner.submit(edit(requester(), 'first'), recordingSink().sink);
    const late = requester();
    const declaredSmall = editBeingFetched(runner, late, 10);
    expect(await declaredSmall.admitted).toBeUndefined();
    declaredSmall.arrive([{ data: image }]);

    expect(await declaredSmall.handle).toBeUndefined();
    expect(await store.spentToday(`discord:${late.userId}`, Date.now())).toBe(0);
    gate.open();
    expect((await first.done).type).toBe('completed');
    expect(kit.emu.emulator.requests).toHaveLength(1);
    await gate.stop();
  });

  it('refuses an edit being fetched at once when as many jobs wait as the queue takes', async () => {
    const { runner } = await kit.runner({ partialImages: 0, maxQueuedJobs: 1, clientOptions: { limiter: new GateLimiter({ maxConcurrent: 1 }) } });
    await runner.submit(lowJob('waiting'), recordingSink().sink);
    expect(await editBeingFetched(runner, requester(), 1000).admitted).toMatchObject({ code: 'queue_full', limit: 1, used: 1 });
  });

  it('refuses a bound that is not a whole number of bytes, 1 or more', async () => {
    await expect(kit.runner({ maxQueuedInputBytes: 0 })).rejects.toMatchObject({ code: 'validation_error', param: 'maxQueuedInputBytes' });
  });
});

describe('QueueBound', () => {
  it('has room below the bound', () => {
    const bound = new QueueBound({ maxQueued: 3, now: () => 0 });
    expect(bound.refusal({ jobs: 2, inputBytes: 0 })).toBeUndefined();
    expect(bound.refusal({ jobs: 3, inputBytes: 0 })).toBeInstanceOf(JobRefusedError);
  });

  it('has room for an edit’s images up to the bound, never for one whose images alone pass it, and for a generation whatever is held', () => {
    const bound = new QueueBound({ maxQueued: 10, maxQueuedInputBytes: 100, now: () => 0 });
    expect(bound.refusal({ jobs: 1, inputBytes: 60 }, 40)).toBeUndefined();
    expect(bound.refusal({ jobs: 1, inputBytes: 60 }, 41)).toMatchObject({ code: 'queue_full', limit: 100, used: 60 });
    expect(bound.refusal({ jobs: 0, inputBytes: 0 }, 100)).toBeUndefined();
    expect(bound.refusal({ jobs: 0, inputBytes: 0 }, 101)).toMatchObject({ code: 'input_too_large', limit: 100, used: 101 });
    expect(bound.refusal({ jobs: 1, inputBytes: 500 }, 0)).toBeUndefined();
  });

  it('names the wait of one job, not none, when the images held are all of edits still being fetched', () => {
    let now = 0;
    const bound = new QueueBound({ maxQueued: 10, maxQueuedInputBytes: 100, now: () => now });
    for (const at of [10_000, 40_000]) {
      now = at;
      bound.started();
    }
    now = 60_000;
    // 2 jobs sent in a minute: one job's wait is about 30 s.
    expect(bound.refusal({ jobs: 0, inputBytes: 90 }, 20)?.words).toMatchObject({ key: 'refusal.queue_full_images', values: { known: 'yes' } });
    // The wait said is 30 s exactly (the sentence's words are checked in describe-refusal).
    expect(sayWords('en', bound.refusal({ jobs: 0, inputBytes: 90 }, 20)!.words)).toBe(
      sayWords('en', describeQueueFull({ queued: 0, maxQueued: 10, waitMs: 30_000, input: { heldBytes: 90, jobBytes: 20, maxBytes: 100 } })),
    );
  });

  it('names the wait from the pace at which jobs left the queue over the last minute', () => {
    let now = 0;
    const bound = new QueueBound({ maxQueued: 6, now: () => now });
    for (const at of [10_000, 30_000, 50_000]) {
      now = at;
      bound.started();
    }
    now = 60_000;
    const six = { jobs: 6, inputBytes: 0 };
    // 3 jobs sent in a minute, 6 waiting: about 2 minutes.
    expect(bound.refusal(six)?.words).toMatchObject({ key: 'refusal.queue_full', values: { queued: 6, max: 6, known: 'yes' } });
    // The wait said is 2 min exactly, not a wait that merely contains it (12 min).
    expect(sayWords('en', bound.refusal(six)!.words)).toBe(sayWords('en', describeQueueFull({ queued: 6, maxQueued: 6, waitMs: 2 * 60_000 })));
    now = 105_000;
    // Only the start at 0:50 is still within the minute: 6 minutes.
    expect(sayWords('en', bound.refusal(six)!.words)).toBe(sayWords('en', describeQueueFull({ queued: 6, maxQueued: 6, waitMs: 6 * 60_000 })));
    now = 200_000;
    expect(bound.refusal(six)?.words).toMatchObject({ key: 'refusal.queue_full', values: { known: 'no' } });
  });
});

describe('which queue positions are worth showing', () => {
  /** The positions a job is shown while the queue ahead of it goes from `from` to 0, one by one. */
  const shownWhileMoving = (from: number): number[] => {
    const positions = new QueuePositions();
    const shown: number[] = [];
    for (let ahead = from; ahead >= 0; ahead--) if (positions.worthShowing(ahead)) shown.push(ahead);
    return shown;
  };

  it('shows the first position, then each quarter of it, then each of the last few', () => {
    expect(shownWhileMoving(100)).toEqual([100, 75, 50, 25, 2, 1, 0]);
    expect(shownWhileMoving(8)).toEqual([8, 6, 4, 2, 1, 0]);
  });

  it('does not show a position twice', () => {
    const positions = new QueuePositions();
    expect(positions.worthShowing(40)).toBe(true);
    expect(positions.worthShowing(40)).toBe(false);
  });

  it('shows a position that moved back, and counts its quarters from it', () => {
    const positions = new QueuePositions();
    positions.worthShowing(100);
    expect(positions.worthShowing(101)).toBe(true);
    expect(positions.worthShowing(80)).toBe(false);
    expect(positions.worthShowing(75)).toBe(true);
  });

  it('gives a job behind 1,600 others as many updates as one behind 100: the count does not grow with the queue', () => {
    expect(shownWhileMoving(1600)).toHaveLength(shownWhileMoving(100).length);
    expect(shownWhileMoving(1600)).toEqual([1600, 1200, 800, 400, 2, 1, 0]);
  });
});

/**
 * An image service in front of the emulator that reads a request's whole body, then answers only when told: a
 * request that has left but that the service has not yet taken.
 */
async function holdingService(target: string): Promise<{ url: string; bodyReceived: Promise<void>; answer(): void; close(): Promise<void> }> {
  let received!: () => void;
  const bodyReceived = new Promise<void>((resolve) => (received = resolve));
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received();
      void answered.then(() => {
        const body = Buffer.concat(chunks);
        const forward = httpRequest(new URL(req.url ?? '/', target), { method: req.method, headers: { ...req.headers, host: new URL(target).host, 'content-length': String(body.length) } }, (upstream) => {
          res.writeHead(upstream.statusCode ?? 502, upstream.headers);
          upstream.pipe(res);
        });
        forward.on('error', () => res.writeHead(502).end());
        forward.end(body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodyReceived,
    answer,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
