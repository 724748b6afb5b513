import { readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { FileStateStore } from '../../../bots/state/FileStateStore.js';
import { digestKeyOf, openBotState, type BotState, type Space, type SpaceDefinition } from '../../../bots/state/index.js';
import { FileQuotaStore } from '../../../src/spend/FileQuotaStore.js';
import { RedisQuotaStore } from '../../../src/spend/RedisQuotaStore.js';
import type { LoggerLike } from '../../../src/index.js';
import { RedisLink, silentLogger } from '../../../src/internal.js';
import { filesIn } from '../../helpers/files-in.js';
import { restoreOldDataFolder, restoreOldRedis } from '../../helpers/old-layout.js';
import { tempDataDir, useCleanup } from '../../helpers/service-fakes.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { upgradeGiveUpHeard } from '../../helpers/upgrade-lease.js';
import { spyOnInstance } from '../../helpers/instance-spy.js';

/**
 * A removal to stop after, as a process stopped there would: `removing.stopAfter(path)` answers the error to fail with.
 * `removing.listedFirst`: the name a folder's listing (by name) puts first — the order of a listing is the file system's
 * (ext4 lists `jobs.json` before `jobs.json.bak`, another may not), so the tests choose the one that would fail.
 */
const removing = vi.hoisted(() => ({ stopAfter: (_path: string): Error | undefined => undefined, listedFirst: 'jobs.json' }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const rm: typeof fs.rm = async (path, options) => {
    await fs.rm(path, options);
    const stop = removing.stopAfter(String(path));
    if (stop) throw stop;
  };
  const readdir = (async (...args: Parameters<typeof fs.readdir>) => {
    const names = (await fs.readdir(...args)) as unknown[];
    const first = names.filter((name) => name === removing.listedFirst);
    return [...first, ...names.filter((name) => name !== removing.listedFirst)];
  }) as typeof fs.readdir;
  return { ...fs, rm, readdir };
});

const defer = useCleanup();
const redis = testRedis();
/** As in upgrade-once.test.ts: short, yet longer than an event loop held up on a busy machine. */
const leaseMs = 1_000;
/** The fixture's history was kept when it was captured: a long retention keeps it for years of test runs. */
const historyRetentionDays = 3650;
/** The Slack signature 0.1 had seen, in both of the fixture's layouts. */
const SIGNATURE = 'v0=5f2a0c0b9e0d4f3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a1908f7e6d5c4b';

/**
 * Everything the bots' state holds once started: every record of every space (binary ones too), whether each Discord job
 * is held, and whether the Slack signature 0.1 saw is taken. Two starts that moved the same records answer the same.
 */
async function everyRecord(state: BotState): Promise<Record<string, unknown>> {
  const all: Record<string, unknown> = {};
  for (const [name, definition] of Object.entries(state.spaces) as [string, SpaceDefinition][]) {
    const entries: { key: string; value: unknown }[] = [];
    for await (const entry of state.store.space(definition).entries()) entries.push(entry);
    all[name] = entries.sort((a, b) => a.key.localeCompare(b.key));
  }
  const jobs = state.store.space(state.spaces.discordJobs);
  // Held by whoever started the jobs (a process gone): the sweep's to take, after the upgrade as before it.
  all.discordJobsHeld = await Promise.all((all.discordJobs as { key: string }[]).map(async ({ key }) => [key, await jobs.heldElsewhere(key)]));
  all.signatureSeen = !(await state.store.space(state.spaces.slackSeen).claimOnce(digestKeyOf(SIGNATURE)));
  return all;
}

/** What a space's write is called in these tests: `<space>/<key>`. */
type Write = `${string}/${string}`;

/**
 * Spies on the writes the spaces of the data folder `dataDir` make (puts, updates, claims), in order; `before(write, n)`
 * may answer an error to stop the upgrade instead of that write (as a process stopped there would: the write is not
 * made). Stores of other folders (another test file's) are left alone.
 */
function watchWrites(dataDir: string, before: (write: Write, n: number) => Error | undefined = () => undefined) {
  const writes: Write[] = [];
  const spaceOf = FileStateStore.prototype.space;
  const spied = spyOnInstance(FileStateStore.prototype, 'space', (store) => store.dataDir === dataDir);
  const restore = () => void vi.restoreAllMocks();
  defer(async () => restore());
  spied.mockImplementation(function (this: FileStateStore, definition: SpaceDefinition) {
    const space = spaceOf.call(this, definition) as Space<unknown>;
    const wrap = <A extends [string, ...unknown[]], R>(write: (...args: A) => Promise<R>) => (...args: A): Promise<R> => {
      const name: Write = `${definition.name}/${args[0]}`;
      const stop = before(name, writes.length);
      if (stop) return Promise.reject(stop);
      writes.push(name);
      return write(...args);
    };
    return Object.assign(space, { put: wrap(space.put.bind(space)), update: wrap(space.update.bind(space)), claimOnce: wrap(space.claimOnce.bind(space)) });
  } as typeof spaceOf);
  return { writes, restore };
}

/** Each of these tests stops and starts the whole upgrade once per old record: a busy machine needs more than the default. */
const LOOP_TIMEOUT_MS = 120_000;

describe('the 0.1 upgrade on the data folder, stopped between two records and started again', () => {
  /** What 0.1 left in a data folder of its own, and a start on it (its ledger: the account's, in the same folder). */
  async function oldDataFolder({ backupOlder = false, mainDamaged = false } = {}) {
    const dataDir = await tempDataDir(defer, 'pictor-upgrade-stops-');
    await restoreOldDataFolder(dataDir, {});
    // Torn by a disk or a hand edit: its jobs are read from the backup copy.
    if (mainDamaged) await writeFile(join(dataDir, 'discord', 'jobs.json'), '{"version":1,"records":[{"key":');
    if (backupOlder) {
      // The backup copy is the store's write before the last: the first job was still running then.
      const backup = join(dataDir, 'discord', 'jobs.json.bak');
      const older = JSON.parse(await readFile(backup, 'utf8')) as { records: { key: string }[] };
      older.records = older.records.map((r) => (r.key === 'oldGenKey01' ? { ...r, status: 'running', outputs: [] } : r));
      await writeFile(backup, JSON.stringify(older));
    }
    const start = async () => {
      const ledger = new FileQuotaStore({ dir: dataDir });
      try {
        return await openBotState({ dataDir, ledger, logger: silentLogger(), historyRetentionDays });
      } finally {
        await ledger.close();
      }
    };
    return { dataDir, start };
  }

  /** What one start that nobody stopped leaves: the records of the bots' state, the files of the data folder. */
  async function uninterrupted(old: Parameters<typeof oldDataFolder>[0] = {}) {
    const { dataDir, start } = await oldDataFolder(old);
    const watched = watchWrites(dataDir);
    const state = await start();
    watched.restore();
    try {
      return { records: await everyRecord(state), files: await filesIn(dataDir), writes: watched.writes };
    } finally {
      await state.close();
    }
  }

  /** Stops the first start before the write `stopAt` answers true for, starts again, and answers what both left. */
  async function stoppedThenStarted(stopAt: (write: Write, n: number) => boolean) {
    const { dataDir, start } = await oldDataFolder();
    let stopped: Write | undefined;
    const watched = watchWrites(dataDir, (write, n) => (stopped === undefined && stopAt(write, n) ? ((stopped = write), new Error(`stopped before ${write}`)) : undefined));
    await expect(start()).rejects.toThrow(/^stopped before/);
    const left = await filesIn(dataDir);
    const state = await start();
    watched.restore();
    try {
      return { stopped, left, records: await everyRecord(state), files: await filesIn(dataDir) };
    } finally {
      await state.close();
    }
  }

  it('loses nothing and moves nothing twice whichever of its writes it is stopped before', async () => {
    const whole = await uninterrupted();
    // The old job store goes once its jobs are all moved (before history.json's first entry), history.json once all is.
    const historyFrom = whole.writes.findIndex((write) => /^history(-scopes)?\//.test(write));
    expect(historyFrom).toBeGreaterThan(0);
    const jobStore = [join('discord', 'jobs.json'), join('discord', 'images', 'oldEditKey1', 'in-0.png')];
    for (const [n, write] of whole.writes.entries()) {
      const again = await stoppedThenStarted((_, at) => at === n);
      expect(again.stopped, `stopped before write ${n}`).toBe(write);
      // What was not all moved yet was still where 0.1 kept it.
      expect(again.left, `stopped before ${write}`).toEqual(expect.arrayContaining([...(n < historyFrom ? jobStore : []), 'history.json']));
      expect(again.records, `stopped before ${write}`).toEqual(whole.records);
      expect(again.files, `stopped before ${write}`).toEqual(whole.files);
    }
  }, LOOP_TIMEOUT_MS);

  it.each([
    ['jobs.json, over the jobs it moved from it: not its older backup', { backupOlder: true }, 'jobs.json'],
    ['the backup it read (jobs.json is damaged): not the damaged jobs.json, which would stop the start', { mainDamaged: true }, 'jobs.json.bak'],
  ])('reads at the next start, when stopped while removing the Discord job store’s copies, the copy it read: %s', async (_, old, readFrom) => {
    const whole = await uninterrupted(old);
    const { dataDir, start } = await oldDataFolder(old);
    // Listed first, so a removal in the listing's order would remove it first.
    removing.listedFirst = readFrom;
    let stopped: string | undefined;
    removing.stopAfter = (path) => (stopped === undefined && /jobs\.json/.test(path) ? new Error(`stopped after removing ${(stopped = relative(dataDir, path))}`) : undefined);
    defer(async () => void Object.assign(removing, { stopAfter: () => undefined, listedFirst: 'jobs.json' }));
    await expect(start()).rejects.toThrow(/^stopped after removing/);
    expect((await filesIn(dataDir)).filter((file) => file.startsWith(join('discord', 'jobs.json')))).toEqual([join('discord', readFrom)]);
    const state = await start();
    try {
      expect(await everyRecord(state)).toEqual(whole.records);
      expect(await filesIn(dataDir)).toEqual(whole.files);
    } finally {
      await state.close();
    }
  });

  it('removes every copy 0.1 left of history.json, the temporary file of a write a crash stopped too (it holds prompts)', async () => {
    const { dataDir, start } = await oldDataFolder();
    // 0.1 wrote history.json atomically: a temporary file beside it, then a rename over it.
    const history = await readFile(join(dataDir, 'history.json'), 'utf8');
    await writeFile(join(dataDir, 'history.json.4242.0a1b2c3d.tmp'), history);
    const state = await start();
    await state.close();
    expect((await filesIn(dataDir)).filter((file) => file.startsWith('history.json'))).toEqual([]);
  });
});

describe.skipIf(redis.skipReason)('the 0.1 upgrade on Redis, its lease lost between two records and started again', () => {
  /** A second Slack installation beside the fixture's, so the scan of installations has two records to stop between. */
  const OTHER_INSTALLATION = { team: { id: 'T1OTHER', name: 'Other' }, bot: { token: 'xoxb-other-install-token', userId: 'U1BOT', id: 'B1BOT', scopes: ['commands'] } };
  /** The old keys the upgrade moves by scanning them (the ledger's settings and signatures are upgrade-once.test.ts's). */
  const SCANNED = /:(history:(user|scope|scopes)|slack:installation):/;

  /** What 0.1 left on Redis under a prefix of its own, and processes to start on it, each with its own link and ledger. */
  async function oldRedis() {
    const url = requireRedisUrl(redis);
    const prefix = uniquePrefix('upgrade-stops');
    defer(() => deleteKeys(url, prefix));
    const dataDir = await tempDataDir(defer, 'pictor-upgrade-stops-');
    const replica = async () => {
      const link = await RedisLink.open({ url, prefix });
      const ledger = new RedisQuotaStore({ redis: link.commands, prefix });
      defer(async () => {
        await ledger.close();
        await link.close();
      });
      return { link, start: (logger: LoggerLike = silentLogger()) => openBotState({ dataDir, redis: link, ledger, logger, leaseMs, historyRetentionDays }) };
    };
    const first = await replica();
    await restoreOldRedis(first.link.commands, prefix, {});
    await first.link.commands.set(`${prefix}:slack:installation:team-T1OTHER`, JSON.stringify(OTHER_INSTALLATION));
    /** Every key under the prefix but the processes' leases and the upgrade's (named by a process's random id), without the prefix. */
    const keys = async () =>
      (await first.link.commands.keys(`${prefix}:*`))
        .map((key) => key.slice(prefix.length + 1))
        .filter((key) => !/(^|:)(lease|owner):|^bots:upgrading$/.test(key))
        .sort();
    return { prefix, first, replica, keys };
  }

  /**
   * Spies on the deletes of the old keys the upgrade scans (the last step of moving each). `stop.after`: after the n-th
   * makes the lease another's (the holder learns it at its next renewal, and gives the upgrade up before it goes on, as
   * it logs to `logger`, the start's); `stop.failing`: the n-th fails, the key left in place (as a Redis error or a crash
   * between writing a record and deleting its old key).
   */
  function watchOldKeysGo(link: RedisLink, prefix: string, stop: { after?: number; failing?: number } = {}) {
    const deleted: string[][] = [];
    const lost = upgradeGiveUpHeard();
    const del = link.commands.del.bind(link.commands) as (...keys: string[]) => Promise<number>;
    vi.spyOn(link.commands, 'del').mockImplementation((async (...keys: string[]) => {
      if (!SCANNED.test(keys[0] ?? '')) return del(...keys);
      if (deleted.length + 1 === stop.failing) throw new Error('Redis did not answer');
      const answer = await del(...keys);
      deleted.push(keys.map((key) => key.slice(prefix.length + 1)));
      if (deleted.length === stop.after) {
        await del(`${prefix}:bots:upgrading`);
        await lost.gaveUp;
      }
      return answer;
    }) as never);
    return { deleted, logger: lost.logger };
  }

  async function uninterrupted() {
    const { prefix, first, keys } = await oldRedis();
    const { deleted } = watchOldKeysGo(first.link, prefix);
    const state = await first.start();
    try {
      return { deleted, records: await everyRecord(state), keys: await keys() };
    } finally {
      await state.close();
    }
  }

  /** Loses the first start's lease after the `n`-th old key it moved, starts another process, and answers what both left. */
  async function lostThenStarted(n: number, how: 'lease lost' | 'delete failed' = 'lease lost') {
    const { prefix, first, replica, keys } = await oldRedis();
    const old = (await keys()).filter((key) => SCANNED.test(`:${key}`));
    const { deleted, logger } = watchOldKeysGo(first.link, prefix, how === 'lease lost' ? { after: n } : { failing: n });
    await expect(first.start(logger)).rejects.toMatchObject(how === 'lease lost' ? { code: 'state_upgrade_lost' } : { message: 'Redis did not answer' });
    const left = { old: (await keys()).filter((key) => SCANNED.test(`:${key}`)), layout: await first.link.commands.get(`${prefix}:bots:layout`) };
    const state = await (await replica()).start();
    try {
      return { old, deleted, left, records: await everyRecord(state), keys: await keys() };
    } finally {
      await state.close();
    }
  }

  it('loses nothing and moves nothing twice whichever old key it stops after', async () => {
    const whole = await uninterrupted();
    // Each scan lists its keys in an order of its own: what matters is how many, and of which kind.
    const kinds = (deleted: string[][]) => deleted.map(([key]) => key!.split(':').slice(0, 2).join(':'));
    // The members' history lists, the servers', the Slack installations: the last stop is with all moved, before the layout key says so.
    expect(kinds(whole.deleted)).toEqual(['history:user', 'history:user', 'history:scope', 'history:scope', 'slack:installation', 'slack:installation']);
    for (const n of whole.deleted.keys()) {
      const again = await lostThenStarted(n + 1);
      expect(kinds(again.deleted), `stopped after ${n + 1}`).toEqual(kinds(whole.deleted.slice(0, n + 1)));
      // The first start deleted only the old keys it had moved (each once it was written), and did not say it was done.
      expect(again.left, `stopped after ${n + 1}`).toEqual({ old: again.old.filter((key) => !again.deleted.flat().includes(key)), layout: null });
      expect(again.records, `stopped after ${whole.deleted[n]![0]}`).toEqual(whole.records);
      expect(again.keys, `stopped after ${whole.deleted[n]![0]}`).toEqual(whole.keys);
    }
  }, LOOP_TIMEOUT_MS);

  it('loses nothing and moves nothing twice when an old key it wrote into the state fails to be deleted (a crash between the two), whichever it is', async () => {
    const whole = await uninterrupted();
    for (const n of whole.deleted.keys()) {
      const again = await lostThenStarted(n + 1, 'delete failed');
      expect(again.deleted, `failed at ${n + 1}`).toHaveLength(n);
      expect(again.records, `failed at ${n + 1}`).toEqual(whole.records);
      expect(again.keys, `failed at ${n + 1}`).toEqual(whole.keys);
    }
  }, LOOP_TIMEOUT_MS);
});
