import { once } from 'node:events';
import net from 'node:net';
import Bottleneck from 'bottleneck';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LimiterCoordinator } from '../../src/core/image-limiter.js';
import { AbortedError, ImageLimiter } from '../../src/index.js';
import { spyOnInstance } from '../helpers/instance-spy.js';

const limiters: ImageLimiter[] = [];
function limiter(options: ConstructorParameters<typeof ImageLimiter>[0]): ImageLimiter {
  const l = new ImageLimiter(options);
  limiters.push(l);
  return l;
}
afterEach(async () => {
  await Promise.all(limiters.splice(0).map((l) => l.stop()));
  vi.useRealTimers();
});

/** Fake time for a test about time: its timers and clock (turns of the event loop stay real). */
function fakeTime(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
}

/** Lets `ms` of fake time pass, running what falls due meanwhile. */
const tick = async (ms = 20): Promise<void> => {
  await vi.advanceTimersByTimeAsync(ms);
};

function gate() {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

describe('the image limiter', () => {
  it('never runs more requests at once than maxConcurrent', async () => {
    fakeTime();
    const l = limiter({ maxConcurrent: 2 });
    let running = 0;
    let peak = 0;
    const g = gate();
    const jobs = Array.from({ length: 6 }, () =>
      l.schedule({ weight: 1 }, async () => {
        running++;
        peak = Math.max(peak, running);
        await g.promise;
        running--;
      }),
    );
    await tick(50);
    expect(running).toBe(2);
    g.open();
    await Promise.all(jobs);
    expect(peak).toBe(2);
  });

  it('counts a request as n images against the images-per-minute bucket', async () => {
    fakeTime();
    const l = limiter({ imagesPerMinute: 10, maxConcurrent: 10, toleranceMs: 0 });
    const started: number[] = [];
    const jobs = [4, 4, 4].map((n, i) => l.schedule({ weight: n }, async () => void started.push(i)));
    await tick(100);
    // 10 images per minute: two requests of 4 fit the full bucket, the third must wait for refills.
    expect(started).toEqual([0, 1]);
    expect((await l.stats()).imagesAvailable).toBe(2);
    const third = expect(jobs[2]).rejects.toBeInstanceOf(AbortedError);
    await l.stop();
    await third;
  });

  it('lets a request of more images than the whole bucket run instead of waiting forever', () => {
    const l = limiter({ imagesPerMinute: 3 });
    expect(l.weightOf(10)).toBe(3);
    expect(l.weightOf(2)).toBe(2);
  });

  it('reports how many requests are ahead while queued, then the start', async () => {
    const l = limiter({ maxConcurrent: 1 });
    const [firstRuns, secondRuns] = [gate(), gate()];
    const first = l.schedule({ weight: 1 }, () => firstRuns.promise);
    const positions: number[] = [];
    let startedThird = false;
    const second = l.schedule({ weight: 1 }, () => secondRuns.promise);
    const third = l.schedule({ weight: 1, onQueuePosition: (ahead) => positions.push(ahead), onStart: () => (startedThird = true) }, async () => {});
    await vi.waitFor(() => expect(positions).toEqual([1]));
    firstRuns.open();
    await vi.waitFor(() => expect(positions).toEqual([1, 0]));
    expect(startedThird).toBe(false);
    secondRuns.open();
    await Promise.all([first, second, third]);
    expect(startedThird).toBe(true);
    expect(positions).toEqual([1, 0]);
  });

  it('tells each waiting request its position once for all the moves of one turn of the event loop', async () => {
    const l = limiter({ maxConcurrent: 1 });
    const release = await l.acquire({ weight: 1 });
    const leaving = Array.from({ length: 10 }, () => new AbortController());
    const cancelled = leaving.map((c) => l.schedule({ weight: 1, signal: c.signal }, async () => {}).catch((error: unknown) => error));
    const positions = Array.from({ length: 5 }, () => [] as number[]);
    const staying = positions.map((seen) => l.acquire({ weight: 1, onQueuePosition: (ahead) => seen.push(ahead) }));
    await vi.waitFor(() => expect(positions).toEqual([[10], [11], [12], [13], [14]]));

    for (const c of leaving) c.abort();
    for (const error of await Promise.all(cancelled)) expect(error).toBeInstanceOf(AbortedError);
    await vi.waitFor(() => expect(positions.every((seen) => seen.length > 1)).toBe(true));

    // Ten requests left ahead of them in one turn: each is told where it stands now, once.
    expect(positions).toEqual([
      [10, 0],
      [11, 1],
      [12, 2],
      [13, 3],
      [14, 4],
    ]);
    release();
    for (const next of staying) (await next)();
  });

  it('keeps queued requests, and the positions of those behind, when a position callback throws: a display never ends a request', async () => {
    const l = limiter({ maxConcurrent: 1 });
    const [firstRuns, throwingRuns] = [gate(), gate()];
    const first = l.schedule({ weight: 1 }, () => firstRuns.promise);
    let thrown = 0;
    const throwing = l.schedule(
      {
        weight: 1,
        onQueuePosition: () => {
          thrown++;
          throw new Error('the display failed');
        },
      },
      async () => {
        await throwingRuns.promise;
        return 'ran';
      },
    );
    const positions: number[] = [];
    const behind = l.schedule({ weight: 1, onQueuePosition: (ahead) => positions.push(ahead) }, async () => 'ran too');
    await vi.waitFor(() => expect(positions).toEqual([1]));
    expect(thrown).toBe(1);
    firstRuns.open();
    await first;
    // The throwing request runs, and the one behind it is told it moved up.
    await vi.waitFor(() => expect(positions).toEqual([1, 0]));
    throwingRuns.open();
    expect(await throwing).toBe('ran');
    expect(await behind).toBe('ran too');
  });

  it('rejects a queued request at once when it is cancelled, and gives its images back', async () => {
    fakeTime();
    const l = limiter({ imagesPerMinute: 4, maxConcurrent: 1, toleranceMs: 0 });
    const g = gate();
    const first = l.schedule({ weight: 2 }, () => g.promise);
    const controller = new AbortController();
    let ran = false;
    const second = l.schedule({ weight: 2, signal: controller.signal }, async () => void (ran = true));
    controller.abort();
    await expect(second).rejects.toBeInstanceOf(AbortedError);
    g.open();
    await first;
    await tick(50);
    expect(ran).toBe(false);
    expect((await l.stats()).imagesAvailable).toBe(2);
  });

  it('holds every request after a 429 pause until the wait is over', async () => {
    const l = limiter({ maxConcurrent: 4 });
    const pausedAt = Date.now();
    await l.pause(1000);
    expect((await l.stats()).pausedForMs).toBeGreaterThan(0);
    let startedAt = 0;
    await l.schedule({ weight: 1 }, async () => void (startedAt = Date.now()));
    // Held at least until the pause was over (a loaded machine only makes it later, never earlier).
    expect(startedAt - pausedAt).toBeGreaterThanOrEqual(990);
  });

  it('empties the image bucket on a pause so the queue does not burst afterwards', async () => {
    const l = limiter({ imagesPerMinute: 60 });
    await l.pause(2000);
    expect((await l.stats()).imagesAvailable).toBeLessThan(0);
  });

  it('holds a slot from acquire until release', async () => {
    fakeTime();
    const l = limiter({ maxConcurrent: 1 });
    const release = await l.acquire({ weight: 1 });
    let second = false;
    const next = l.acquire({ weight: 1 }).then((r) => {
      second = true;
      r();
    });
    await tick();
    expect(second).toBe(false);
    release();
    release(); // a second release is harmless
    await next;
    expect(second).toBe(true);
  });
});

const nextTurnOfTheLoop = () => new Promise<void>((r) => setImmediate(r));

/** Settles to 'pending' if `promise` has not settled before the next turn of the event loop. */
function stateBeforeNextTurn(promise: Promise<unknown>): Promise<string> {
  return Promise.race([
    promise.then(
      () => 'resolved',
      (error: unknown) => `rejected: ${error instanceof Error ? error.name : String(error)}`,
    ),
    nextTurnOfTheLoop().then(() => 'pending'),
  ]);
}

describe('the image limiter in one process', () => {
  it('grants a free slot without waiting for a timer', async () => {
    const l = limiter({ maxConcurrent: 2 });
    let started = false;
    const acquiring = l.acquire({ weight: 1, onStart: () => (started = true) });
    expect(await stateBeforeNextTurn(acquiring)).toBe('resolved');
    expect(started).toBe(true);
    (await acquiring)();
  });

  it('runs a scheduled request on a free slot without waiting for a timer', async () => {
    const l = limiter({ maxConcurrent: 1 });
    expect(await stateBeforeNextTurn(l.schedule({ weight: 1 }, async () => 'ran'))).toBe('resolved');
  });

  it('hands a released slot to the first waiter without waiting for a timer', async () => {
    const l = limiter({ maxConcurrent: 1 });
    const release = await l.acquire({ weight: 1 });
    const next = l.acquire({ weight: 1 });
    expect(await stateBeforeNextTurn(next)).toBe('pending');
    release();
    expect(await stateBeforeNextTurn(next)).toBe('resolved');
    (await next)();
  });

  it('starts queued requests in the order they arrived', async () => {
    fakeTime();
    const l = limiter({ maxConcurrent: 1 });
    const release = await l.acquire({ weight: 1 });
    const order: string[] = [];
    const jobs = ['a', 'b', 'c', 'd'].map((name) => l.schedule({ weight: 1 }, async () => void order.push(name)));
    await tick();
    expect(order).toEqual([]);
    release();
    await Promise.all(jobs);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
  });

  it('gives the slot of a request cancelled while queued to the next one in line', async () => {
    const l = limiter({ maxConcurrent: 1 });
    const release = await l.acquire({ weight: 1 });
    const controller = new AbortController();
    let cancelledRan = false;
    const cancelled = l.schedule({ weight: 1, signal: controller.signal }, async () => void (cancelledRan = true));
    const positions: number[] = [];
    const next = l.acquire({ weight: 1, onQueuePosition: (ahead) => positions.push(ahead) });
    controller.abort();
    await expect(cancelled).rejects.toBeInstanceOf(AbortedError);
    await vi.waitFor(() => expect(positions).not.toHaveLength(0));
    // Queued and moved up in the same turn of the event loop: told once, where it stands now.
    expect(positions).toEqual([0]);
    release();
    (await next)();
    await nextTurnOfTheLoop();
    expect(cancelledRan).toBe(false);
    expect(await l.stats()).toMatchObject({ queued: 0, running: 0 });
  });

  it('never runs more requests at once than maxConcurrent while requests come and go', async () => {
    const l = limiter({ maxConcurrent: 3 });
    let running = 0;
    let peak = 0;
    const controllers = Array.from({ length: 40 }, () => new AbortController());
    const jobs = controllers.map((controller, i) =>
      l
        .schedule({ weight: 1, signal: controller.signal }, async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, i % 3));
          running--;
          return 'ran';
        })
        .catch((error: unknown) => (error instanceof AbortedError ? 'cancelled' : 'failed')),
    );
    controllers.forEach((controller, i) => i % 4 === 3 && controller.abort());
    const outcomes = await Promise.all(jobs);
    expect(peak).toBe(3);
    expect(outcomes.filter((o) => o === 'ran')).toHaveLength(30);
    expect(outcomes.filter((o) => o === 'cancelled')).toHaveLength(10);
    expect(await l.stats()).toMatchObject({ queued: 0, running: 0 });
  });

  it('rejects queued requests when stopped, and finishes stopping once the running ones have ended', async () => {
    fakeTime();
    const l = limiter({ maxConcurrent: 1 });
    const release = await l.acquire({ weight: 1 });
    const queued = l.acquire({ weight: 1 });
    let stopped = false;
    const stopping = l.stop().then(() => (stopped = true));
    await expect(queued).rejects.toThrow(new AbortedError('the limiter was stopped'));
    await tick();
    expect(stopped).toBe(false);
    release();
    await stopping;
    await expect(l.acquire({ weight: 1 })).rejects.toBeInstanceOf(AbortedError);
  });

  it('rejects a request waiting for images when stopped, and gives its slot back', async () => {
    fakeTime();
    const l = limiter({ imagesPerMinute: 2, maxConcurrent: 2 });
    const release = await l.acquire({ weight: 2 });
    let ran = false;
    const waiting = l.schedule({ weight: 2 }, async () => void (ran = true));
    await tick();
    expect(await l.stats()).toMatchObject({ queued: 1, running: 1 });
    const stopping = l.stop();
    await expect(waiting).rejects.toThrow(new AbortedError('the limiter was stopped'));
    release();
    await stopping;
    expect(ran).toBe(false);
  });

  it('gives a slot back when its lease ends, while the request still runs and gets its result', async () => {
    const l = limiter({ maxConcurrent: 1, leaseMs: 50 });
    const g = gate();
    const long = l.schedule({ weight: 1 }, () => g.promise.then(() => 'long done'));
    // The second request gets the slot once the first one's lease is over, although the first still runs.
    await expect(l.schedule({ weight: 1 }, async () => 'second ran')).resolves.toBe('second ran');
    g.open();
    await expect(long).resolves.toBe('long done');
  });

  it('spends n images per request from the bucket, starting requests in the order they arrived', async () => {
    fakeTime();
    const l = limiter({ imagesPerMinute: 6, maxConcurrent: 4, toleranceMs: 0 });
    const started: number[] = [];
    const jobs = [2, 3, 1, 1].map((n, i) => l.schedule({ weight: n }, async () => void started.push(i)));
    await tick(100);
    // A bucket of 6: 2 + 3 + 1 fit, the fourth waits for a refill (one image every 10 s).
    expect(started).toEqual([0, 1, 2]);
    expect((await l.stats()).imagesAvailable).toBe(0);
    const fourth = expect(jobs[3]).rejects.toBeInstanceOf(AbortedError);
    await l.stop();
    await fourth;
  });

  it('keeps its tolerance in time: a burst waits that long for its last image, not a whole refill', async () => {
    fakeTime();
    // 60 a minute is one image a second; 300 ms of tolerated delay: 59 of 60 images leave at once, the 60th 300 ms later.
    const l = limiter({ imagesPerMinute: 60, maxConcurrent: 100, toleranceMs: 300 });
    const started: number[] = [];
    const at = Date.now();
    const jobs = Array.from({ length: 60 }, () => l.schedule({ weight: 1 }, async () => void started.push(Date.now() - at)));
    await tick(100);
    expect(started).toHaveLength(59);
    await tick(1000);
    await Promise.all(jobs);
    expect(started[59]).toBeGreaterThanOrEqual(250);
    expect(started[59]).toBeLessThan(1000);
  });

  it('serves requests waiting for images in the order they came, a large one before later small ones', async () => {
    const l = limiter({ imagesPerMinute: 600, maxConcurrent: 10, toleranceMs: 0 });
    await l.schedule({ weight: 10 }, async () => {}); // 600 a minute: 10 a second, the bucket holds 600
    for (let i = 0; i < 58; i++) await l.schedule({ weight: 10 }, async () => {});
    // 10 images left: a request of 10 leaves, then one of 5 waits, and the 1s behind it wait their turn.
    const order: string[] = [];
    const jobs = [
      l.schedule({ weight: 10 }, async () => void order.push('ten')),
      l.schedule({ weight: 5 }, async () => void order.push('five')),
      l.schedule({ weight: 1 }, async () => void order.push('one')),
    ];
    await Promise.all(jobs);
    expect(order).toEqual(['ten', 'five', 'one']);
  });
});

describe('the image limiter after a 429 pause', () => {
  it('keeps refilling its bucket, so later requests still run', async () => {
    const l = limiter({ imagesPerMinute: 600 });
    await l.pause(200);
    const started = Date.now();
    await l.schedule({ weight: 1 }, async () => {});
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    // Long after the pause the bucket is refilling again.
    await expect(l.schedule({ weight: 1 }, async () => 'ran')).resolves.toBe('ran');
  });
});

describe('the image limiter sharing its slots, when stopped and the datastore never answers', () => {
  /** A coordinator whose datastore the test says unreachable (`lose`), for as long as it asks. */
  function coordinator() {
    const listeners = new Set<{ ms: number; listener: () => void }>();
    let lostTimers: NodeJS.Timeout[] = [];
    const c: LimiterCoordinator & { lose(): void; listening(): number } = {
      join: () => () => undefined,
      pauseUntil: async () => undefined,
      pausedUntil: async () => 0,
      close: async () => undefined,
      onUnreachableFor(ms, listener) {
        const entry = { ms, listener };
        listeners.add(entry);
        return () => void listeners.delete(entry);
      },
      lose() {
        lostTimers = [...listeners].map(({ ms, listener }) => setTimeout(listener, ms));
      },
      listening: () => listeners.size,
    };
    afterEach(() => lostTimers.forEach(clearTimeout));
    return c;
  }
  /**
   * The shared slots of a limiter named `NEVER_STOPPING` never record what ran: stopping them waits for ever, as on a
   * Redis that takes requests and never answers. Those of every other limiter stop as usual.
   */
  const NEVER_STOPPING = 'never-stopping';
  function neverStopping() {
    spyOnInstance(Bottleneck.prototype, 'stop', (slots) => (slots as unknown as { id: string }).id === `${NEVER_STOPPING}:slots`).mockReturnValue(new Promise<void>(() => undefined));
  }
  afterEach(() => {
    vi.restoreAllMocks();
  });
  /** A limiter on fake time whose slots never stop, stopped while one request runs (until `g` opens). */
  async function stoppedWhileOneRuns(shared: LimiterCoordinator = coordinator()) {
    fakeTime();
    neverStopping();
    const l = new ImageLimiter({ id: NEVER_STOPPING, maxConcurrent: 2, coordinator: shared });
    const g = gate();
    const running = l.schedule({ weight: 1 }, () => g.promise.then(() => 'finished'));
    await tick();
    let stopped = false;
    const stopping = l.stop().then(() => (stopped = true));
    return { shared, g, running, stopping, stopped: () => stopped };
  }

  /** Stopped while one request runs: not before it ends (a minute later), then 5 s after it ended, not before. */
  async function expectGraceAfterTheLastRequest(shared: LimiterCoordinator): Promise<void> {
    const { g, running, stopping, stopped } = await stoppedWhileOneRuns(shared);
    await tick(60_000);
    // A request still runs: the grace has not begun.
    expect(stopped()).toBe(false);
    g.open();
    await tick(4_990);
    await expect(running).resolves.toBe('finished');
    expect(stopped()).toBe(false);
    await tick(20);
    await stopping;
  }

  it('gives up 5 s after its last running request has ended, not before', async () => {
    const shared = coordinator();
    await expectGraceAfterTheLastRequest(shared);
    expect(shared.listening()).toBe(0);
  });

  /** Stopped with nothing running: 5 s later, not before. */
  async function expectStoppedFiveSecondsLater(l: ImageLimiter): Promise<void> {
    let stopped = false;
    const stopping = l.stop().then(() => (stopped = true));
    await tick(4_990);
    expect(stopped).toBe(false);
    await tick(20);
    await stopping;
  }

  it('gives up 5 s after stopping when nothing runs', async () => {
    fakeTime();
    neverStopping();
    const l = new ImageLimiter({ id: NEVER_STOPPING, maxConcurrent: 2, coordinator: coordinator() });
    await expectStoppedFiveSecondsLater(l);
  });

  it('gives up 5 s after its last running request has ended with a coordinator that cannot say when its datastore is unreachable', async () => {
    // A coordinator of the user's own, written before onUnreachableFor (it had unreachableForMs, or nothing).
    await expectGraceAfterTheLastRequest({
      join: () => () => undefined,
      pauseUntil: async () => undefined,
      pausedUntil: async () => 0,
      close: async () => undefined,
      unreachableForMs: () => 0,
    } as LimiterCoordinator);
  });

  it('gives up 5 s after stopping when its slots are clustered through a connection of bottleneck, with no coordinator', async () => {
    fakeTime();
    neverStopping();
    // Bottleneck's shared connection, as far as a limiter uses it: it never connects here, and leaving it asks nothing.
    const connection = { datastore: 'ioredis', ready: new Promise(() => undefined), __removeLimiter__: () => undefined };
    const l = new ImageLimiter({
      id: NEVER_STOPPING,
      maxConcurrent: 2,
      bottleneck: { datastore: 'ioredis', connection: connection as unknown as Bottleneck.IORedisConnection },
    });
    await expectStoppedFiveSecondsLater(l);
  });

  it('gives up once the datastore has been unreachable for 5 s while a request still runs; the request keeps its result', async () => {
    const shared = coordinator();
    const { g, running, stopping } = await stoppedWhileOneRuns(shared);
    await tick();
    shared.lose();
    await tick(5_000);
    await stopping;
    expect(shared.listening()).toBe(0);
    g.open();
    await tick();
    await expect(running).resolves.toBe('finished');
  });
});

describe('the image limiter clustered through a connection of its own, with no coordinator', () => {
  it('stops against a Redis that takes commands and never answers: its connection is dropped, not asked to quit', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
    });
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const { port } = silent.address() as net.AddressInfo;
    try {
      // No ready check: the client counts itself ready once connected, and sends bottleneck's scripts.
      const first = once(silent, 'connection');
      const l = new ImageLimiter({
        maxConcurrent: 2,
        bottleneck: { datastore: 'ioredis', clientOptions: { host: '127.0.0.1', port, enableReadyCheck: false } },
      });
      const [socket] = (await first) as [net.Socket];
      await once(socket, 'data');
      await l.stop();
    } finally {
      sockets.forEach((socket) => socket.destroy());
      silent.close();
    }
  });
});
