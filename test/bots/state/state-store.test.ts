import { mkdtemp, readdir, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FileStateStore, RedisStateStore, startSweeper, StateValueTooLargeError, type SpaceDefinition, type StateStore } from '../../../bots/state/index.js';
import { closeRedis, connectRedis, silentLogger } from '../../../src/index.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';

const redis = testRedis();

interface Job {
  prompt: string;
  status: 'active' | 'ended';
}

const SPACE: SpaceDefinition = { name: 'test-jobs', dir: 'test/jobs', ttlMs: 60_000, maxValueBytes: 1024 };
const job = (prompt: string): Job => ({ prompt, status: 'active' });

/** Two processes sharing one backend: `a` and `b`; `lose(a)` makes a's lease lapse as if it were killed. */
interface Backend {
  a: StateStore;
  b: StateStore;
  /** A third process on the same backend (file backend: the same as `b`). */
  another(): Promise<StateStore>;
  /** Makes the store's holder count as gone. */
  lose(store: StateStore): Promise<void>;
  close(): Promise<void>;
}

type MakeBackend = () => Promise<Backend>;

async function fileBackend(): Promise<Backend> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pictor-state-'));
  // One process per data folder: `b` is the process started after `a` stopped.
  const a = new FileStateStore({ dataDir });
  const b = new FileStateStore({ dataDir });
  return {
    a,
    b,
    another: async () => b,
    lose: async (store) => store.close(),
    close: async () => {
      await a.close();
      await b.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

let connection: Redis | undefined;
async function redisBackend(): Promise<Backend> {
  const url = requireRedisUrl(redis);
  const prefix = uniquePrefix('state');
  // Each store on its own connection, as each process has; a short lease so a takeover is seen within a test's second.
  const connections: Redis[] = [];
  const open = async () => {
    const own = await connectRedis(url);
    connections.push(own);
    return RedisStateStore.open({ redis: own, prefix, leaseMs: 300 });
  };
  const a = await open();
  const b = await open();
  const stores = [a, b];
  return {
    a,
    b,
    another: async () => {
      const c = await open();
      stores.push(c);
      return c;
    },
    // As a kill -9: the connection drops, the lease is no longer renewed and nobody gives it back; it lapses.
    lose: async (store) => {
      connections[stores.indexOf(store as RedisStateStore)]!.disconnect();
      await new Promise((r) => setTimeout(r, 450));
    },
    close: async () => {
      for (const store of stores) await store.close();
      for (const own of connections) await closeRedis(own);
      await deleteKeys(url, prefix);
    },
  };
}

const backends: [string, MakeBackend, string | undefined][] = [
  ['the data folder', fileBackend, undefined],
  ['Redis', redisBackend, redis.skipReason],
];

beforeAll(async () => {
  if (!redis.skipReason) connection = await connectRedis(requireRedisUrl(redis));
});
afterAll(async () => {
  if (connection) await closeRedis(connection);
});

for (const [name, make, skipReason] of backends) {
  describe.skipIf(skipReason)(`the bots’ state store on ${name}${skipReason ? ` (${skipReason})` : ''}`, () => {
    let backend: Backend;
    afterEach(async () => backend?.close());

    it('gives back what was put, to the other process too, and forgets what was deleted', async () => {
      backend = await make();
      const space = backend.a.space<Job>(SPACE);
      await space.put('k1', job('a lighthouse'));
      expect(await backend.b.space<Job>(SPACE).get('k1')).toEqual(job('a lighthouse'));
      await space.put('k1', { prompt: 'a lighthouse', status: 'ended' });
      expect(await backend.b.space<Job>(SPACE).get('k1')).toEqual({ prompt: 'a lighthouse', status: 'ended' });
      await backend.b.space<Job>(SPACE).delete('k1');
      expect(await space.get('k1')).toBeUndefined();
    });

    it('answers undefined for keys that are unknown or are not keys (they come back in button values)', async () => {
      backend = await make();
      const space = backend.a.space<Job>(SPACE);
      expect(await space.get('nope')).toBeUndefined();
      expect(await space.get('../../etc/passwd')).toBeUndefined();
      expect(await space.get('')).toBeUndefined();
      await expect(space.put('../x', job('x'))).rejects.toThrow(/not a state key/);
    });

    it('refuses a record over the space’s size bound', async () => {
      backend = await make();
      const space = backend.a.space<Job>(SPACE);
      await expect(space.put('big', job('x'.repeat(2000)))).rejects.toBeInstanceOf(StateValueTooLargeError);
      expect(await space.get('big')).toBeUndefined();
    });

    it('hands a record held by a process that is gone to one other process, once', async () => {
      backend = await make();
      await backend.a.space<Job>(SPACE).put('held', job('running on a'), { hold: true });
      await backend.a.space<Job>(SPACE).put('free', { prompt: 'ended on a', status: 'ended' }, { hold: false });
      if (backend.b.backend === 'redis') {
        // a is alive: nothing of its is taken.
        expect(await backend.b.space<Job>(SPACE).claimOrphans()).toEqual([]);
        await backend.lose(backend.a);
        const claimed = await backend.b.space<Job>(SPACE).claimOrphans();
        expect(claimed).toEqual([{ key: 'held', value: job('running on a') }]);
        // Held by b now, and b is alive: not handed out again.
        expect(await backend.b.space<Job>(SPACE).claimOrphans()).toEqual([]);
      } else {
        // The file backend serves one process: a record held by any other was left by one that is gone.
        expect(await backend.b.space<Job>(SPACE).claimOrphans()).toEqual([{ key: 'held', value: job('running on a') }]);
        expect(await backend.b.space<Job>(SPACE).claimOrphans()).toEqual([]);
      }
    });

    it('lets a process that released a record (its job ended) leave nothing to sweep', async () => {
      backend = await make();
      const space = backend.a.space<Job>(SPACE);
      await space.put('done', job('x'), { hold: true });
      await space.put('done', { prompt: 'x', status: 'ended' }, { hold: false });
      await backend.lose(backend.a);
      expect(await backend.b.space<Job>(SPACE).claimOrphans()).toEqual([]);
    });

    it('keeps the holder when a record is written without saying (a progress write)', async () => {
      backend = await make();
      const space = backend.a.space<Job>(SPACE);
      await space.put('k', job('first'), { hold: true });
      await space.put('k', job('second'));
      await backend.lose(backend.a);
      expect(await backend.b.space<Job>(SPACE).claimOrphans()).toEqual([{ key: 'k', value: job('second') }]);
    });

    it('says a record is held elsewhere only while another live process holds it', async () => {
      backend = await make();
      await backend.a.space<Job>(SPACE).put('k', job('x'), { hold: true });
      expect(await backend.a.space<Job>(SPACE).heldElsewhere('k')).toBe(false);
      expect(await backend.b.space<Job>(SPACE).heldElsewhere('k')).toBe(backend.b.backend === 'redis');
      await backend.lose(backend.a);
      expect(await backend.b.space<Job>(SPACE).heldElsewhere('k')).toBe(false);
    });

    it('takes a key once: the first claim wins, every later one (from any process sharing the store) loses', async () => {
      backend = await make();
      const claims = await Promise.all([backend.a.space(SPACE).claimOnce('ix1'), backend.b.space(SPACE).claimOnce('ix1')]);
      if (backend.b.backend === 'redis') expect(claims.sort()).toEqual([false, true]);
      expect(await backend.a.space(SPACE).claimOnce('ix1')).toBe(false);
      expect(await backend.a.space(SPACE).claimOnce('ix2')).toBe(true);
      expect(await backend.a.space(SPACE).claimOnce('../ix')).toBe(false);
    });

    it('delivers a notice about a record to the live process holding it, and to no one once it is gone', async () => {
      backend = await make();
      const heard: [string, unknown][] = [];
      await backend.a.space(SPACE).onNotice((key, notice) => heard.push([key, notice]));
      await backend.a.space<Job>(SPACE).put('k', job('running on a'), { hold: true });
      await backend.a.space<Job>(SPACE).put('free', { prompt: 'ended', status: 'ended' }, { hold: false });
      // The holder itself, and a record nobody holds: nobody to tell.
      expect(await backend.a.space(SPACE).notifyHolder('k', { hello: 1 })).toBe(false);
      expect(await backend.b.space(SPACE).notifyHolder('free', { hello: 2 })).toBe(false);
      if (backend.b.backend === 'redis') {
        expect(await backend.b.space(SPACE).notifyHolder('k', { hello: 3 })).toBe(true);
        await new Promise((r) => setTimeout(r, 100));
        expect(heard).toEqual([['k', { hello: 3 }]]);
        await backend.lose(backend.a);
      }
      // One process (file), or its holder gone: the notice reaches no one.
      expect(await backend.b.space(SPACE).notifyHolder('k', { hello: 4 })).toBe(false);
      expect(heard.filter(([, notice]) => (notice as { hello: number }).hello !== 3)).toEqual([]);
    });

    it('gives each orphan to exactly one of several sweeping processes', async () => {
      backend = await make();
      const space = backend.a.space<Job>(SPACE);
      for (let i = 0; i < 10; i++) await space.put(`j${i}`, job(`job ${i}`), { hold: true });
      await backend.lose(backend.a);
      const c = await backend.another();
      const [fromB, fromC] = await Promise.all([backend.b.space<Job>(SPACE).claimOrphans(), c.space<Job>(SPACE).claimOrphans()]);
      const keys = [...fromB, ...fromC].map((e) => e.key).sort();
      expect(keys).toEqual(Array.from({ length: 10 }, (_, i) => `j${i}`).sort());
    });

    it('sweeps at start, through the sweeper, what a stopped process left running, and each once', async () => {
      backend = await make();
      await backend.a.space<Job>(SPACE).put('left', job('left running'), { hold: true });
      await backend.lose(backend.a);
      const swept: string[] = [];
      const space = backend.b.space<Job>(SPACE);
      const sweeper = startSweeper({
        store: backend.b,
        name: 'test jobs',
        claim: () => space.claimOrphans(),
        logger: silentLogger(),
        intervalMs: 50,
        sweep: async (entry) => {
          swept.push(entry.key);
          await space.put(entry.key, { ...entry.value, status: 'ended' }, { hold: false });
        },
      });
      expect(await sweeper.first).toBe(1);
      await new Promise((r) => setTimeout(r, 200));
      await sweeper.stop();
      expect(swept).toEqual(['left']);
      expect(await space.get('left')).toEqual({ prompt: 'left running', status: 'ended' });
    });
  });
}

describe('the data-folder backend', () => {
  let dataDir: string;
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it('reads a record written before holders existed (the bare record), held by no live process', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'pictor-state-'));
    await mkdir(join(dataDir, 'test', 'jobs'), { recursive: true });
    await writeFile(join(dataDir, 'test', 'jobs', 'old.json'), JSON.stringify(job('from an older version')));
    const store = new FileStateStore({ dataDir });
    const space = store.space<Job>(SPACE);
    expect(await space.get('old')).toEqual(job('from an older version'));
    expect(await space.claimOrphans()).toEqual([{ key: 'old', value: job('from an older version') }]);
    await store.close();
  });

  it('drops records past their TTL, while running', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'pictor-state-'));
    const store = new FileStateStore({ dataDir, pruneEveryMs: 100 });
    const space = store.space<Job>({ ...SPACE, ttlMs: 300 });
    await space.put('short', job('short-lived'));
    expect((await stat(join(dataDir, 'test', 'jobs', 'short.json'))).mode & 0o777).toBe(0o600);
    await new Promise((r) => setTimeout(r, 700));
    expect(await readdir(join(dataDir, 'test', 'jobs'))).toEqual([]);
    await store.close();
  });
});

describe.skipIf(redis.skipReason)('the Redis backend’s bounds', () => {
  it('puts a TTL on every key it writes (records, holders, lease)', async () => {
    const prefix = uniquePrefix('state-ttl');
    const store = await RedisStateStore.open({ redis: connection!, prefix, leaseMs: 5_000 });
    try {
      await store.space<Job>(SPACE).put('k', job('x'), { hold: true });
      const keys = await connection!.keys(`${prefix}:*`);
      expect(keys.sort()).toEqual([`${prefix}:bots:lease:${store.owner}`, `${prefix}:bots:test-jobs:held`, `${prefix}:bots:test-jobs:r:k`].sort());
      for (const key of keys) expect(await connection!.pttl(key)).toBeGreaterThan(0);
    } finally {
      await store.close();
      await deleteKeys(requireRedisUrl(redis), prefix);
    }
  });

  it('gives its lease back on close, so what it still held is taken over at once', async () => {
    const prefix = uniquePrefix('state-close');
    const a = await RedisStateStore.open({ redis: connection!, prefix, leaseMs: 60_000 });
    const b = await RedisStateStore.open({ redis: connection!, prefix, leaseMs: 60_000 });
    try {
      await a.space<Job>(SPACE).put('k', job('x'), { hold: true });
      expect(await b.space<Job>(SPACE).claimOrphans()).toEqual([]);
      await a.close();
      expect(await b.space<Job>(SPACE).claimOrphans()).toEqual([{ key: 'k', value: job('x') }]);
    } finally {
      await b.close();
      await deleteKeys(requireRedisUrl(redis), prefix);
    }
  });
});
