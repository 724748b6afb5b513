import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PictorError, sniffImageType } from 'pictor';
import { describeDuration, RedisLease, safeJson, type QuotaStore, type RedisLink, type ScopeSettingEntries } from 'pictor/internal';
import { FileStateStore, LEGACY_HOLDER } from './FileStateStore.js';
import { keepInHistory, type HistoryItem } from './history.js';
import { imagesToKeep, isRunning, withDraft } from './job-records.js';
import type { OpenBotStateOptions } from './open-state.js';
import { digestKeyOf, isDamagedSettings, stateKeyOf, type BotSpaces } from './spaces.js';
import { STATE_KEY_PATTERN, type StateStore } from './StateStore.js';

interface OldJobRecord {
  key: string;
  status: string;
  createdAt: number;
  requester: { userId: string };
  inputs: { file: string; filename?: string; bytes?: number }[];
  outputs: { file: string; filename?: string; bytes?: number }[];
}

/** The Discord job store an older version left cannot be read, nor its backup copy: the bot must not start as if all were well. */
export class JobStoreUnreadableError extends PictorError<'job_store_unreadable'> {
  constructor(readonly file: string) {
    super(
      'job_store_unreadable',
      `the Discord job store ${file} (of an older version) is unreadable and has no usable backup (${file}.bak); ` +
        'move it aside (or delete it) to start without it — buttons of the jobs it held will then say they are too old',
    );
  }
}

/** The job history an older version left (`history.json`) cannot be read, nor its backup copy: its entries must not go without a word. */
export class HistoryUnreadableError extends PictorError<'history_store_unreadable'> {
  constructor(readonly file: string) {
    super('history_store_unreadable', `the job history ${file} (of an older version) is unreadable and has no usable backup (${file}.bak); move it aside (or delete it) to start without it — the history it held is then not shown`);
  }
}

/** A file an older version left (a store, a kept image) exists but cannot be read (EACCES, EISDIR): the start stops, naming it. */
export class OldFileUnreadableError extends PictorError<'old_file_unreadable'> {
  constructor(readonly file: string, cause: NodeJS.ErrnoException) {
    super('old_file_unreadable', `could not read ${file}, kept by an older version (${cause.code ?? cause.message}): make it readable to the bot, or move it aside`, { cause });
  }
}

/** Another process has held the upgrade past the bound, neither finishing it nor letting its lease lapse. */
export class UpgradeHeldError extends PictorError<'state_upgrade_held'> {
  constructor(readonly key: string, waitedMs: number) {
    super('state_upgrade_held', `another process has been moving what version 0.1 kept into the bots' state for over ${describeDuration(waitedMs)} and still holds ${key}: start this one again once it is done, or stop it if it hangs — its lease lapses within PICTOR_REPLICA_LEASE_SECONDS and the next start takes the upgrade over`);
  }
}

/** This process could not keep its upgrade lease (another may take the records over): it stopped between steps. */
export class UpgradeLostError extends PictorError<'state_upgrade_lost'> {
  constructor(readonly key: string) {
    super('state_upgrade_lost', `this process could not keep its lease on the upgrade from version 0.1 (${key}) until it was done (Redis did not confirm it in time, or another process holds it: an event loop held up, or a slow Redis), so it stopped between steps and another process may take the upgrade over: start this one again — what it had not moved yet stays where it was`);
  }
}

type Upgrade = Pick<OpenBotStateOptions, 'dataDir' | 'ledger' | 'legacyLedgers' | 'logger' | 'upgradeWaitMs'> & { store: StateStore; spaces: BotSpaces; redis: RedisLink | undefined };
/** The upgrade's steps, told when to stop: aborted once this process no longer holds the upgrade. */
type Steps = Upgrade & { signal?: AbortSignal | undefined };

type Count = (what: string, n?: number) => void;

/**
 * Moves what older versions kept into the bots' state (docs/shared-limits.md); a start stopped midway loses nothing.
 * The chat settings and Slack signatures a 0.1 process still running beside this version (a rolling deploy) writes to
 * the ledger later are taken at every start, each setting merged by when it was set (`newerSettings`).
 */
export async function upgradeOldLayout(o: Upgrade): Promise<void> {
  const moved: Record<string, number> = {};
  const count: Count = (what, n = 1) => void (n > 0 && (moved[what] = (moved[what] ?? 0) + n));
  // The data folder is one process's (bots/README.md), its old files go as they move; Redis's replicas take turns.
  await (o.redis ? onceAcrossReplicas(o, o.redis, count) : moveOldLayout(o, count));
  if (Object.keys(moved).length > 0) o.logger.info({ moved }, 'moved what an older version kept into the bots’ state (a 0.1 process still running may write more: the next start takes it)');
}

/** A scope's chat settings in the bots' state with those an older version kept: each setting as its copy set last (the larger `at`; the state's on a tie). */
function newerSettings(state: Record<string, unknown> | undefined, taken: ScopeSettingEntries): Record<string, unknown> {
  const kept: Record<string, unknown> = { ...state };
  const setAt = (entry: unknown) => (typeof entry === 'object' && entry !== null && typeof (entry as { at?: unknown }).at === 'number' ? (entry as { at: number }).at : -Infinity);
  for (const [name, entry] of Object.entries(taken)) if (!(name in kept) || entry.at > setAt(kept[name])) kept[name] = entry;
  return kept;
}

/**
 * One process at a time upgrades, under the lease `<p>:bots:upgrading` (two at once brought back what an admin cleared).
 * The others wait until `<p>:bots:layout` says it was done, and take over from a holder whose lease lapsed.
 */
async function onceAcrossReplicas(o: Upgrade, { commands, config }: RedisLink, count: Count): Promise<void> {
  const [key, done, { owner, leaseMs }] = [`${config.prefix}:bots:upgrading`, `${config.prefix}:bots:layout`, o.store];
  // Renewed every third of its lifetime: given up after two renewals unconfirmed, a third of it before it could lapse.
  const onRenewFailed = (error: unknown) => o.logger.warn({ err: error }, 'could not renew the lease of the upgrade from 0.1');
  const lease = new RedisLease({ redis: commands, key, holder: owner, ttlMs: leaseMs, renewEveryMs: Math.floor(leaseMs / 3), onRenewFailed });
  const waitMs = o.upgradeWaitMs ?? 300_000;
  let told = false;
  for (const until = Date.now() + waitMs; ; await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, leaseMs / 3)))) {
    // Done: what a 0.1 process still running wrote to the ledger since is taken (a merge by `at`, safe beside another's).
    if ((await commands.get(done)) === '2') return takeOldRecords(o, count);
    if (await lease.take()) break;
    if (Date.now() >= until) throw new UpgradeHeldError(key, waitMs);
    if (!told) o.logger.info({ key, waitMs }, 'waiting for another process to finish moving what version 0.1 kept into the bots’ state');
    told = true;
  }
  // A lease not confirmed may be another's before long: this process stops at its next step rather than move the same records.
  const lost = new AbortController();
  lease.keep((why) => {
    o.logger.warn({ key, why }, 'gave up the upgrade from 0.1: its lease could not be kept');
    lost.abort(new UpgradeLostError(key));
  });
  try {
    if ((await commands.get(done)) !== '2') await moveOldLayout({ ...o, signal: lost.signal }, count);
    else await takeOldRecords({ ...o, signal: lost.signal }, count);
    lost.signal.throwIfAborted();
    await commands.set(done, '2');
  } finally {
    // A Redis gone meanwhile lets it lapse (within its lifetime): the start's own failure is the one told.
    await lease.giveBack(leaseMs).catch(() => undefined);
  }
}

async function moveOldLayout(o: Steps, count: Count): Promise<void> {
  await takeOldRecords(o, count);
  if (o.redis) await upgradeRedis(o, o.redis, count);
  else await upgradeFiles(o, count);
}

/** Thrown from an update's `change` to leave a damaged record as it is (`change` must not act outside). */
const LEAVE_DAMAGED = Symbol('leave the damaged record as it is');

/**
 * What the ledgers still hold in 0.1's layout: the chat settings and Slack signatures. On Redis each ledger looks through
 * the whole keyspace for them at every start (docs/shared-limits.md says what that costs).
 */
async function takeOldRecords(o: Steps, count: Count): Promise<void> {
  // The ledger deletes what it handed over only once it is written here: a failure or a stop midway loses none, and the
  // next start's take merges it again (of each setting, the copy set last wins).
  const takeFrom = (ledger: Pick<QuotaStore, 'takeLegacy'>) =>
    ledger.takeLegacy(async ({ settings, seen }) => {
      const settingsOf: string[] = [];
      for (const [scopeKey, entries] of Object.entries(settings)) {
        o.signal?.throwIfAborted();
        // A damaged record (unreadable, or no object of settings) keeps its restrictions and role budgets locked until an
        // admin sets them again (fail closed): the take leaves it as it is, and what 0.1 kept for the scope in the ledger.
        const change = (now: unknown) => {
          if (isDamagedSettings(now)) throw LEAVE_DAMAGED;
          return newerSettings(now as Record<string, unknown> | undefined, entries);
        };
        const taken = await o.store.space<Record<string, unknown>>(o.spaces.scopeSettings).update(stateKeyOf(scopeKey), change, { unreadable: true }).then(
          () => true,
          (error: unknown) => (error === LEAVE_DAMAGED ? false : Promise.reject(error)),
        );
        if (taken) count('chat settings');
        else {
          settingsOf.push(scopeKey);
          o.logger.warn({ scopeKey }, 'left the chat settings version 0.1 kept for a server/workspace in its ledger: their record in the bots’ state is damaged (locked until an admin sets or clears each setting again, or repairs them all); the next start after that takes them');
        }
      }
      for (const signature of seen) {
        o.signal?.throwIfAborted();
        await o.store.space(o.spaces.slackSeen).claimOnce(digestKeyOf(signature));
        count('Slack signatures seen');
      }
      return { settingsOf };
    });
  if (o.ledger) await takeFrom(o.ledger);
  for (const open of o.legacyLedgers ?? []) {
    const ledger = await open();
    try {
      await takeFrom(ledger);
    } finally {
      await ledger.close();
    }
  }
}

async function upgradeFiles(o: Steps, count: Count): Promise<void> {
  const discord = join(o.dataDir, 'discord');
  const store = async (file: string) => {
    const text = await read(file);
    const parsed = safeJson<{ version?: number; records?: OldJobRecord[] }>(text);
    const good = parsed?.version === 1 && Array.isArray(parsed.records) && parsed.records.every((r) => typeof r?.key === 'string' && Array.isArray(r.inputs) && Array.isArray(r.outputs));
    return { found: text !== undefined, records: good ? parsed.records! : undefined };
  };
  const [main, backup] = [await store(join(discord, 'jobs.json')), await store(join(discord, 'jobs.json.bak'))];
  if (main.found && !main.records && !backup.records) throw new JobStoreUnreadableError(join(discord, 'jobs.json'));
  // The copy the jobs are read from is the one removed last (removeOldCopies).
  const [from, records] = main.records ? ['jobs.json', main.records] : ['jobs.json.bak', backup.records ?? []];
  // Jobs left pending or running are held by a process that is gone: the sweep marks them interrupted.
  const legacy = new FileStateStore({ dataDir: o.dataDir, owner: LEGACY_HOLDER });
  /** Images whose first bytes are no PNG, JPEG or WebP signature (the formats the service makes), left behind; logged once. */
  const undecodable: string[] = [];
  // Closed whatever happens (a failed write): its prune timer must not outlive the start.
  try {
    for (const record of records.filter((r) => STATE_KEY_PATTERN.test(r?.key ?? '')).sort((a, b) => a.createdAt - b.createdAt)) {
      o.signal?.throwIfAborted();
      const read = async (img: OldJobRecord['inputs'][number]) => {
        // Only one that is not there is missing: any other failure stops the start, naming the file (as \`read\` does).
        const data = await readOld(join(discord, 'images', record.key, img.file));
        return data && data.length > 0 ? { img, data, file: `${record.key}-${img.file.replace(/\..*$/, '')}` } : undefined;
      };
      // Only an image is kept: one that is not would count as kept (its button offering it) and fail when used.
      const isImage = (found: { img: { file: string }; data: Buffer }) => sniffImageType(found.data) !== null || (undecodable.push(`${record.key}/${found.img.file}`), false);
      const [fromInputs, fromOutputs] = [await Promise.all(record.inputs.map(read)), await Promise.all(record.outputs.map(read))];
      // What a job keeps now, by the store's own rule (`imagesToKeep`).
      const keep = async ({ image: found, index }: { image: NonNullable<(typeof fromInputs)[number]>; index: number }, numbered: boolean) => {
        await o.store.space<Buffer>(o.spaces.discordImages).put(found.file, found.data);
        return { ...found.img, file: found.file, ...(numbered && { index }) };
      };
      const inputs = await Promise.all(imagesToKeep('in', fromInputs, isImage).kept.map((chosen) => keep(chosen, false)));
      const outputs = await Promise.all(imagesToKeep('out', fromOutputs, isImage).kept.map((chosen) => keep(chosen, true)));
      const made = record.outputs.length > 0 ? { made: record.outputs.length } : {};
      await legacy.space(o.spaces.discordJobs).put(record.key, { ...record, inputs, outputs, ...made }, { hold: isRunning(record) });
      // Listed once by its key: a start stopped after this record moves it again.
      const draft = { key: record.key, createdAt: record.createdAt };
      if (record.status === 'draft') await o.store.space<(typeof draft)[]>(o.spaces.discordDrafts).update(record.requester.userId, (own) => withDraft(own, draft));
      count('Discord jobs');
    }
  } finally {
    await legacy.close();
  }
  if (undecodable.length > 0) o.logger.warn({ images: undecodable }, 'left behind images version 0.1 kept that are not images (damaged): their jobs’ buttons say they are too old');
  await removeOldCopies(discord, 'jobs.json', from);
  await rm(join(discord, 'images'), { recursive: true, force: true });

  const oldHistory = async (file: string) => {
    const text = await read(join(o.dataDir, file));
    const parsed = safeJson<{ users?: Record<string, HistoryItem[]> }>(text);
    const good = typeof parsed === 'object' && parsed !== null && Object.values(parsed.users ?? {}).every(Array.isArray);
    return { found: text !== undefined, users: good ? (parsed.users ?? {}) : undefined };
  };
  // The backup copy only when history.json cannot be used: a good one is all that is read.
  const history = await oldHistory('history.json');
  const historyBackup = history.users ? undefined : await oldHistory('history.json.bak');
  if (history.found && !history.users && !historyBackup?.users) throw new HistoryUnreadableError(join(o.dataDir, 'history.json'));
  const [historyFrom, users] = history.users ? ['history.json', history.users] : ['history.json.bak', historyBackup?.users ?? {}];
  for (const [userKey, entries] of Object.entries(users)) {
    o.signal?.throwIfAborted();
    await keepInHistory(o, userKey, entries);
    count('history entries', entries.length);
  }
  await removeOldCopies(o.dataDir, 'history.json', historyFrom);
}

/**
 * Removes every copy 0.1 left of the file `base` in `dir` (they held the prompts), `readFrom` last: a start stopped
 * between two removals reads that one again, never an older copy over what it moved.
 */
async function removeOldCopies(dir: string, base: string, readFrom: string): Promise<void> {
  const copies = (await readdir(dir).catch(() => [] as string[])).filter((name) => name === base || name.startsWith(`${base}.`));
  for (const name of [...copies.filter((n) => n !== readFrom), ...copies.filter((n) => n === readFrom)]) await rm(join(dir, name), { force: true, recursive: true });
}

async function upgradeRedis(o: Steps, redis: RedisLink, count: Count): Promise<void> {
  const { commands } = redis;
  const prefix = redis.config.prefix;
  const each = async (pattern: string, take: (key: string, rest: string) => Promise<void>) => {
    for await (const keys of commands.scanStream({ match: `${prefix}:${pattern}*`, count: 500 })) {
      for (const key of keys as string[]) {
        o.signal?.throwIfAborted();
        await take(key, key.slice(prefix.length + pattern.length + 1));
      }
    }
  };
  await each('history:user:', async (key, userKey) => {
    const kept = await commands.lrange(key, 0, -1);
    const entries = kept.flatMap((raw) => safeJson<HistoryItem>(raw) ?? []).filter((entry) => typeof entry === 'object' && entry !== null);
    // Not moved and deleted with the old list, and said so (how many, and where: never their text, which may hold a prompt).
    if (entries.length < kept.length) o.logger.warn({ key, damaged: kept.length - entries.length }, 'dropped damaged entries of a job history version 0.1 kept in Redis (not JSON objects)');
    await keepInHistory(o, userKey, entries);
    await commands.del(key, `${prefix}:history:scopes:${userKey}`);
    count('history entries', entries.length);
  });
  // A server's list only repeated its members' entries.
  await each('history:scope:', async (key) => void (await commands.del(key)));
  await each('slack:installation:', async (key, name) => {
    const installation = safeJson<object>(await commands.get(key));
    if (installation && STATE_KEY_PATTERN.test(name)) await o.store.space(o.spaces.slackInstallations).put(name, installation);
    await commands.del(key);
    count('Slack installations');
  });
}

/** An old store's text; none when it is absent (any other error, EACCES, stops the start, naming the file). */
async function read(path: string): Promise<string | undefined> {
  return (await readOld(path))?.toString('utf8');
}

/** An old file's bytes; none when it is absent (any other error, EACCES or EISDIR, stops the start, naming the file). */
async function readOld(path: string): Promise<Buffer | undefined> {
  return readFile(path).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(new OldFileUnreadableError(path, error))));
}
