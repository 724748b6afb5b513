import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { settingsInState } from '../../../bots/runner/index.js';
import { botSpaces, FileStateStore, stateKeyOf, type SpaceDefinition } from '../../../bots/state/index.js';
import { RecordingLogger } from '../discord/harness.js';
import { testTempDir } from '../../helpers/temp-dir.js';

const JOBS: SpaceDefinition = { name: 'test-jobs', dir: 'test/jobs', ttlMs: 60_000, maxValueBytes: 1024 };
const IMAGES: SpaceDefinition = { name: 'test-images', dir: 'test/images', ttlMs: 60_000, maxValueBytes: 1024, binary: true };

describe('the data folder’s records that are not files (a folder in a record’s place)', () => {
  const opened: FileStateStore[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });

  async function storeWithFolderAt(definition: SpaceDefinition, key: string) {
    const dataDir = await testTempDir('pictor-state-');
    const path = join(dataDir, definition.dir, `${key}${definition.binary ? '.bin' : '.json'}`);
    await mkdir(path, { recursive: true });
    const logger = new RecordingLogger();
    const store = new FileStateStore({ dataDir, logger });
    opened.push(store);
    return { store, path, logger };
  }

  it.each([JOBS, IMAGES])('lists one there at start, whose read throws naming its path, never none ($name)', async (definition) => {
    const { store, path } = await storeWithFolderAt(definition, 'k1');
    const space = store.space(definition);
    await expect(space.get('k1')).rejects.toMatchObject({ code: 'EISDIR', message: expect.stringContaining(path) });
    await expect(space.read('k1')).rejects.toMatchObject({ code: 'EISDIR', message: expect.stringContaining(path) });
    expect(await space.has('k1')).toBe(true);
    const keys: string[] = [];
    for await (const key of space.keys()) keys.push(key);
    expect(keys).toEqual(['k1']);
  });

  it('warns once at open, naming the path, however often it is read', async () => {
    const { store, path, logger } = await storeWithFolderAt(JOBS, 'k1');
    const space = store.space(JOBS);
    for (let i = 0; i < 3; i++) await space.get('k1').catch(() => undefined);
    expect(logger.entries.filter((e) => e.level === 'warn').map((e) => e.obj)).toEqual([{ path }]);
  });

  it('names the path of a folder made in a record’s place after start', async () => {
    const dataDir = await testTempDir('pictor-state-');
    const store = new FileStateStore({ dataDir });
    opened.push(store);
    const space = store.space<{ n: number }>(JOBS);
    await space.put('k1', { n: 1 });
    const path = join(dataDir, JOBS.dir, 'k1.json');
    await rm(path);
    await mkdir(path);
    await expect(space.get('k1')).rejects.toMatchObject({ code: 'EISDIR', message: expect.stringContaining(path) });
  });

  it('keeps a server’s chat settings from reading as none: get and set throw, and nothing is written', async () => {
    const spaces = botSpaces();
    const key = stateKeyOf('discord:123');
    const { store, path } = await storeWithFolderAt(spaces.scopeSettings, key);
    const settings = settingsInState(store.space(spaces.scopeSettings), new RecordingLogger());
    await expect(settings.get('discord:123')).rejects.toMatchObject({ code: 'EISDIR', message: expect.stringContaining(path) });
    await expect(settings.set('discord:123', 'blockedWords', ['other'], { by: 'admin', at: 2 })).rejects.toMatchObject({ code: 'EISDIR' });
    expect(await readdir(path)).toEqual([]);
  });
});
