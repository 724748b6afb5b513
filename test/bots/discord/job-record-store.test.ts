import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobRecordStore } from '../../../bots/discord/JobRecordStore.js';
import { silentLogger } from '../../../src/index.js';
import { makeImage } from '../../helpers/images.js';

const requester = { platform: 'discord' as const, userId: '1', channelId: '2', scopeId: '3' };

describe('the job record store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pictor-records-'));
    // As a data folder made with the usual umask would be.
    await chmod(dir, 0o755);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps records and their images across a reopen', async () => {
    const png = Buffer.from(await makeImage('png', 8, 8));
    const store = await JobRecordStore.open({ dataDir: dir, logger: silentLogger() });
    const key = store.newKey();
    await store.add({ key, kind: 'edit', prompt: 'p', options: { size: '1024x1536' }, requester, status: 'pending' }, [{ data: png, filename: 'a.png' }]);
    await store.update(key, { status: 'completed', runnerJobId: 'job1' });
    await store.saveOutputs(key, [png, png], 'png');
    await store.close();

    const again = await JobRecordStore.open({ dataDir: dir, logger: silentLogger() });
    expect(await again.get(key)).toMatchObject({ kind: 'edit', prompt: 'p', options: { size: '1024x1536' }, status: 'completed', runnerJobId: 'job1' });
    expect((await again.readInputs(key)).map((i) => [i.filename, i.data.equals(png)])).toEqual([['a.png', true]]);
    expect((await again.readOutput(key, 1))?.data.equals(png)).toBe(true);
    expect(await again.readOutput(key, 2)).toBeUndefined();
  });

  it('keeps only the newest records, removing the images of dropped ones', async () => {
    const store = await JobRecordStore.open({ dataDir: dir, maxRecords: 2, logger: silentLogger() });
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) {
      const key = store.newKey();
      keys.push(key);
      await store.add({ key, kind: 'edit', prompt: `p${i}`, options: {}, requester, status: 'completed' }, [{ data: Buffer.from(await makeImage('png', 4, 4)) }]);
    }
    expect(await store.get(keys[0]!)).toBeUndefined();
    expect((await store.get(keys[2]!))?.prompt).toBe('p2');
    await expect(readFile(join(dir, 'discord', 'images', keys[0]!, 'in-0.png'))).rejects.toMatchObject({ code: 'ENOENT' });
    await store.close();
  });

  it('refuses to open a garbage or truncated store file that has no backup, naming the file and what to do', async () => {
    await (await JobRecordStore.open({ dataDir: dir, logger: silentLogger() })).close();
    const file = join(dir, 'discord', 'jobs.json');
    for (const garbage of ['{"version":1,"records":[', '', 'null', '{"version":1,"records":[{"key":"x"}]}']) {
      await writeFile(file, garbage);
      const error = await JobRecordStore.open({ dataDir: dir, logger: silentLogger() }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'job_store_unreadable', file });
      expect((error as Error).message).toContain(file);
      expect((error as Error).message).toContain('move it aside');
    }
  });

  it('restores the backup copy when the store file is damaged, keeping the damaged one aside', async () => {
    const store = await JobRecordStore.open({ dataDir: dir, logger: silentLogger() });
    const kept = store.newKey();
    await store.add({ key: kept, kind: 'generate', prompt: 'kept', options: {}, requester, status: 'completed' });
    await store.add({ key: store.newKey(), kind: 'generate', prompt: 'lost', options: {}, requester, status: 'completed' });
    await store.close();
    await writeFile(join(dir, 'discord', 'jobs.json'), '{"version":1,"rec');

    const again = await JobRecordStore.open({ dataDir: dir, logger: silentLogger() });
    expect((await again.get(kept))?.prompt).toBe('kept');
    expect(again.size).toBe(1);
    await again.close();
    expect((await readdir(join(dir, 'discord'))).some((name) => name.startsWith('jobs.json.unreadable-'))).toBe(true);
  });

  it('never drops a pending or running record to make room, only finished ones, by count and by bytes', async () => {
    const store = await JobRecordStore.open({ dataDir: dir, maxRecords: 3, maxBytes: 10_000, logger: silentLogger() });
    const running = store.newKey();
    await store.add({ key: running, kind: 'edit', prompt: 'running', options: {}, requester, status: 'running' }, [{ data: Buffer.alloc(6000, 1) }]);
    const finished: string[] = [];
    for (let i = 0; i < 4; i++) {
      const key = store.newKey();
      finished.push(key);
      await store.add({ key, kind: 'edit', prompt: `done ${i}`, options: {}, requester, status: 'completed' }, [{ data: Buffer.alloc(3000, 2) }]);
    }
    expect((await store.get(running))?.prompt).toBe('running');
    // 6000 + 3000 bytes fit; a second finished record would not.
    expect(await Promise.all(finished.map(async (k) => (await store.get(k)) !== undefined))).toEqual([false, false, false, true]);
    await store.close();
  });

  it('keeps its folder private (0700) and its files readable by the bot’s user only (0600)', async () => {
    const dataDir = join(dir, 'data');
    const store = await JobRecordStore.open({ dataDir, logger: silentLogger() });
    const key = store.newKey();
    await store.add({ key, kind: 'edit', prompt: 'secret', options: {}, requester, status: 'running' }, [{ data: Buffer.from(await makeImage('png', 4, 4)) }]);
    await store.add({ key: store.newKey(), kind: 'generate', prompt: 'second write', options: {}, requester, status: 'running' });
    await store.close();
    const mode = async (path: string) => (await stat(path)).mode & 0o777;
    expect(await mode(dataDir)).toBe(0o700);
    expect(await mode(join(dataDir, 'discord'))).toBe(0o700);
    expect(await mode(join(dataDir, 'discord', 'images'))).toBe(0o700);
    expect(await mode(join(dataDir, 'discord', 'images', key))).toBe(0o700);
    expect(await mode(join(dataDir, 'discord', 'jobs.json'))).toBe(0o600);
    expect(await mode(join(dataDir, 'discord', 'jobs.json.bak'))).toBe(0o600);
    expect(await mode(join(dataDir, 'discord', 'images', key, 'in-0.png'))).toBe(0o600);
  });
});
