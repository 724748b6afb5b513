import { symlink, stat, writeFile } from 'node:fs/promises';
import * as fsp from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handsInodeBack } from '../helpers/hands-inode-back.js';
import type { FileQuotaStore } from '../../src/internal.js';
import { useFileQuotaStores, useTempDirs } from '../helpers/runner-harness.js';

/**
 * A reader's position in `usage.jsonl` (the console's) must not outlive a rewrite of the file (prompts forgotten,
 * old records pruned): each rewrite renames a new file into place and frees the old one's inode, which the file
 * system may hand back to the next rewrite. `handsInodeBack` makes that certain: every open of `usage.jsonl` reports
 * the inode it had first.
 */
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, open: vi.fn(actual.open) };
});

afterEach(() => {
  vi.mocked(fsp.open).mockRestore();
});

const newDir = useTempDirs();
const storeAt = useFileQuotaStores();

const job = (prompt: string) => ({ operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low', prompt });

async function settled(store: FileQuotaStore, jobId: string, userKey: string, prompt = 'a job of another member', now = Date.now()): Promise<void> {
  expect(await store.reserve({ jobId, userKey, scopeKey: 'discord:g', estimateUsd: 0.02, limits: {}, now, job: job(prompt) })).toEqual({ ok: true });
  await store.markSent(jobId);
  await store.settle(jobId, 0.011, { outcome: 'completed', images: 1 });
}

/** A second process on the same ledger (one store per file per process: opened through a link to the folder). */
async function otherProcess(dir: string, options: { usageRetentionDays?: number } = {}): Promise<FileQuotaStore> {
  const alias = `${dir}-other-process`;
  await symlink(dir, alias);
  return storeAt(alias, options);
}

describe('a reader of the file ledger’s usage records, across rewrites of usage.jsonl', () => {
  it('reads every record again, the erased prompt gone, after two rewrites by another process though the file came back with the same inode and grew past its position', async () => {
    const dir = await newDir();
    const reader = storeAt(dir);
    const bot = await otherProcess(dir);
    await settled(bot, 'q', 'discord:111', 'a QUIXOTIC lighthouse');
    await settled(bot, 'z', 'discord:222', 'a ZANZIBAR fox');
    const first = await reader.usageSince(undefined);
    expect(first.records.map((r) => r.prompt)).toEqual(['a QUIXOTIC lighthouse', 'a ZANZIBAR fox']);
    const firstSize = (await stat(reader.usagePath)).size;
    const inode = await handsInodeBack(reader.usagePath);

    await bot.forgetPrompts('discord:111');
    await settled(bot, 'o1', 'discord:901');
    await bot.forgetPrompts('discord:901');
    for (let i = 0; (await stat(reader.usagePath)).size < firstSize; i++) await settled(bot, `pad-${i}`, 'discord:333');

    const again = await reader.usageSince(first.cursor);
    expect(again.reset).toBe(true);
    const all = (await bot.usage({})).map((r) => r.jobId);
    expect(again.records.map((r) => r.jobId)).toEqual(all);
    expect(again.records.find((r) => r.jobId === 'q')!.prompt).toBeUndefined();
    expect(await reader.usageSince(again.cursor)).toMatchObject({ records: [], reset: false });
    // The reader opened the file at its old inode: the case this test is about, not a new inode.
    expect(inode.handedBack()).toBeGreaterThan(0);
  });

  it('reads all again after a rewrite that left the file as long as before, at the same inode', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await settled(store, 'a', 'discord:1', 'a lake');
    const read = await store.usageSince(undefined);
    const inode = await handsInodeBack(store.usagePath);
    // No prompt of theirs, but a line a crash cut short names them: the file is rewritten without it, as long as before.
    await writeFile(store.usagePath, `${(await fsp.readFile(store.usagePath, 'utf8')).trimEnd()}\n{"userKey":"discord:9"`, { flag: 'w' });
    await store.forgetPrompts('discord:9');
    await settled(store, 'b', 'discord:2', 'a hill');
    const again = await store.usageSince(read.cursor);
    expect(again.reset).toBe(true);
    expect(again.records.map((r) => r.jobId)).toEqual(['a', 'b']);
    // The reader opened the file at its old inode: the case this test is about, not a new inode.
    expect(inode.handedBack()).toBeGreaterThan(0);
  });

  it('reads every record again after old records were dropped (a rewrite too), though the file came back with the same inode', async () => {
    const dir = await newDir();
    const threeDaysAgo = Date.now() - 3 * 24 * 60 * 60_000;
    const reader = storeAt(dir, { clock: () => threeDaysAgo });
    await settled(reader, 'old', 'discord:1', 'a lake', threeDaysAgo);
    await settled(reader, 'older-too', 'discord:1', 'a hill', threeDaysAgo);
    const read = await reader.usageSince(undefined);
    const sizeAtRead = (await stat(reader.usagePath)).size;
    const inode = await handsInodeBack(reader.usagePath);
    // Another process keeping records two days drops them at its first append.
    const dropping = await otherProcess(dir, { usageRetentionDays: 2 });
    await settled(dropping, 'new', 'discord:2');
    // Its clean-up runs behind that answer: a closed store finished it. The bot goes on as a process on the same alias.
    await dropping.close();
    const bot = storeAt(`${dir}-other-process`, { usageRetentionDays: 2 });
    expect((await bot.usage({})).map((r) => r.jobId)).toEqual(['new']);
    for (let i = 0; (await stat(reader.usagePath)).size < sizeAtRead; i++) await settled(bot, `new-${i}`, 'discord:2');

    const again = await reader.usageSince(read.cursor);
    expect(again.reset).toBe(true);
    expect(again.records.map((r) => r.jobId)).toEqual((await bot.usage({})).map((r) => r.jobId));
    // The reader opened the file at its old inode: the case this test is about, not a new inode.
    expect(inode.handedBack()).toBeGreaterThan(0);
  });

  it('reads a usage.jsonl an older version wrote (no rewrite line) as before: its positions hold until its first rewrite', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await settled(store, 'a', 'discord:1', 'a lake');
    // As an older version left it: the records alone.
    const records = (await fsp.readFile(store.usagePath, 'utf8')).split('\n').filter((line) => line.includes('"jobId"'));
    await writeFile(store.usagePath, `${records.join('\n')}\n`);
    const read = await store.usageSince(undefined);
    expect(read.records.map((r) => r.jobId)).toEqual(['a']);
    await settled(store, 'b', 'discord:2', 'a hill');
    const next = await store.usageSince(read.cursor);
    expect(next).toMatchObject({ reset: false, records: [expect.objectContaining({ jobId: 'b' })] });
    const inode = await handsInodeBack(store.usagePath);
    await store.forgetPrompts('discord:1');
    const again = await store.usageSince(next.cursor);
    expect(again.reset).toBe(true);
    expect(again.records.map((r) => [r.jobId, r.prompt])).toEqual([
      ['a', undefined],
      ['b', 'a hill'],
    ]);
    // The reader opened the file at its old inode: the case this test is about, not a new inode.
    expect(inode.handedBack()).toBeGreaterThan(0);
  });
});
