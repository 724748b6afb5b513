import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RedisLink } from '../../src/internal.js';
import { filesIn } from './files-in.js';
import { dumpKey } from './shared-limits-redis.js';

/** Every file of the data folder and every key Pictor has in Redis under `prefix` (of every type), as one text. */
export async function everythingKept(dataDir: string, url: string | undefined, prefix: string): Promise<string> {
  // A write under way leaves a temporary file that is renamed (or removed) before it is read: its text is the file it became.
  const read = (file: string) => readFile(file, 'latin1').catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? '' : Promise.reject(error)));
  const texts = await Promise.all((await filesIn(dataDir)).map((file) => join(dataDir, file)).map(async (file) => `${file}\n${await read(file)}`));
  if (!url) return texts.join('\n');
  const link = await RedisLink.open({ url, prefix });
  try {
    const keys = [...(await link.commands.keys(`${prefix}:*`)), ...(await link.commands.keys(`b_${prefix}*`))];
    for (const key of keys) texts.push(`${key}\n${JSON.stringify(await dumpKey(link.commands, key))}`);
  } finally {
    await link.close();
  }
  return texts.join('\n');
}
