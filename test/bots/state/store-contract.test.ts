import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { FileStateStore, readStateConfig, RedisStateStore, startSweeper, StateClosedError, StateValueTooLargeError, UNREADABLE, type Space, type SpaceDefinition, type StateStore } from '../../../bots/state/index.js';
import { RedisLink, silentLogger } from '../../../src/internal.js';
import { deleteKeys, dumpKey, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { testTempDir } from '../../helpers/temp-dir.js';

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
  /** Whether `a` and `b` may run at once (Redis); the data folder serves one process at a time (`b` starts after `a`). */
  concurrent: boolean;
  /** A third process on the same backend (file backend: the same as `b`). */
  another(): Promise<StateStore>;
  /** Makes the store's holder count as gone. */
  lose(store: StateStore): Promise<void>;
  /** Every key the backend holds and every value, as text (files, or Redis keys of every type). */
  everything(): Promise<string>;
  /**
   * Damages a record of `SPACE` where it is kept (its text is no longer JSON), as a disk or a hand edit could; with
   * `value`, keeps that text as its value instead (a hand edit's `null`, or a value whose JSON was cut).
   */
  damage(key: string, value?: string): Promise<void>;
  /** Makes a record of `SPACE` fail to read where it is kept (not damaged: a disk or a permission failing now); answers how to undo it. */
  failReads(key: string): Promise<() => Promise<void>>;
  /** Makes `a`'s look-up whether a record of `SPACE` is kept fail (a disk or a connection failing now, not the record gone); answers how to undo it. */
  failLookups(key: string): Promise<() => Promise<void>>;
  /** Keeps a claim of `SPACE` without a token, as a hand edit or an older version left it (a record with no value, Redis's '1'). */
  keepTokenlessClaim(key: string): Promise<void>;
  /** Removes a record of the space where it is kept, behind the store's back (a file deleted by hand, a key deleted). */
  removeBehind(space: SpaceDefinition, key: string): Promise<void>;
  close(): Promise<void>;
}

async function fileBackend(): Promise<Backend> {
  const dataDir = await testTempDir('pictor-state-');
  const a = new FileStateStore({ dataDir });
  const b = new FileStateStore({ dataDir });
  const list = async (dir: string): Promise<string[]> =>
    (await Promise.all((await readdir(dir, { withFileTypes: true })).map((e) => (e.isDirectory() ? list(join(dir, e.name)) : [join(dir, e.name)])))).flat();
  return {
    a,
    b,
    concurrent: false,
    another: async () => b,
    lose: async (store) => store.close(),
    everything: async () => (await Promise.all((await list(dataDir)).map(async (file) => `${file} ${await readFile(file, 'utf8')}`))).join('\n'),
    damage: (key, value = '{"prom') => writeFile(join(dataDir, SPACE.dir, `${key}.json`), `{"pictorState":1,"holder":null,"value":${value}}`),
    // A folder in the file's place (EISDIR): the bot's user reads any file (a test runs as root), so no permission can fail it.
    failReads: async (key) => {
      const file = join(dataDir, SPACE.dir, `${key}.json`);
      await rename(file, `${file}.aside`);
      await mkdir(file);
      return async () => {
        await rm(file, { recursive: true });
        await rename(`${file}.aside`, file);
      };
    },
    // A link to itself in the file's place: looking at it fails (ELOOP), whoever the bot's user is.
    failLookups: async (key) => {
      const file = join(dataDir, SPACE.dir, `${key}.json`);
      await rename(file, `${file}.aside`);
      await symlink(file, file);
      return async () => {
        await rm(file);
        await rename(`${file}.aside`, file);
      };
    },
    keepTokenlessClaim: async (key) => {
      await mkdir(join(dataDir, SPACE.dir), { recursive: true });
      await writeFile(join(dataDir, SPACE.dir, `${key}.json`), '{"pictorState":1,"holder":null}');
    },
    removeBehind: (space, key) => rm(join(dataDir, space.dir, `${key}.${space.binary ? 'bin' : 'json'}`)),
    close: async () => {
      await a.close();
      await b.close();
    },
  };
}

/** Two processes on one Redis; `links[i]` is the connection of the i-th store opened (`a`, `b`, then `another()`'s). */
async function redisBackend(): Promise<Backend & { links: RedisLink[] }> {
  const url = requireRedisUrl(redis);
  const prefix = uniquePrefix('state');
  // Each store on a link of its own, as each process has; a short lease so a takeover is seen within a test's second.
  const links: RedisLink[] = [];
  const stores: RedisStateStore[] = [];
  const open = async () => {
    const link = await RedisLink.open({ url, prefix });
    links.push(link);
    const store = await RedisStateStore.open({ link, leaseMs: 300 });
    stores.push(store);
    return store;
  };
  const a = await open();
  const b = await open();
  const commands = links[1]!.commands;
  return {
    a,
    b,
    links,
    concurrent: true,
    another: open,
    // As a kill -9: the connection drops, the lease is no longer renewed and nobody gives it back; it lapses.
    lose: async (store) => {
      links[stores.indexOf(store as RedisStateStore)]!.commands.disconnect();
      await vi.waitFor(async () => expect(await commands.exists(`${prefix}:bots:lease:${store.owner}`)).toBe(0), { timeout: 2000, interval: 20 });
    },
    everything: async () => {
      const lines: string[] = [];
      for (const key of await commands.keys(`${prefix}:*`)) lines.push(`${key} ${JSON.stringify(await dumpKey(commands, key))}`);
      return lines.join('\n');
    },
    damage: async (key, value = '{"prom') => {
      const [record] = await commands.keys(`${prefix}:*${SPACE.name}*:r:${key}`);
      await commands.set(record!, value, 'KEEPTTL');
    },
    // Another type in the record's place: every read of it fails (WRONGTYPE), as on a Redis that cannot answer.
    failReads: async (key) => {
      const [record] = await commands.keys(`${prefix}:*${SPACE.name}*:r:${key}`);
      await commands.rename(record!, `${record!}:aside`);
      await commands.hset(record!, 'not', 'a record');
      return async () => void (await commands.rename(`${record!}:aside`, record!));
    },
    // a's connection as a user allowed no key: every look-up of a key fails (NOPERM), as on a Redis that cannot answer.
    failLookups: async () => {
      const user = `pictor-test-${randomUUID().slice(0, 8)}`;
      await commands.call('ACL', 'SETUSER', user, 'on', 'nopass', '+@all', '~no-key-of-pictor');
      await links[0]!.commands.call('AUTH', user, 'any');
      return async () => {
        await links[0]!.commands.call('AUTH', 'default', 'any');
        await commands.call('ACL', 'DELUSER', user);
      };
    },
    keepTokenlessClaim: async (key) => void (await commands.set(`${prefix}:bots:${SPACE.name}:once:${key}`, '1', 'PX', 60_000)),
    removeBehind: async (space, key) => {
      const [record] = await commands.keys(`${prefix}:*${space.name}*:r:${key}`);
      await commands.del(record!);
    },
    close: async () => {
      for (const store of stores) await store.close();
      for (const link of links) await link.close();
      await deleteKeys(url, prefix);
    },
  };
}


describe.each([
  { name: 'the data folder', make: fileBackend, skip: undefined },
  { name: 'Redis', make: redisBackend, skip: redis.skipReason },
])('the bots’ state store on $name', ({ name, make, skip }) => {
  let backend: Backend;
  afterEach(async () => backend?.close());

  it.skipIf(skip)('gives back what was put, to the other process too, and forgets what was deleted', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    await space.put('k1', job('a lighthouse'));
    expect(await backend.b.space<Job>(SPACE).get('k1')).toEqual(job('a lighthouse'));
    await space.put('k1', { prompt: 'a lighthouse', status: 'ended' });
    expect(await backend.b.space<Job>(SPACE).get('k1')).toEqual({ prompt: 'a lighthouse', status: 'ended' });
    await backend.b.space<Job>(SPACE).delete('k1');
    expect(await backend.b.space<Job>(SPACE).get('k1')).toBeUndefined();
    expect(await backend.everything()).not.toContain('lighthouse');
  });

  it.skipIf(skip)('answers undefined for keys that are unknown or are not keys (they come back in button values)', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    expect(await space.get('nope')).toBeUndefined();
    expect(await space.get('../../etc/passwd')).toBeUndefined();
    expect(await space.get('')).toBeUndefined();
    await expect(space.put('../x', job('x'))).rejects.toThrow(/not a state key/);
    await expect(space.update('../x', () => job('x'))).rejects.toThrow(/not a state key/);
  });

  it.skipIf(skip)('tells a damaged record from a missing one when read (get takes both for none; update writes it anew)', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    await space.put('k1', job('a lighthouse'));
    expect(await space.read('k1')).toEqual(job('a lighthouse'));
    expect(await space.read('k2')).toBeUndefined();
    await backend.damage('k1');
    const other = backend.b.space<Job>(SPACE);
    expect(await other.read('k1')).toBe(UNREADABLE);
    expect(await other.get('k1')).toBeUndefined();
    await other.update('k1', (current) => current ?? job('a harbour'));
    expect(await other.read('k1')).toEqual(job('a harbour'));
  });

  it.skipIf(skip)('throws when a record fails to read, taking it neither for none nor for damaged, and writes nothing over it', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    await space.put('k1', job('a lighthouse'));
    const undo = await backend.failReads('k1');
    await expect(space.read('k1')).rejects.toThrow();
    await expect(space.get('k1')).rejects.toThrow();
    const change = vi.fn(() => job('a harbour'));
    await expect(space.update('k1', change, { unreadable: true })).rejects.toThrow();
    await expect(space.update('k1', change)).rejects.toThrow();
    expect(change).not.toHaveBeenCalled();
    await undo();
    expect(await space.read('k1')).toEqual(job('a lighthouse'));
  });

  it.skipIf(skip)('throws from has when it cannot look a record up, never answering that there is none', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    await space.put('k1', job('a lighthouse'));
    const undo = await backend.failLookups('k1');
    await expect(space.has('k1')).rejects.toThrow();
    await undo();
    expect(await space.has('k1')).toBe(true);
    expect(await space.get('k1')).toEqual(job('a lighthouse'));
  });

  it.skipIf(skip)('goes on past a record that fails to read in entries and deleteDamaged, then says so: the records after it are still yielded and deleted', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    for (const key of ['k1', 'k2', 'k3', 'k4']) await space.put(key, job(key));
    await backend.damage('k4', '{"prompt":"k4 of \\"42\\"');
    const undo = await backend.failReads('k2');
    const seen: string[] = [];
    const scanned = await (async () => {
      for await (const { key } of space.entries()) seen.push(key);
    })().catch((error: unknown) => error);
    expect(seen.sort()).toEqual(['k1', 'k3']);
    // The data folder then says how many failed; Redis's MGET answers none for a key of another type: nothing to say.
    const failed = name === 'the data folder' ? expect.objectContaining({ code: 'state_records_unreadable', files: [expect.stringContaining('k2.json')] }) : undefined;
    expect(scanned).toEqual(failed);
    expect(await space.deleteDamaged((text) => text.includes('42')).catch((error: unknown) => error)).toEqual(failed ?? 1);
    expect(await space.read('k4')).toBeUndefined();
    await undo();
    expect(await space.read('k2')).toEqual(job('k2'));
  });

  it.skipIf(skip)('lists every record’s key, a damaged one too, which entries skips; not a deleted one', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    for (const key of ['k1', 'k2', 'k3']) await space.put(key, job(key));
    await space.delete('k3');
    await backend.damage('k1');
    const other = backend.b.space<Job>(SPACE);
    const keys: string[] = [];
    for await (const key of other.keys()) keys.push(key);
    const entries: string[] = [];
    for await (const { key } of other.entries()) entries.push(key);
    expect(keys.sort()).toEqual(['k1', 'k2']);
    expect(entries).toEqual(['k2']);
  });

  it.skipIf(skip)('yields from entries only records kept as objects: one a hand edit left null or a bare number is skipped as a damaged one is, and still listed', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    for (const key of ['k1', 'k2', 'k3']) await space.put(key, job(key));
    await backend.damage('k1', 'null');
    await backend.damage('k3', '7');
    const other = backend.b.space<Job>(SPACE);
    const [keys, entries]: [string[], string[]] = [[], []];
    for await (const key of other.keys()) keys.push(key);
    for await (const { key } of other.entries()) entries.push(key);
    expect(keys.sort()).toEqual(['k1', 'k2', 'k3']);
    expect(entries).toEqual(['k2']);
  });

  it.skipIf(skip)('deletes the damaged records whose text mentions what it is asked (a member’s id), and no other record', async () => {
    backend = await make();
    const space = backend.a.space<Job & { userId: string }>(SPACE);
    for (const key of ['k1', 'k2', 'k3']) await space.put(key, { ...job(`a QUIXOTIC ${key}`), userId: key === 'k3' ? '7' : '42' });
    await backend.damage('k1', '{"prompt":"a QUIXOTIC k1","userId":"42",}');
    await backend.damage('k3', '{"prompt":"a QUIXOTIC k3","userId":"7",}');
    const other = backend.b.space<Job & { userId: string }>(SPACE);
    expect(await other.deleteDamaged((text) => text.includes('"42"'))).toBe(1);
    expect(await other.has('k1')).toBe(false);
    expect(await other.get('k2')).toMatchObject({ userId: '42' });
    expect(await other.read('k3')).toBe(UNREADABLE);
    expect(await backend.everything()).not.toContain('QUIXOTIC k1');
  });

  it.skipIf(skip)('gives an update asking for it a damaged record as unreadable, in the step that writes it (others get none)', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    await space.put('k1', job('a lighthouse'));
    await backend.damage('k1');
    const other = backend.b.space<Job>(SPACE);
    const seen: unknown[] = [];
    const { before, after } = await other.update('k1', (current) => (seen.push(current), job('a harbour')), { unreadable: true });
    expect(seen).toEqual([UNREADABLE]);
    expect(before).toBe(UNREADABLE);
    expect(after).toEqual(job('a harbour'));
    expect(await other.read('k1')).toEqual(job('a harbour'));
    // Asked of a missing or a readable record, it gets what there is; not asked, a damaged record is none.
    await other.update('k2', (current) => (seen.push(current), job('a quay')), { unreadable: true });
    await other.update('k2', (current) => (seen.push(current), job('a quay')), { unreadable: true, hold: false });
    await backend.damage('k1');
    expect((await other.update('k1', (current) => (seen.push(current), current))).before).toBeUndefined();
    expect(seen.slice(1)).toEqual([undefined, job('a quay'), undefined]);
  });

  it.skipIf(skip)('refuses a record over the space’s size bound, also as the result of an update', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    await expect(space.put('big', job('x'.repeat(2000)))).rejects.toBeInstanceOf(StateValueTooLargeError);
    await space.put('grows', job('small'));
    await expect(space.update('grows', () => job('x'.repeat(2000)))).rejects.toBeInstanceOf(StateValueTooLargeError);
    expect(await space.get('big')).toBeUndefined();
    expect(await space.get('grows')).toEqual(job('small'));
  });

  it.skipIf(skip)('keeps past the count and byte bounds only the latest writes: the oldest go first', async () => {
    backend = await make();
    const counted = backend.a.space<Job>({ ...SPACE, name: 'test-counted', dir: 'test/counted', maxCount: 3 });
    for (const key of ['k1', 'k2', 'k3', 'k4']) await counted.put(key, job(key));
    // A write makes a record the latest again.
    await counted.put('k2', job('k2 again'));
    await counted.put('k5', job('k5'));
    const keys = async (space: typeof counted) => {
      const found: string[] = [];
      for await (const { key } of space.entries()) found.push(key);
      return found.sort();
    };
    expect(await keys(counted)).toEqual(['k2', 'k4', 'k5']);

    // Each record is about 500 bytes (the data folder counts its files: a little more): 1200 bytes hold two of them.
    const weighed = backend.a.space<Job>({ ...SPACE, name: 'test-weighed', dir: 'test/weighed', maxBytes: 1200 });
    for (const key of ['w1', 'w2', 'w3']) await weighed.put(key, job(`${key} ${'x'.repeat(470)}`));
    expect(await keys(weighed)).toEqual(['w2', 'w3']);
    await weighed.delete('w3');
    await weighed.put('w4', job(`w4 ${'x'.repeat(470)}`));
    expect(await keys(weighed)).toEqual(['w2', 'w4']);
    // Another process sees the same bounds.
    expect(await keys(backend.b.space<Job>({ ...SPACE, name: 'test-weighed', dir: 'test/weighed', maxBytes: 1200 }))).toEqual(['w2', 'w4']);
  });

  it.skipIf(skip)('keeps a binary space’s bytes as they are (no JSON, no base64), within its bounds, never held', async () => {
    backend = await make();
    const IMAGES: SpaceDefinition = { name: 'test-images', dir: 'test/images', ttlMs: 60_000, maxValueBytes: 1000, maxBytes: 2000, binary: true };
    const images = backend.a.space<Buffer>(IMAGES);
    const bytes = (fill: number) => Buffer.alloc(900, fill);
    await images.put('i1', bytes(1), { hold: true });
    expect(await backend.b.space<Buffer>(IMAGES).get('i1')).toEqual(bytes(1));
    expect(await backend.everything()).not.toContain(bytes(1).toString('base64').slice(0, 40));
    await expect(images.put('big', Buffer.alloc(1001))).rejects.toBeInstanceOf(StateValueTooLargeError);
    await expect(images.put('empty', Buffer.alloc(0))).rejects.toThrow(/bytes/);
    await expect(images.put('text', 'not bytes' as unknown as Buffer)).rejects.toThrow(/bytes/);
    // Bytes are put, read and deleted: never changed in place nor taken once.
    await expect(images.update('i1', (b) => b)).rejects.toBeInstanceOf(TypeError);
    await expect(images.claimOnce('i9')).rejects.toBeInstanceOf(TypeError);
    await expect(images.releaseClaim('i9', 'token-i9')).rejects.toBeInstanceOf(TypeError);
    // 900 bytes each within 2000: a third write drops the oldest.
    await images.put('i2', bytes(2));
    await images.put('i3', bytes(3));
    expect(await images.get('i1')).toBeUndefined();
    expect(await images.get('i3')).toEqual(bytes(3));
    // Never held: a process that is gone leaves nothing to sweep.
    await backend.lose(backend.a);
    expect(await backend.b.space<Buffer>(IMAGES).claimOrphans()).toEqual([]);
    await backend.b.space<Buffer>(IMAGES).delete('i3');
    expect(await backend.b.space<Buffer>(IMAGES).get('i3')).toBeUndefined();
  });

  it.skipIf(skip)('tells whether a record is kept without reading it: a damaged one is, one deleted or dropped past the bounds is not', async () => {
    backend = await make();
    const IMAGES: SpaceDefinition = { name: 'test-images', dir: 'test/images', ttlMs: 60_000, maxValueBytes: 1000, maxBytes: 2000, binary: true };
    const images = backend.a.space<Buffer>(IMAGES);
    const space = backend.a.space<Job>(SPACE);
    await space.put('k1', job('a lighthouse'));
    await space.put('k2', job('a harbour'));
    await space.put('k3', job('a quay'));
    await space.delete('k3');
    await backend.damage('k2');
    // 900 bytes each within 2000: the third drops the first, as the kept images' bound does.
    for (const key of ['i1', 'i2', 'i3']) await images.put(key, Buffer.alloc(900, 1));
    expect(await images.has('i1')).toBe(false);
    const other = backend.b.space<Job>(SPACE);
    const otherImages = backend.b.space<Buffer>(IMAGES);
    expect(await Promise.all(['k1', 'k2', 'k3', 'nope', '../k1', ''].map((key) => other.has(key)))).toEqual([true, true, false, false, false, false]);
    expect(await other.get('k2')).toBeUndefined();
    expect(await Promise.all(['i1', 'i2', 'i3'].map((key) => otherImages.has(key)))).toEqual([false, true, true]);
  });

  it.skipIf(skip)('forgets a record removed from where it is kept behind its back (a file deleted by hand, a key deleted) once has or read finds it gone: has agrees with read, keys no longer lists it, and it no longer counts toward the bounds', async () => {
    backend = await make();
    const COUNTED: SpaceDefinition = { ...SPACE, name: 'test-counted', dir: 'test/counted', maxCount: 2 };
    const IMAGES: SpaceDefinition = { name: 'test-images', dir: 'test/images', ttlMs: 60_000, maxValueBytes: 1000, maxCount: 2, binary: true };
    const space = backend.a.space<Job>(COUNTED);
    const images = backend.a.space<Buffer>(IMAGES);
    const keys = async (of: Space<unknown>) => {
      const listed: string[] = [];
      for await (const key of of.keys()) listed.push(key);
      return listed.sort();
    };
    await space.put('k1', job('a lighthouse'));
    await space.put('k2', job('a harbour'));
    await images.put('i1', Buffer.alloc(10, 1));
    await images.put('i2', Buffer.alloc(10, 2));
    expect(await Promise.all([space.has('k2'), images.has('i2')])).toEqual([true, true]);
    // The newer of each removed: were it still counted, the next write would drop the older one, still kept, to stay within 2.
    await backend.removeBehind(COUNTED, 'k2');
    await backend.removeBehind(IMAGES, 'i2');
    // has finds the record gone first, then read finds the image gone first: either forgets it.
    expect([await space.has('k2'), await space.get('k2')]).toEqual([false, undefined]);
    expect([await images.get('i2'), await images.has('i2')]).toEqual([undefined, false]);
    expect([await keys(space), await keys(images)]).toEqual([['k1'], ['i1']]);
    await space.put('k3', job('a quay'));
    await images.put('i3', Buffer.alloc(10, 3));
    expect([await space.get('k1'), await images.get('i1')]).toEqual([job('a lighthouse'), Buffer.alloc(10, 1)]);
    expect([await keys(space), await keys(images)]).toEqual([['k1', 'k3'], ['i1', 'i3']]);
  });

  it.skipIf(skip)('keeps a space without a TTL until its records are deleted', async () => {
    backend = await make();
    const forever = backend.a.space<Job>({ ...SPACE, name: 'test-forever', dir: 'test/forever', ttlMs: undefined });
    await forever.put('install', job('a token'));
    expect(await backend.b.space<Job>({ ...SPACE, name: 'test-forever', dir: 'test/forever', ttlMs: undefined }).get('install')).toEqual(job('a token'));
  });

  it.skipIf(skip)('changes a record atomically: concurrent updates each see the last one’s result, across processes too', async () => {
    backend = await make();
    const counter = { ...SPACE, name: 'test-counter', dir: 'test/counter' };
    const processes = backend.concurrent ? [backend.a, backend.b] : [backend.a];
    await Promise.all(
      processes.flatMap((store) => Array.from({ length: 20 }, () => store.space<number>(counter).update('n', (n = 0) => n + 1))),
    );
    expect(await backend.b.space<number>(counter).get('n')).toBe(20 * processes.length);
    const { before, after } = await backend.a.space<number>(counter).update('n', () => undefined);
    expect([before, after]).toEqual([20 * processes.length, undefined]);
    expect(await backend.b.space<number>(counter).get('n')).toBeUndefined();
  });

  it.skipIf(skip)('hands a record held by a process that is gone to one other process, once', async () => {
    backend = await make();
    await backend.a.space<Job>(SPACE).put('held', job('running on a'), { hold: true });
    await backend.a.space<Job>(SPACE).put('free', { prompt: 'ended on a', status: 'ended' }, { hold: false });
    // Alive, a keeps what it holds (the file backend serves one process: b started after a).
    if (backend.concurrent) expect(await backend.b.space<Job>(SPACE).claimOrphans()).toEqual([]);
    await backend.lose(backend.a);
    expect(await backend.b.space<Job>(SPACE).claimOrphans()).toEqual([{ key: 'held', value: job('running on a') }]);
    // Held by b now, and b is alive: not handed out again.
    expect(await backend.b.space<Job>(SPACE).claimOrphans()).toEqual([]);
  });

  it.skipIf(skip)('lets a process that released a record (its job ended), by a write or an update, leave nothing to sweep', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    await space.put('done', job('x'), { hold: true });
    await space.put('done', { prompt: 'x', status: 'ended' }, { hold: false });
    await space.put('updated', job('y'), { hold: true });
    await space.update('updated', (j) => j && { ...j, status: 'ended' }, { hold: false });
    await backend.lose(backend.a);
    expect(await backend.b.space<Job>(SPACE).claimOrphans()).toEqual([]);
  });

  it.skipIf(skip)('holds or releases a record as decided from the value its update makes, in that one write', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    const releaseEnded = (after: Job) => (after.status === 'ended' ? false : undefined);
    for (const key of ['ends', 'runs', 'gone']) await space.put(key, job(key), { hold: true });
    const asked: Job[] = [];
    const put = vi.spyOn(space, 'put');
    await space.update('ends', (j) => j && { ...j, status: 'ended' }, { hold: (after) => (asked.push(after), releaseEnded(after)) });
    await space.update('runs', (j) => j && { ...j, prompt: 'still running' }, { hold: releaseEnded });
    await space.update('gone', () => undefined, { hold: () => expect.unreachable('a deleted record is not asked') });
    expect(asked).toEqual([{ prompt: 'ends', status: 'ended' }]);
    expect(put).not.toHaveBeenCalled();
    await backend.lose(backend.a);
    // Released in the update's own write: only the record still running is handed over.
    expect(await backend.b.space<Job>(SPACE).claimOrphans()).toEqual([{ key: 'runs', value: job('still running') }]);
  });

  it.skipIf(skip)('keeps the holder when a record is written without saying (a progress write)', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    await space.put('k', job('first'), { hold: true });
    await space.put('k', job('second'));
    await space.update('k', (j) => j && { ...j, prompt: 'third' });
    await backend.lose(backend.a);
    expect(await backend.b.space<Job>(SPACE).claimOrphans()).toEqual([{ key: 'k', value: job('third') }]);
  });

  it.skipIf(skip)('says a record is held elsewhere only while another live process holds it', async () => {
    backend = await make();
    await backend.a.space<Job>(SPACE).put('k', job('x'), { hold: true });
    expect(await backend.a.space<Job>(SPACE).heldElsewhere('k')).toBe(false);
    expect(await backend.b.space<Job>(SPACE).heldElsewhere('k')).toBe(backend.concurrent);
    await backend.lose(backend.a);
    expect(await backend.b.space<Job>(SPACE).heldElsewhere('k')).toBe(false);
  });

  it.skipIf(skip)('says a record is held here only while this process holds it: written held or claimed, not yet released', async () => {
    backend = await make();
    await backend.a.space<Job>(SPACE).put('k', job('x'), { hold: true });
    expect(await backend.a.space<Job>(SPACE).heldHere('k')).toBe(true);
    expect(await backend.a.space<Job>(SPACE).heldHere('missing')).toBe(false);
    await backend.lose(backend.a);
    expect(await backend.b.space<Job>(SPACE).heldHere('k')).toBe(false);
    await backend.b.space<Job>(SPACE).claimOrphans();
    expect(await backend.b.space<Job>(SPACE).heldHere('k')).toBe(true);
    await backend.b.space<Job>(SPACE).update('k', (j) => j, { hold: false });
    expect(await backend.b.space<Job>(SPACE).heldHere('k')).toBe(false);
  });

  it.skipIf(skip)('counts a key whose claim was kept without a token (a hand edit, an older version) as taken, and no release frees it', async () => {
    backend = await make();
    await backend.keepTokenlessClaim('kept1');
    const space = backend.b.space(SPACE);
    // A replayed request taken again would start a second paid job.
    expect(await space.claimOnce('kept1')).toBe(false);
    await space.releaseClaim('kept1', 'token-of-another');
    expect(await space.claimOnce('kept1')).toBe(false);
  });

  it.skipIf(skip)('takes a key once: the first claim wins, every later one loses, from any process and after a restart', async () => {
    backend = await make();
    const claims = backend.concurrent ? await Promise.all([backend.a.space(SPACE).claimOnce('ix1'), backend.b.space(SPACE).claimOnce('ix1')]) : [await backend.a.space(SPACE).claimOnce('ix1')];
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await backend.a.space(SPACE).claimOnce('ix1')).toBe(false);
    // `b` is a process started after `a` (the file backend: a restart).
    expect(await backend.b.space(SPACE).claimOnce('ix1')).toBe(false);
    expect(await backend.b.space(SPACE).claimOnce('ix2')).toBe(true);
    expect(await backend.a.space(SPACE).claimOnce('../ix')).toBe(false);
  });

  it.skipIf(skip)('gives a key back once claimed: the next claim takes it again, from any process and after a restart, and then holds it again', async () => {
    backend = await make();
    expect(await backend.a.space(SPACE).claimOnce('ix1', 'claim-of-a')).toBe(true);
    await backend.a.space(SPACE).releaseClaim('ix1', 'claim-of-a');
    // `b` is a process started after `a` (the file backend: a restart).
    expect(await backend.b.space(SPACE).claimOnce('ix1', 'claim-of-b')).toBe(true);
    expect(await backend.b.space(SPACE).claimOnce('ix1')).toBe(false);
    // A key never taken, or not a key: nothing to give back.
    await backend.b.space(SPACE).releaseClaim('ix9', 'claim-of-b');
    await backend.b.space(SPACE).releaseClaim('../ix', 'claim-of-b');
    expect(await backend.b.space(SPACE).claimOnce('ix9')).toBe(true);
  });

  it.skipIf(skip)('gives back only the claim a release names: one sent again after another claim took the key leaves that claim taken', async () => {
    backend = await make();
    expect(await backend.a.space(SPACE).claimOnce('ix1', 'first-claim')).toBe(true);
    await backend.a.space(SPACE).releaseClaim('ix1', 'first-claim');
    expect(await backend.b.space(SPACE).claimOnce('ix1', 'second-claim')).toBe(true);
    // The first release again (a Redis link sends again, on reconnecting, what went unanswered; the data folder: the
    // process after `a`, which `b` is, giving back the first claim): the second claim stays.
    const first = backend.concurrent ? backend.a : backend.b;
    await first.space(SPACE).releaseClaim('ix1', 'first-claim');
    expect(await first.space(SPACE).claimOnce('ix1')).toBe(false);
    expect(await backend.b.space(SPACE).claimOnce('ix1')).toBe(false);
    // A claim taken without a token of its own keeps a random one: no release gives it back but its own.
    expect(await backend.b.space(SPACE).claimOnce('ix2')).toBe(true);
    await first.space(SPACE).releaseClaim('ix2', 'first-claim');
    expect(await backend.b.space(SPACE).claimOnce('ix2')).toBe(false);
    await expect(backend.b.space(SPACE).claimOnce('ix3', 'short')).rejects.toBeInstanceOf(TypeError);
  });

  it.skipIf(skip)('delivers a notice about a record to the live process holding it, and to no one once it is gone', async () => {
    backend = await make();
    const heard: [string, unknown][] = [];
    await backend.a.space(SPACE).onNotice((key, notice) => heard.push([key, notice]));
    await backend.a.space<Job>(SPACE).put('k', job('running on a'), { hold: true });
    await backend.a.space<Job>(SPACE).put('free', { prompt: 'ended', status: 'ended' }, { hold: false });
    // The holder itself, and a record nobody holds: nobody to tell.
    expect(await backend.a.space(SPACE).notifyHolder('k', { hello: 1 })).toBe(false);
    expect(await backend.b.space(SPACE).notifyHolder('free', { hello: 2 })).toBe(false);
    if (backend.concurrent) {
      expect(await backend.b.space(SPACE).notifyHolder('k', { hello: 3 })).toBe(true);
      await vi.waitFor(() => expect(heard).toEqual([['k', { hello: 3 }]]));
      await backend.lose(backend.a);
    }
    // One process (file), or its holder gone: the notice reaches no one.
    expect(await backend.b.space(SPACE).notifyHolder('k', { hello: 4 })).toBe(false);
    expect(heard.filter(([, notice]) => (notice as { hello: number }).hello !== 3)).toEqual([]);
  });

  it.skipIf(skip)('gives each orphan to exactly one of several sweeping processes', async () => {
    backend = await make();
    const space = backend.a.space<Job>(SPACE);
    for (let i = 0; i < 10; i++) await space.put(`j${i}`, job(`job ${i}`), { hold: true });
    await backend.lose(backend.a);
    const c = await backend.another();
    const [fromB, fromC] = await Promise.all([backend.b.space<Job>(SPACE).claimOrphans(), c.space<Job>(SPACE).claimOrphans()]);
    const keys = [...fromB, ...fromC].map((e) => e.key).sort();
    expect(keys).toEqual(Array.from({ length: 10 }, (_, i) => `j${i}`).sort());
  });

  it.skipIf(skip)('sweeps at start, through the sweeper, what a stopped process left running, and each once', async () => {
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
    // Later sweeps find nothing more to take.
    expect(await space.claimOrphans()).toEqual([]);
    await sweeper.stop();
    expect(swept).toEqual(['left']);
    expect(await space.get('left')).toEqual({ prompt: 'left running', status: 'ended' });
  });
});

describe('the data-folder backend', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await testTempDir('pictor-state-');
  });

  it('reads a record written before holders existed (the bare record), held by no live process', async () => {
    await mkdir(join(dataDir, 'test', 'jobs'), { recursive: true });
    await writeFile(join(dataDir, 'test', 'jobs', 'old.json'), JSON.stringify(job('from an older version')));
    const store = new FileStateStore({ dataDir });
    const space = store.space<Job>(SPACE);
    expect(await space.get('old')).toEqual(job('from an older version'));
    expect(await space.claimOrphans()).toEqual([{ key: 'old', value: job('from an older version') }]);
    await store.close();
  });

  it('forgets a record whose file is gone when claimOrphans finds it so, as has and read do: keys no longer lists it, the bounds no longer count it', async () => {
    const store = new FileStateStore({ dataDir });
    const COUNTED: SpaceDefinition = { ...SPACE, name: 'test-counted', dir: 'test/counted', maxCount: 2 };
    const space = store.space<Job>(COUNTED);
    await space.put('k1', job('a lighthouse'), { hold: false });
    await space.put('k2', job('a harbour'), { hold: false });
    await rm(join(dataDir, COUNTED.dir, 'k2.json'));
    expect(await space.claimOrphans()).toEqual([]);
    const keys: string[] = [];
    for await (const key of space.keys()) keys.push(key);
    expect(keys).toEqual(['k1']);
    await space.put('k3', job('a quay'));
    expect(await space.get('k1')).toEqual(job('a lighthouse'));
    await store.close();
  });

  it('answers none for a record past its TTL, lists it no more and does not have it, before the hourly prune removes its file', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => void vi.useRealTimers());
    const store = new FileStateStore({ dataDir });
    const space = store.space<Job>(SPACE);
    await space.put('old', job('written a minute ago'));
    vi.setSystemTime(Date.now() + SPACE.ttlMs! - 1);
    await space.put('new', job('written now'));
    expect(await space.get('old')).toEqual(job('written a minute ago'));
    expect(await space.has('old')).toBe(true);
    vi.setSystemTime(Date.now() + 2);
    const keys: string[] = [];
    for await (const key of space.keys()) keys.push(key);
    expect(keys).toEqual(['new']);
    expect(await space.get('old')).toBeUndefined();
    expect(await space.has('old')).toBe(false);
    expect(await space.has('new')).toBe(true);
    expect(await readdir(join(dataDir, 'test', 'jobs'))).toContain('old.json');
    await store.close();
  });

  it('throws for a record whose file fails to read (only a missing one is none), of bytes too, and on update; the record is still had', async () => {
    const store = new FileStateStore({ dataDir });
    const space = store.space<Job>(SPACE);
    const bytes = store.space<Buffer>({ name: 'test-bytes', dir: 'test/bytes', ttlMs: undefined, maxValueBytes: 1024, binary: true });
    await space.put('k1', job('a lighthouse'));
    await bytes.put('b1', Buffer.from('an image'));
    // A folder where the file was (EISDIR), as a permission change or a disk error would fail the read too.
    for (const file of [join(dataDir, 'test', 'jobs', 'k1.json'), join(dataDir, 'test', 'bytes', 'b1.bin')]) {
      await rm(file);
      await mkdir(file);
    }
    await expect(space.read('k1')).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(bytes.read('b1')).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(space.update('k1', () => job('a harbour'))).rejects.toMatchObject({ code: 'EISDIR' });
    expect(await space.has('k1')).toBe(true);
    await rm(join(dataDir, 'test', 'jobs', 'k1.json'), { recursive: true });
    expect(await space.read('k1')).toBeUndefined();
    await store.close();
  });

  it('keeps a record whose file a delete could not remove (a folder in its place): still had, listed and scanned until a delete removes it', async () => {
    const store = new FileStateStore({ dataDir });
    const space = store.space<Job>(SPACE);
    await space.put('k1', job('a lighthouse'));
    await space.put('k2', job('a harbour'));
    const file = join(dataDir, 'test', 'jobs', 'k1.json');
    await rm(file);
    await mkdir(file);
    await expect(space.delete('k1')).rejects.toMatchObject({ code: 'ERR_FS_EISDIR' });
    expect(await space.has('k1')).toBe(true);
    const keys: string[] = [];
    for await (const key of space.keys()) keys.push(key);
    expect(keys.sort()).toEqual(['k1', 'k2']);
    // A scan still meets it (and says it could not read it), so nothing reports it gone while its file stays.
    await expect(
      (async () => {
        for await (const entry of space.entries()) void entry;
      })(),
    ).rejects.toMatchObject({ code: 'state_records_unreadable', files: [file] });
    await rm(file, { recursive: true });
    await writeFile(file, '{}');
    await space.delete('k1');
    expect([await space.has('k1'), existsSync(file)]).toEqual([false, false]);
    await store.close();
  });

  it('keeps a record the count bound dropped whose file could not be removed (a folder in its place): still had, listed and met by a forget, until it is removed', async () => {
    const store = new FileStateStore({ dataDir });
    const COUNTED: SpaceDefinition = { ...SPACE, name: 'test-counted', dir: 'test/counted', maxCount: 2 };
    const space = store.space<Job>(COUNTED);
    await space.put('k1', job('a lighthouse'));
    await space.put('k2', job('a harbour'));
    const file = join(dataDir, COUNTED.dir, 'k1.json');
    await rm(file);
    await mkdir(file);
    // The bound drops k1, the oldest, and k3 is kept; k1's file cannot be removed.
    await space.put('k3', job('a quay'));
    await vi.waitFor(async () => {
      const keys: string[] = [];
      for await (const key of space.keys()) keys.push(key);
      expect(keys.sort()).toEqual(['k1', 'k2', 'k3']);
    });
    expect(await space.has('k1')).toBe(true);
    // A forget's sweep of damaged records meets it (and says it could not read it): it does not say done with it on disk.
    await expect(space.deleteDamaged(() => true)).rejects.toMatchObject({ code: 'state_records_unreadable', files: [file] });
    await rm(file, { recursive: true });
    await writeFile(file, '{}');
    // The next write's bound removes it.
    await space.put('k4', job('a pier'));
    await vi.waitFor(() => expect(existsSync(file)).toBe(false));
    const keys: string[] = [];
    for await (const key of space.keys()) keys.push(key);
    expect(keys.sort()).toEqual(['k3', 'k4']);
    await store.close();
  });

  it('takes the orphans it can read when one fails to read, leaving that one for the next sweep', async () => {
    const before = new FileStateStore({ dataDir });
    for (const key of ['held1', 'held2']) await before.space<Job>(SPACE).put(key, job(key), { hold: true });
    await before.close();
    const store = new FileStateStore({ dataDir });
    const space = store.space<Job>(SPACE);
    expect(await space.has('held1')).toBe(true);
    const file = join(dataDir, 'test', 'jobs', 'held1.json');
    await rename(file, `${file}.aside`);
    await mkdir(file);
    expect(await space.claimOrphans()).toEqual([{ key: 'held2', value: job('held2') }]);
    await rm(file, { recursive: true });
    await rename(`${file}.aside`, file);
    expect(await space.claimOrphans()).toEqual([{ key: 'held1', value: job('held1') }]);
    await store.close();
  });

  it('keeps its folders private (0700) and its files readable by the bot’s user only (0600), and drops records past their TTL while running', async () => {
    const store = new FileStateStore({ dataDir, pruneEveryMs: 50 });
    const space = store.space<Job>({ ...SPACE, ttlMs: 300 });
    await space.put('short', job('short-lived'));
    expect((await stat(join(dataDir, 'test', 'jobs', 'short.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dataDir, 'test', 'jobs'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(dataDir, 'test'))).mode & 0o777).toBe(0o700);
    await vi.waitFor(async () => expect(await readdir(join(dataDir, 'test', 'jobs'))).toEqual([]), { timeout: 3000, interval: 50 });
    await store.close();
  });

  it('ends the writes under way before its close resolves, and refuses every call after: nothing more reaches the folder', async () => {
    const store = new FileStateStore({ dataDir });
    const space = store.space<Job>(SPACE);
    const writing = space.put('k1', job('written as the store closes'));
    await store.close();
    // Whole and in place (no temp file left) once the close resolved.
    const folder = join(dataDir, 'test', 'jobs');
    expect(await readdir(folder)).toEqual(['k1.json']);
    expect(JSON.parse(await readFile(join(folder, 'k1.json'), 'utf8')).value).toEqual(job('written as the store closes'));
    await writing;
    for (const call of [() => space.put('k2', job('late')), () => space.update('k1', () => job('late')), () => space.delete('k1'), () => space.get('k1'), () => space.claimOnce('k3'), () => space.releaseClaim('k3', 'claim-k3'), () => space.claimOrphans()]) {
      await expect(call()).rejects.toMatchObject({ name: 'StateClosedError', code: 'state_closed' });
    }
    // A space first used after the close does not make its folder either.
    await expect(store.space<Job>({ ...SPACE, name: 'test-later', dir: 'test/later' }).put('k', job('late'))).rejects.toBeInstanceOf(StateClosedError);
    expect(await readdir(join(dataDir, 'test'))).toEqual(['jobs']);
    expect(await readdir(folder)).toEqual(['k1.json']);
  });

  it('leaves no prune timer running after its close, even when a call made just before it opens the folder after', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    onTestFinished(() => void vi.useRealTimers());
    const calls: ((space: Space<Job>) => Promise<unknown>)[] = [(space) => space.delete('k'), (space) => space.put('k', job('late')), (space) => space.update('k', () => job('late')), (space) => space.claimOnce('k')];
    for (const call of calls) {
      // Each call on a store of its own, closed in the same tick: the call's turn opens the space only after the close began.
      const store = new FileStateStore({ dataDir });
      const calling = call(store.space<Job>(SPACE));
      await store.close();
      await calling;
      expect(vi.getTimerCount()).toBe(0);
    }
  });

  it('counts a key taken once whose file is kept but damaged as taken, as Redis does; one whose file fails to read throws, never taken anew', async () => {
    const store = new FileStateStore({ dataDir });
    const taken = store.space(SPACE);
    const folder = join(dataDir, 'test', 'jobs');
    expect(await taken.claimOnce('damaged')).toBe(true);
    expect(await taken.claimOnce('unreadable')).toBe(true);
    await writeFile(join(folder, 'damaged.json'), '{"pictorState":1,"hol');
    await rm(join(folder, 'unreadable.json'));
    await mkdir(join(folder, 'unreadable.json'));
    // A replayed Slack request or a repeated Discord interaction: a second claim would start a second paid job.
    expect(await taken.claimOnce('damaged')).toBe(false);
    await expect(taken.claimOnce('unreadable')).rejects.toMatchObject({ code: 'EISDIR' });
    expect(await readFile(join(folder, 'damaged.json'), 'utf8')).toBe('{"pictorState":1,"hol');
    await store.close();
  });

  it('keeps the keys taken once within a bound, forgetting the oldest first', async () => {
    const store = new FileStateStore({ dataDir });
    const taken = store.space({ ...SPACE, maxCount: 3 });
    for (const key of ['i1', 'i2', 'i3', 'i4']) expect(await taken.claimOnce(key)).toBe(true);
    await vi.waitFor(async () => expect((await readdir(join(dataDir, 'test', 'jobs'))).sort()).toEqual(['i2.json', 'i3.json', 'i4.json']));
    expect(await new FileStateStore({ dataDir }).space(SPACE).claimOnce('i4')).toBe(false);
    await store.close();
  });
});

/**
 * A process's store on a Redis link of its own under a fresh prefix (`open` starts another on the same link); once the
 * test has finished, its stores are closed, then the link, and every key under the prefix is deleted.
 */
async function redisStoreForTest(name: string, { leaseMs }: { leaseMs: number | undefined } = { leaseMs: 5_000 }) {
  const url = requireRedisUrl(redis);
  const prefix = uniquePrefix(name);
  const link = await RedisLink.open({ url, prefix });
  const stores: RedisStateStore[] = [];
  onTestFinished(async () => {
    for (const store of stores) await store.close();
    await link.close();
    await deleteKeys(url, prefix);
  });
  const open = async () => {
    const store = await RedisStateStore.open({ link, leaseMs });
    stores.push(store);
    return store;
  };
  return { prefix, link, store: await open(), open };
}

describe.skipIf(redis.skipReason)('the Redis backend’s bounds', () => {
  it('puts a TTL on every key it writes (records, holders, accounts, lease), and none on a space without one', async () => {
    const { prefix, link, store } = await redisStoreForTest('state-ttl');
    await store.space<Job>({ ...SPACE, maxCount: 10 }).put('k', job('x'), { hold: true });
    await store.space<Job>({ ...SPACE, name: 'test-forever', ttlMs: undefined }).put('install', job('a token'));
    const keys = await link.commands.keys(`${prefix}:*`);
    expect(keys.sort()).toEqual(
      [`${prefix}:bots:lease:${store.owner}`, ...['held', 'index', 'sizes', 'r:k'].map((k) => `${prefix}:bots:test-jobs:${k}`), `${prefix}:bots:test-forever:r:install`].sort(),
    );
    expect(await link.commands.pttl(`${prefix}:bots:test-forever:r:install`)).toBe(-1);
    for (const key of keys.filter((k) => !k.endsWith(':install'))) expect(await link.commands.pttl(key)).toBeGreaterThan(0);
  });

  it('does not have a record past its TTL: its key carries the space’s TTL, and once that runs out (shortened here to a millisecond) has answers false', async () => {
    const { prefix, link, store } = await redisStoreForTest('state-has-ttl');
    const space = store.space<Job>(SPACE);
    await space.put('old', job('written a minute ago'));
    await space.put('new', job('written now'));
    const record = `${prefix}:bots:test-jobs:r:old`;
    expect(await space.has('old')).toBe(true);
    const left = await link.commands.pttl(record);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(SPACE.ttlMs!);
    // Its time runs out, as the space's TTL would let it, without the test waiting a minute.
    await link.commands.pexpire(record, 1);
    await vi.waitFor(async () => expect(await space.has('old')).toBe(false), { timeout: 15_000 });
    expect(await space.get('old')).toBeUndefined();
    expect(await space.has('new')).toBe(true);
  });

  it('counts a key an older version took (kept as 1) as taken, and no release of a claim gives it back: it runs out with its TTL', async () => {
    const { prefix, link, store } = await redisStoreForTest('state-old-claim');
    const space = store.space<Job>(SPACE);
    const once = `${prefix}:bots:test-jobs:once:old`;
    await link.commands.set(once, '1', 'PX', SPACE.ttlMs!);
    expect(await space.claimOnce('old', 'a-new-claim')).toBe(false);
    await space.releaseClaim('old', 'a-new-claim');
    expect(await link.commands.get(once)).toBe('1');
    expect(await link.commands.pttl(once)).toBeGreaterThan(0);
  });

  it('lists a space’s keys by scanning them alone, never fetching a value', async () => {
    const { store } = await redisStoreForTest('state-keys');
    const space = store.space<Job>(SPACE);
    for (let i = 0; i < 30; i++) await space.put(`k${i}`, job('x'.repeat(500)));
    const client = (space as unknown as { redis: RedisLink['commands'] }).redis;
    const fetched = [vi.spyOn(client, 'mget'), vi.spyOn(client, 'mgetBuffer'), vi.spyOn(client, 'get'), vi.spyOn(client, 'getBuffer')];
    const keys: string[] = [];
    for await (const key of space.keys()) keys.push(key);
    expect(keys.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `k${i}`).sort());
    for (const spy of fetched) expect(spy).not.toHaveBeenCalled();
  });

  it('takes a lease of 15 s when the settings leave PICTOR_REPLICA_LEASE_SECONDS unset', async () => {
    const { prefix, link, store } = await redisStoreForTest('state-default-lease', { leaseMs: readStateConfig({}).leaseMs });
    expect(store.leaseMs).toBe(15_000);
    expect(await link.commands.pttl(`${prefix}:bots:lease:${store.owner}`)).toBeGreaterThan(10_000);
  });

  it('keeps a record its holder writes after Redis lost every key (restarted empty, flushed) from another’s sweep before the holder renews its lease: the write puts that lease back', async () => {
    const { prefix, store: a, open } = await redisStoreForTest('state-flushed', { leaseMs: 60_000 });
    const b = await open();
    await a.space<Job>(SPACE).put('k', job('running'), { hold: true });
    await deleteKeys(requireRedisUrl(redis), prefix);
    // Its job goes on (its next renewal is a third of a lease away): its record is written again, held.
    await a.space<Job>(SPACE).put('k', job('shown'), { hold: true });
    expect(await b.space<Job>(SPACE).claimOrphans()).toEqual([]);
  });

  it('gives its lease back on close, so what it still held is taken over at once', async () => {
    const { store: a, open } = await redisStoreForTest('state-close', { leaseMs: 60_000 });
    const b = await open();
    await a.space<Job>(SPACE).put('k', job('x'), { hold: true });
    expect(await b.space<Job>(SPACE).claimOrphans()).toEqual([]);
    await a.close();
    expect(await b.space<Job>(SPACE).claimOrphans()).toEqual([{ key: 'k', value: job('x') }]);
  });

  it('lets a record written held while its process closes be taken over at once: that write does not put the lease back', async () => {
    const { store: a, open } = await redisStoreForTest('state-close-late', { leaseMs: 60_000 });
    const b = await open();
    await a.space<Job>(SPACE).put('k', job('running'), { hold: true });
    // A job the stop gave up on ends as its process closes: its write reaches Redis after the lease was given back.
    const closing = a.close();
    await a.space<Job>(SPACE).put('k', job('ended late'), { hold: true });
    await closing;
    expect(await b.space<Job>(SPACE).claimOrphans()).toEqual([{ key: 'k', value: job('ended late') }]);
  });
});

describe.skipIf(redis.skipReason)('a Redis update written again because the record changed under it', () => {
  interface Run {
    status: 'running' | 'ended';
    /** Its end is in the history and the audit channel: nothing left for its holder to do. */
    recorded?: boolean;
    progress?: number;
  }
  /** Held while anything of it is left to do, released once its end is recorded. */
  const holdUnlessRecorded = (run: Run) => !(run.status === 'ended' && run.recorded === true);

  async function twoProcesses() {
    const backend = await redisBackend();
    onTestFinished(() => backend.close());
    return { a: backend.a.space<Run>(SPACE), b: backend.b.space<Run>(SPACE), links: backend.links };
  }

  /**
   * Makes `meanwhile` happen between the first read of an update by `link`'s process and its write (the backend's put
   * script, which writes only if the record is still as read); answers the spy counting its writes.
   */
  function meanwhileBeforeFirstWrite(link: RedisLink, meanwhile: () => Promise<void>) {
    const commands = link.commands as RedisLink['commands'] & { pictorStatePut: (...args: unknown[]) => Promise<number> };
    const put = commands.pictorStatePut.bind(commands);
    const written = vi.spyOn(commands, 'pictorStatePut').mockImplementation(async (...args: unknown[]) => {
      if (written.mock.calls.length === 1) await meanwhile();
      return put(...args);
    });
    return written;
  }

  it('holds or releases the record as its hold decides from the value finally written, asked again on the try that wrote it', async () => {
    const { a, b, links } = await twoProcesses();
    await a.put('k', { status: 'running' }, { hold: true });
    // Between a's read and its write, b records the job's end (a write that leaves the holder as it is).
    const written = meanwhileBeforeFirstWrite(links[0]!, () => b.put('k', { status: 'ended', recorded: true }));
    const asked: Run[] = [];

    const { before, after } = await a.update('k', (run) => run && { ...run, progress: 100 }, { hold: (run) => (asked.push(run), holdUnlessRecorded(run)) });

    expect(written).toHaveBeenCalledTimes(2);
    expect(asked).toEqual([
      { status: 'running', progress: 100 },
      { status: 'ended', recorded: true, progress: 100 },
    ]);
    expect({ before, after }).toEqual({ before: { status: 'ended', recorded: true }, after: { status: 'ended', recorded: true, progress: 100 } });
    expect(await b.get('k')).toEqual(after);
    // Released by that write: no process is left holding an ended, recorded job (its sweep has nothing to take).
    expect(await b.heldElsewhere('k')).toBe(false);
  });

  it('keeps holding a record the value finally written still needs held, though the value first read would have released it', async () => {
    const { a, b, links } = await twoProcesses();
    await a.put('k', { status: 'ended', recorded: true }, { hold: false });
    // Between a's read and its write, b writes the record as running again.
    const written = meanwhileBeforeFirstWrite(links[0]!, () => b.put('k', { status: 'running' }));

    const { after } = await a.update('k', (run) => run && { ...run, progress: 0 }, { hold: holdUnlessRecorded });

    expect(written).toHaveBeenCalledTimes(2);
    expect(after).toEqual({ status: 'running', progress: 0 });
    expect(await b.heldElsewhere('k')).toBe(true);
  });
});

describe.skipIf(redis.skipReason)('the Redis backend’s notices', () => {
  it('subscribes again at the next listen when Redis refused the subscription once, instead of failing every later listen the same way', async () => {
    const { link, store, open } = await redisStoreForTest('state-listen');
    const subscribe = vi.spyOn(link, 'subscribe').mockRejectedValueOnce(new Error('Connection is closed.'));
    onTestFinished(() => void subscribe.mockRestore());
    const space = store.space<Job>(SPACE);
    await space.put('k', job('x'), { hold: true });
    const heard: unknown[] = [];
    await expect(space.onNotice((key, notice) => heard.push({ key, notice }))).rejects.toThrow('Connection is closed.');
    await space.onNotice((key, notice) => heard.push({ key, notice }));
    expect(subscribe).toHaveBeenCalledTimes(2);
    // Another process asks the holder of k.
    const other = await open();
    expect(await other.space<Job>(SPACE).notifyHolder('k', { cancel: 'now' })).toBe(true);
    await vi.waitFor(() => expect(heard).toEqual([{ key: 'k', notice: { cancel: 'now' } }]));
  });
});
