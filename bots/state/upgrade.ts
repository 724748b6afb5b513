import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PictorError } from 'pictor';
import { safeJson, type QuotaStore, type RedisLink } from 'pictor/internal';
import { FileStateStore, LEGACY_HOLDER } from './FileStateStore.js';
import { keepInHistory, type HistoryItem } from './history.js';
import type { OpenBotStateOptions } from './open-state.js';
import { digestKeyOf, stateKeyOf, type BotSpaces } from './spaces.js';
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

type Upgrade = Pick<OpenBotStateOptions, 'dataDir' | 'ledger' | 'legacyLedgers' | 'logger'> & { store: StateStore; spaces: BotSpaces; redis: RedisLink | undefined };

/**
 * Moves what older versions kept elsewhere into the bots' state, once (docs/shared-limits.md lists it); each step
 * deletes what it moved and merges with what is there, so two replicas starting together do no harm. Logged once.
 */
export async function upgradeOldLayout(o: Upgrade): Promise<void> {
  // On Redis, a key says it was done (so no start scans the keyspace again); the data folder's old files go as they move.
  const done = o.redis && `${o.redis.config.prefix}:bots:layout`;
  if (done && (await o.redis!.commands.get(done)) === '2') return;
  const moved: Record<string, number> = {};
  const count = (what: string, n = 1) => void (n > 0 && (moved[what] = (moved[what] ?? 0) + n));
  // The ledger deletes what it handed over only once it is written here: a failure or a stop midway loses none, and the
  // next start's take merges it again (what a member set since wins).
  const takeFrom = (ledger: Pick<QuotaStore, 'takeLegacy'>) =>
    ledger.takeLegacy(async ({ settings, seen }) => {
      for (const [scopeKey, entries] of Object.entries(settings)) {
        await o.store.space<Record<string, unknown>>(o.spaces.scopeSettings).update(stateKeyOf(scopeKey), (now = {}) => ({ ...entries, ...now }));
        count('chat settings');
      }
      for (const signature of seen) await o.store.space(o.spaces.slackSeen).claimOnce(digestKeyOf(signature));
      count('Slack signatures seen', seen.length);
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
  if (o.redis) await upgradeRedis(o, o.redis, count);
  else await upgradeFiles(o, count);
  if (done) await o.redis!.commands.set(done, '2');
  if (Object.keys(moved).length > 0) o.logger.info({ moved }, 'moved what an older version kept into the bots’ state (once)');
}

async function upgradeFiles(o: Upgrade, count: (what: string, n?: number) => void): Promise<void> {
  const discord = join(o.dataDir, 'discord');
  const store = async (file: string) => {
    const text = await read(file);
    const parsed = safeJson<{ version?: number; records?: OldJobRecord[] }>(text);
    const good = parsed?.version === 1 && Array.isArray(parsed.records) && parsed.records.every((r) => typeof r?.key === 'string' && Array.isArray(r.inputs) && Array.isArray(r.outputs));
    return { found: text !== undefined, records: good ? parsed.records! : undefined };
  };
  const [main, backup] = [await store(join(discord, 'jobs.json')), await store(join(discord, 'jobs.json.bak'))];
  if (main.found && !main.records && !backup.records) throw new JobStoreUnreadableError(join(discord, 'jobs.json'));
  const records = main.records ?? backup.records ?? [];
  // Jobs left pending or running are held by a process that is gone: the sweep marks them interrupted.
  const legacy = new FileStateStore({ dataDir: o.dataDir, owner: LEGACY_HOLDER });
  for (const record of records.filter((r) => STATE_KEY_PATTERN.test(r?.key ?? '')).sort((a, b) => a.createdAt - b.createdAt)) {
    const keep = async (img: OldJobRecord['inputs'][number]) => {
      const read = await readFile(join(discord, 'images', record.key, img.file)).catch(() => undefined);
      // The kept images space takes what a job keeps now (its bytes as they are, none over the bound).
      const data = read && read.length > 0 && read.length <= o.spaces.discordImages.maxValueBytes ? read : undefined;
      const file = `${record.key}-${img.file.replace(/\..*$/, '')}`;
      if (data) await o.store.space<Buffer>(o.spaces.discordImages).put(file, data);
      return data ? [{ ...img, file }] : [];
    };
    const inputs = (await Promise.all(record.inputs.map(keep))).flat();
    const outputs = (await Promise.all(record.outputs.map(keep))).flat();
    const running = record.status === 'pending' || record.status === 'running';
    await legacy.space(o.spaces.discordJobs).put(record.key, { ...record, inputs, outputs }, { hold: running });
    if (record.status === 'draft') await o.store.space<unknown[]>(o.spaces.discordDrafts).update(record.requester.userId, (own = []) => [...own, { key: record.key, createdAt: record.createdAt }]);
    count('Discord jobs');
  }
  await legacy.close();
  // Every copy of the old store goes: it held the prompts.
  for (const name of (await readdir(discord).catch(() => [])).filter((n) => n.startsWith('jobs.json'))) await rm(join(discord, name), { force: true });
  await rm(join(discord, 'images'), { recursive: true, force: true });

  const history = safeJson<{ users?: Record<string, HistoryItem[]> }>(await read(join(o.dataDir, 'history.json')));
  for (const [userKey, entries] of Object.entries(history?.users ?? {})) {
    await keepInHistory(o, userKey, entries);
    count('history entries', entries.length);
  }
  for (const name of ['history.json', 'history.json.lock']) await rm(join(o.dataDir, name), { force: true, recursive: true });
}

async function upgradeRedis(o: Upgrade, redis: RedisLink, count: (what: string, n?: number) => void): Promise<void> {
  const { commands } = redis;
  const prefix = redis.config.prefix;
  const each = async (pattern: string, take: (key: string, rest: string) => Promise<void>) => {
    for await (const keys of commands.scanStream({ match: `${prefix}:${pattern}*`, count: 500 })) {
      for (const key of keys as string[]) await take(key, key.slice(prefix.length + pattern.length + 1));
    }
  };
  await each('history:user:', async (key, userKey) => {
    const entries = (await commands.lrange(key, 0, -1)).flatMap((raw) => safeJson<HistoryItem>(raw) ?? []);
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

async function read(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}
