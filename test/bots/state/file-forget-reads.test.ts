import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileStateStore, type SpaceDefinition } from '../../../bots/state/index.js';
import { testTempDir } from '../../helpers/temp-dir.js';

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, readFile: vi.fn(actual.readFile) };
});

const SPACE: SpaceDefinition = { name: 'test-jobs', dir: 'test/jobs', ttlMs: 60_000, maxValueBytes: 1024 };

describe('the data folder’s delete of damaged records (forget)', () => {
  let store: FileStateStore | undefined;
  afterEach(async () => store?.close());

  it('reads each record once, the damaged one it deletes too, in the record’s queue', async () => {
    const dataDir = await testTempDir('pictor-state-');
    store = new FileStateStore({ dataDir });
    const space = store.space<{ prompt: string; userId: string }>(SPACE);
    await space.put('k1', { prompt: 'a QUIXOTIC k1', userId: '42' });
    await space.put('k2', { prompt: 'a QUIXOTIC k2', userId: '42' });
    await fs.writeFile(join(dataDir, SPACE.dir, 'k1.json'), '{"pictorState":1,"holder":null,"value":{"prompt":"a QUIXOTIC k1","userId":"42",}}');
    vi.mocked(fs.readFile).mockClear();
    expect(await space.deleteDamaged((text) => text.includes('"42"'))).toBe(1);
    const reads = vi.mocked(fs.readFile).mock.calls.map(([path]) => String(path).slice(dataDir.length));
    expect(reads.sort()).toEqual([join('/', SPACE.dir, 'k1.json'), join('/', SPACE.dir, 'k2.json')]);
    expect(await space.has('k1')).toBe(false);
    expect(await space.get('k2')).toMatchObject({ userId: '42' });
  });
});
