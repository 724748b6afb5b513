import { readdir, readFile, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { FileStateStore, type SpaceDefinition } from '../../../bots/state/index.js';
import { testTempDir } from '../../helpers/temp-dir.js';

interface Job {
  prompt: string;
}

const SPACE: SpaceDefinition = { name: 'test-jobs', dir: 'test/jobs', ttlMs: 60_000, maxValueBytes: 1024 };

/** What the space keeps on disk: each file's name and the bytes of them all. */
async function onDisk(dataDir: string): Promise<{ files: string[]; bytes: number }> {
  const folder = join(dataDir, SPACE.dir);
  const files = (await readdir(folder)).sort();
  const sizes = await Promise.all(files.map(async (file) => (await stat(join(folder, file))).size));
  return { files, bytes: sizes.reduce((sum, size) => sum + size, 0) };
}

describe('a data-folder space’s size and age bounds', () => {
  it('keep the space within its size bound write after write, while the records they dropped are still being removed and some are written again', async () => {
    const dataDir = await testTempDir('pictor-state-bounds-');
    const store = new FileStateStore({ dataDir });
    const BOUNDED: SpaceDefinition = { ...SPACE, maxBytes: 600 };
    const space = store.space<Job>(BOUNDED);
    // Each write of its own key at once: the bound drops the oldest while earlier drops still wait for their turn.
    await Promise.all(Array.from({ length: 30 }, (_, i) => space.put(`k${i}`, { prompt: 'x'.repeat(20 + (i % 7) * 10) })));
    // Keys the bound dropped (or is dropping) written again at once, beside new ones.
    await Promise.all([...['k0', 'k1', 'k2'].map((key) => space.put(key, { prompt: `${key} again` })), space.put('last', { prompt: 'the newest' })]);
    await store.close();
    const { files, bytes } = await onDisk(dataDir);
    expect(bytes).toBeLessThanOrEqual(600);
    expect(files).toEqual(expect.arrayContaining(['k0.json', 'k1.json', 'k2.json', 'last.json']));
    // What a new process lists is what is on disk, each written last.
    const next = new FileStateStore({ dataDir });
    const again = next.space<Job>(BOUNDED);
    const keys: string[] = [];
    for await (const key of again.keys()) keys.push(`${key}.json`);
    expect(keys.sort()).toEqual(files);
    expect(await again.get('k1')).toEqual({ prompt: 'k1 again' });
    await next.close();
  });

  it('drop the records past the age bound at the next write, and keep the space within its count bound', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => void vi.useRealTimers());
    const dataDir = await testTempDir('pictor-state-bounds-');
    const store = new FileStateStore({ dataDir });
    const space = store.space<Job>({ ...SPACE, maxCount: 3 });
    for (const key of ['a1', 'a2', 'a3', 'a4']) await space.put(key, { prompt: key });
    vi.setSystemTime(Date.now() + SPACE.ttlMs! + 1);
    await Promise.all(['b1', 'b2'].map((key) => space.put(key, { prompt: key })));
    await store.close();
    expect((await onDisk(dataDir)).files).toEqual(['b1.json', 'b2.json']);
  });

  // Written before the store opened: the bound at the start drops the old version while the write waits in its key's turn.
  it.each([
    { bound: 'age', space: SPACE, old: (file: string) => utimes(file, new Date(Date.now() - 2 * SPACE.ttlMs!), new Date(Date.now() - 2 * SPACE.ttlMs!)) },
    { bound: 'size', space: { ...SPACE, maxBytes: 300 }, old: (file: string) => utimes(file, new Date(Date.now() - 1000), new Date(Date.now() - 1000)) },
  ])('remove the old version the $bound bound drops, never a write of the same key queued before they ran: that write stays', async ({ space: bounded, old }) => {
    const dataDir = await testTempDir('pictor-state-bounds-');
    const before = new FileStateStore({ dataDir });
    await before.space<Job>(SPACE).put('k1', { prompt: 'old '.repeat(100) });
    await before.space<Job>(SPACE).put('k2', { prompt: 'kept' });
    await before.close();
    await old(join(dataDir, SPACE.dir, 'k1.json'));
    const store = new FileStateStore({ dataDir });
    const space = store.space<Job>(bounded);
    await space.put('k1', { prompt: 'new' });
    // Read at once, the new version is the record: the old one's drop no longer passes it over.
    expect(await space.get('k1')).toEqual({ prompt: 'new' });
    await store.close();
    expect(JSON.parse(await readFile(join(dataDir, SPACE.dir, 'k1.json'), 'utf8')).value).toEqual({ prompt: 'new' });
    const next = new FileStateStore({ dataDir });
    const again = next.space<Job>(bounded);
    expect([await again.get('k1'), await again.get('k2')]).toEqual([{ prompt: 'new' }, { prompt: 'kept' }]);
    await next.close();
  });
});
