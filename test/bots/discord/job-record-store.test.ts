import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
    expect(again.get(key)).toMatchObject({ kind: 'edit', prompt: 'p', options: { size: '1024x1536' }, status: 'completed', runnerJobId: 'job1' });
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
    expect(store.get(keys[0]!)).toBeUndefined();
    expect(store.get(keys[2]!)?.prompt).toBe('p2');
    await expect(readFile(join(dir, 'discord', 'images', keys[0]!, 'in-0.png'))).rejects.toMatchObject({ code: 'ENOENT' });
    await store.close();
  });

  it('starts empty, keeping the unreadable file aside, when the store file is corrupt', async () => {
    await (await JobRecordStore.open({ dataDir: dir, logger: silentLogger() })).close();
    await writeFile(join(dir, 'discord', 'jobs.json'), '{"version":1,"records":[');
    const store = await JobRecordStore.open({ dataDir: dir, logger: silentLogger() });
    expect(store.size).toBe(0);
    const key = store.newKey();
    await store.add({ key, kind: 'generate', prompt: 'x', options: {}, requester, status: 'pending' });
    await store.close();
    expect(JSON.parse(await readFile(join(dir, 'discord', 'jobs.json'), 'utf8')).records).toHaveLength(1);
  });
});
