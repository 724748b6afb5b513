import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileStateStore, type SpaceDefinition } from '../../../bots/state/index.js';
import { testTempDir } from '../../helpers/temp-dir.js';

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, readFile: vi.fn(actual.readFile), rm: vi.fn(actual.rm) };
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

  it('says a damaged record it read but could not remove could not be deleted, not that it could not be read, and deletes the others', async () => {
    const dataDir = await testTempDir('pictor-state-');
    store = new FileStateStore({ dataDir });
    const space = store.space<{ prompt: string; userId: string }>(SPACE);
    for (const key of ['k1', 'k2']) {
      await space.put(key, { prompt: `a QUIXOTIC ${key}`, userId: '42' });
      await fs.writeFile(join(dataDir, SPACE.dir, `${key}.json`), `{"pictorState":1,"holder":null,"value":{"prompt":"a QUIXOTIC ${key}","userId":"42",}}`);
    }
    const k1 = join(dataDir, SPACE.dir, 'k1.json');
    vi.mocked(fs.rm).mockImplementationOnce(async (path) => {
      if (String(path) !== k1) throw new Error(`the test expected ${k1} removed first, not ${String(path)}`);
      throw Object.assign(new Error(`EPERM: operation not permitted, unlink '${k1}'`), { code: 'EPERM' });
    });

    const error = await space.deleteDamaged((text) => text.includes('"42"')).catch((e: unknown) => e);

    expect(error).toMatchObject({ code: 'state_records_unreadable', files: [k1] });
    expect((error as Error).message).toContain('1 test-jobs record(s) in');
    expect((error as Error).message).toContain(`could not be deleted (first: ${k1}, EPERM)`);
    expect((error as Error).message).not.toContain('could not be read');
    expect(await fs.readFile(k1, 'utf8')).toContain('QUIXOTIC k1');
    await expect(fs.stat(join(dataDir, SPACE.dir, 'k2.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
