import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { writeFileAtomically } from '../../src/core/atomic-file.js';
import { appendUsage } from '../../src/spend/usage-days.js';
import { utcDay } from '../../src/spend/utc-period.js';
import { testTempDir } from '../helpers/temp-dir.js';

// Every call stays the real one; the spies record, in order, the renames, links, opens and fsyncs an atomic write makes.
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return { ...real, openSync: vi.fn(real.openSync), fsync: vi.fn(real.fsync), renameSync: vi.fn(real.renameSync), linkSync: vi.fn(real.linkSync) };
});
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return { ...real, open: vi.fn(real.open), rename: vi.fn(real.rename), link: vi.fn(real.link) };
});

type Failure = { code: string; at: 'open' | 'sync' };
let events: string[] = [];
/** The folder whose open or fsync fails, and how. */
let failFolder: { dir: string; failure: Failure } | undefined;

const errno = (code: string) => Object.assign(new Error(`${code}, folder`), { code });

beforeEach(async () => {
  events = [];
  failFolder = undefined;
  const real = await vi.importActual<typeof import('node:fs')>('node:fs');
  const realp = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
  const fdPaths = new Map<number, string>();
  vi.mocked(fs.openSync).mockImplementation((path, flags, mode) => {
    if (failFolder?.dir === path && failFolder.failure.at === 'open') throw errno(failFolder.failure.code);
    const fd = real.openSync(path, flags, mode);
    fdPaths.set(fd, String(path));
    events.push(`open ${String(path)}`);
    return fd;
  });
  vi.mocked(fs.fsync).mockImplementation((fd, callback) => {
    const path = fdPaths.get(fd)!;
    if (failFolder?.dir === path && failFolder.failure.at === 'sync') return callback(errno(failFolder.failure.code));
    events.push(`sync ${path}`);
    real.fsync(fd, callback);
  });
  vi.mocked(fs.renameSync).mockImplementation((from, to) => {
    real.renameSync(from, to);
    events.push(`rename ${String(to)}`);
  });
  vi.mocked(fs.linkSync).mockImplementation((from, to) => {
    real.linkSync(from, to);
    events.push(`link ${String(to)}`);
  });
  vi.mocked(fsp.open).mockImplementation(async (path, flags, mode) => {
    if (failFolder?.dir === path && failFolder.failure.at === 'open') throw errno(failFolder.failure.code);
    const handle = await realp.open(path, flags, mode);
    events.push(`open ${String(path)}`);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      if (failFolder?.dir === path && failFolder.failure.at === 'sync') throw errno(failFolder.failure.code);
      events.push(`sync ${String(path)}`);
      return sync();
    };
    return handle;
  });
  vi.mocked(fsp.rename).mockImplementation(async (from, to) => {
    await realp.rename(from, to);
    events.push(`rename ${String(to)}`);
  });
  vi.mocked(fsp.link).mockImplementation(async (from, to) => {
    await realp.link(from, to);
    events.push(`link ${String(to)}`);
  });
});

const tempDir = () => testTempDir('pictor-atomic-sync-');

describe.each([
  { steps: 'awaited one by one', inline: false },
  { steps: 'inline but the fsync', inline: true },
])('writeFileAtomically syncs the folder once the new version has its name, its steps $steps', ({ inline }) => {
  it('syncs the folder after the rename that puts the new version (and the backup) in place', async () => {
    const dir = await tempDir();
    const file = join(dir, 'ledger.json');
    await writeFileAtomically(file, 'one', { backupPath: `${file}.bak`, inline });
    events = [];
    await writeFileAtomically(file, 'two', { backupPath: `${file}.bak`, inline });

    expect(events.filter((event) => event.startsWith('rename') || event.endsWith(dir))).toEqual([`rename ${file}.bak`, `rename ${file}`, `open ${dir}`, `sync ${dir}`]);
    expect(await readFile(file, 'utf8')).toBe('two');
  });

  it('exclusive: syncs the folder after the link that gives the new file its name', async () => {
    const dir = await tempDir();
    const file = join(dir, 'fox.png');
    await writeFileAtomically(file, 'image', { exclusive: true, inline });

    expect(events.filter((event) => event.startsWith('link') || event.endsWith(dir))).toEqual([`link ${file}`, `open ${dir}`, `sync ${dir}`]);
  });

  it.each<Failure>([
    { code: 'EISDIR', at: 'open' },
    { code: 'EPERM', at: 'open' },
    { code: 'EINVAL', at: 'sync' },
    { code: 'ENOTSUP', at: 'sync' },
  ])('a folder that cannot be opened or synced ($code at $at: Windows, some file systems) does not fail the write', async (failure) => {
    const dir = await tempDir();
    const file = join(dir, 'ledger.json');
    failFolder = { dir, failure };
    await writeFileAtomically(file, 'one', { backupPath: `${file}.bak`, inline });
    await writeFileAtomically(file, 'two', { backupPath: `${file}.bak`, inline });
    await writeFileAtomically(join(dir, 'fox.png'), 'image', { exclusive: true, inline });

    expect(await readFile(file, 'utf8')).toBe('two');
    expect((await readdir(dir)).sort()).toEqual(['fox.png', 'ledger.json', 'ledger.json.bak']);
  });

  it('a folder sync that fails otherwise (EIO) fails the write: the new version may not outlive a power cut', async () => {
    const dir = await tempDir();
    failFolder = { dir, failure: { code: 'EIO', at: 'sync' } };
    await expect(writeFileAtomically(join(dir, 'ledger.json'), 'one', { inline })).rejects.toMatchObject({ code: 'EIO' });
  });
});

describe('the file ledger’s usage day files, appended (the records and prompts beside its ledger)', () => {
  const record = (jobId: string, time: number, prompt?: string) => ({ jobId, time, day: utcDay(time), month: utcDay(time).slice(0, 7), surface: 'cli' as const, userKey: 'cli:owner', scopeKey: 'cli', costUsd: 0.01, basis: 'table' as const, ...(prompt && { prompt }) });

  it('names each file and folder it makes durably (the folder holding it synced after it is made), and syncs no folder for a file it only appends to', async () => {
    const dir = await tempDir();
    const usage = join(dir, 'usage');
    const now = Date.UTC(2030, 5, 16, 12);
    await appendUsage(usage, now, [record('a', now, 'a fox')]);
    const made = events.filter((event) => event.startsWith('sync ') && !event.endsWith('.jsonl')).map((event) => event.replace(/feed-epoch\.\d+\.[0-9a-f]{8}\.tmp$/, 'feed-epoch.<temp>'));

    // `usage` three times: for the feed epoch written first (its temporary file synced before it is renamed), for the
    // prompts folder made in it, and for the day file.
    expect(made.sort()).toEqual(
      [`sync ${dir}`, `sync ${usage}`, `sync ${join(usage, 'feed-epoch.<temp>')}`, `sync ${usage}`, `sync ${usage}`, `sync ${join(usage, 'prompts')}`, `sync ${join(usage, 'prompts', '2030-06-16')}`].sort(),
    );
    events = [];
    await appendUsage(usage, now + 1000, [record('b', now + 1000, 'an owl')]);
    expect(events.filter((event) => event.startsWith('sync ') && !event.endsWith('.jsonl'))).toEqual([]);
  });
});
