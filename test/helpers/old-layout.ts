import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';

/** The data folder and Redis keys as version 0.1 (commit 3291903) wrote them: see test/fixtures/old-layout/README.md. */
const FIXTURE = new URL('../fixtures/old-layout/', import.meta.url);

/** The ids in the fixture, to be replaced by a test's own (its fake Discord's users, server, channel and application). */
export const OLD_IDS = {
  alice: '111111111111111111',
  bob: '444444444444444444',
  channel: '222222222222222222',
  guild: '333333333333333333',
  application: '999999999999999999',
} as const;

type IdMap = Partial<Record<keyof typeof OLD_IDS, string>>;

function withIds(text: string, ids: IdMap): string {
  let out = text;
  for (const [name, id] of Object.entries(ids)) out = out.split(OLD_IDS[name as keyof typeof OLD_IDS]).join(id);
  return out;
}

/** Copies the old data folder into `dataDir`, with the test's ids in every text file. */
export async function restoreOldDataFolder(dataDir: string, ids: IdMap): Promise<void> {
  await cp(new URL('data', FIXTURE), dataDir, { recursive: true });
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (!entry.name.endsWith('.png')) await writeFile(path, withIds(await readFile(path, 'utf8'), ids), { mode: 0o600 });
    }
  };
  await walk(dataDir);
}

interface DumpedKey {
  key: string;
  type: 'string' | 'hash' | 'list' | 'set' | 'zset' | 'stream';
  pttl: number;
  value: unknown;
}

/** Writes the old Redis keys under `prefix` (instead of the fixture's), with the test's ids, each with its time to live. */
export async function restoreOldRedis(redis: Redis, prefix: string, ids: IdMap): Promise<void> {
  const dump = JSON.parse(withIds(await readFile(new URL('redis.json', FIXTURE), 'utf8'), ids)) as { prefix: string; keys: DumpedKey[] };
  for (const { key: oldKey, type, pttl, value } of dump.keys) {
    const key = `${prefix}${oldKey.slice(dump.prefix.length)}`;
    if (type === 'string') await redis.set(key, value as string);
    else if (type === 'hash') await redis.hset(key, value as Record<string, string>);
    else if (type === 'list') await redis.rpush(key, ...(value as string[]));
    else if (type === 'set') await redis.sadd(key, ...(value as string[]));
    else if (type === 'zset') await redis.zadd(key, ...(value as string[]).flatMap((_, i, all) => (i % 2 === 0 ? [all[i + 1]!, all[i]!] : [])));
    else for (const [id, fields] of value as [string, string[]][]) await redis.xadd(key, id, ...fields);
    if (pttl > 0) await redis.pexpire(key, pttl);
  }
}

/** The bytes of the old edit's input image (what a Reroll of it must send again). */
export function oldEditInput(): Promise<Buffer> {
  return readFile(new URL('data/discord/images/oldEditKey1/in-0.png', FIXTURE));
}
