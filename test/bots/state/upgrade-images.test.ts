import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JobRecordStore } from '../../../bots/discord/JobRecordStore.js';
import { openBotState } from '../../../bots/state/index.js';
import { restoreOldDataFolder } from '../../helpers/old-layout.js';
import { tempDataDir, useCleanup } from '../../helpers/service-fakes.js';
import { RecordingLogger } from '../discord/harness.js';

const defer = useCleanup();

describe('the upgrade of a data folder version 0.1 left, whose kept images are not all images', () => {
  it('leaves behind an image whose first bytes are no PNG, JPEG or WebP signature (logged once), so no button offers it; the job’s other images keep their numbers, an edit’s inputs go together', async () => {
    const dataDir = await tempDataDir(defer, 'pictor-upgrade-images-');
    await restoreOldDataFolder(dataDir, {});
    const images = join(dataDir, 'discord', 'images');
    // The finished generation made two images; its first was damaged on disk (text where the PNG was), its second is whole.
    const jobs = JSON.parse(await readFile(join(dataDir, 'discord', 'jobs.json'), 'utf8')) as { records: { key: string; inputs: object[]; outputs: object[] }[] };
    jobs.records.find((r) => r.key === 'oldGenKey01')!.outputs.push({ file: 'out-1.png', filename: 'image-2.png', bytes: 95 });
    // The edit took two images: its first is replaced below, its second is whole.
    jobs.records.find((r) => r.key === 'oldEditKey1')!.inputs.push({ file: 'in-1.png', filename: 'dog.png', bytes: 95 });
    await writeFile(join(dataDir, 'discord', 'jobs.json'), JSON.stringify(jobs));
    await copyFile(join(images, 'oldGenKey01', 'out-0.png'), join(images, 'oldGenKey01', 'out-1.png'));
    const whole = await readFile(join(images, 'oldGenKey01', 'out-1.png'));
    await writeFile(join(images, 'oldGenKey01', 'out-0.png'), '<html>502 Bad Gateway</html>');
    // The edit's first input: a GIF's signature, which no format the service makes starts with.
    await copyFile(join(images, 'oldEditKey1', 'in-0.png'), join(images, 'oldEditKey1', 'in-1.png'));
    await writeFile(join(images, 'oldEditKey1', 'in-0.png'), Buffer.from('GIF89a'));

    const logger = new RecordingLogger();
    const state = await openBotState({ dataDir, logger });
    defer(() => state.close());
    const store = new JobRecordStore({ state, logger });
    const kept = state.store.space<Buffer>(state.spaces.discordImages);

    const generation = (await store.get('oldGenKey01'))!;
    expect(generation.outputs.map((img) => [img.file, img.index])).toEqual([['oldGenKey01-out-1', 1]]);
    expect(generation.made).toBe(2);
    expect(await kept.has('oldGenKey01-out-0')).toBe(false);
    expect(await store.readOutput('oldGenKey01', 0)).toBeUndefined();
    expect((await store.readOutput('oldGenKey01', 1))?.data).toEqual(whole);

    const edit = (await store.get('oldEditKey1'))!;
    expect(edit.inputs).toEqual([]);
    // All or none: the whole second input is not kept without the first.
    expect(await Promise.all([kept.has('oldEditKey1-in-0'), kept.has('oldEditKey1-in-1')])).toEqual([false, false]);
    expect(await store.readInputs('oldEditKey1')).toEqual([]);
    expect(edit.outputs).toHaveLength(1);

    const told = logger.entries.filter((e) => e.level === 'warn' && e.msg?.includes('not images'));
    expect(told).toHaveLength(1);
    expect((told[0]!.obj as { images: string[] }).images.sort()).toEqual(['oldEditKey1/in-0.png', 'oldGenKey01/out-0.png']);
  });

  it('stops the start on a kept image it cannot read for another reason than its absence (here a folder), naming it, and leaves what version 0.1 kept', async () => {
    const dataDir = await tempDataDir(defer, 'pictor-upgrade-images-');
    await restoreOldDataFolder(dataDir, {});
    const image = join(dataDir, 'discord', 'images', 'oldGenKey01', 'out-0.png');
    await rm(image);
    await mkdir(image);
    await expect(openBotState({ dataDir, logger: new RecordingLogger() })).rejects.toThrow(`could not read ${image}, kept by an older version (EISDIR)`);
    expect([existsSync(image), existsSync(join(dataDir, 'discord', 'jobs.json'))]).toEqual([true, true]);
  });
});
