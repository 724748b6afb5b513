import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { ValidationError } from '../../src/index.js';
import { startService } from '../../bots/main.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { MAIN, start, startRunning } from '../helpers/npm-start.js';
import { surfaceEnv, unreachableSlackEnv } from '../helpers/service-fakes.js';
import { readOnlyFolder, UNPRIVILEGED, unprivilegedCanRead } from '../helpers/read-only-folder.js';
import { testTempDir } from '../helpers/temp-dir.js';

describe('npm start with a PICTOR_DATA_DIR it cannot use', () => {
  it('refuses to start, naming PICTOR_DATA_DIR, when the data folder is a file', async () => {
    const dir = await testTempDir('pictor-data-dir-');
    await writeFile(join(dir, 'afile'), '');
    const lines: string[] = [];
    const error = await startService(unreachableSlackEnv(join(dir, 'afile')), (l) => lines.push(l)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ param: 'PICTOR_DATA_DIR', message: `PICTOR_DATA_DIR must be a folder this process can write in: ${join(dir, 'afile')} is a file, not a folder` });
    expect(lines).toEqual([]);
  });

  it('exits 2 saying so, as every bad setting does', async () => {
    const dir = await testTempDir('pictor-data-dir-');
    await writeFile(join(dir, 'afile'), '');
    const result = await start(unreachableSlackEnv(join(dir, 'afile', 'data')));
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`pictor: PICTOR_DATA_DIR must be a folder this process can write in: ${join(dir, 'afile', 'data')} is inside a file, not a folder\n`);
  }, 60_000);

  // As root, whom no mode stops, it runs as an unprivileged user (a checkout that user cannot read is the one case left out).
  it.skipIf(!unprivilegedCanRead([MAIN, createRequire(import.meta.url).resolve('tsx')]))('exits 2 naming PICTOR_DATA_DIR when the folder is read-only to it', async () => {
    const { readOnly } = await readOnlyFolder('pictor-data-dir-read-only-');
    const result = await start(unreachableSlackEnv(readOnly), UNPRIVILEGED);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`pictor: PICTOR_DATA_DIR must be a folder this process can write in: ${readOnly} cannot be made or written in (permission denied)\n`);
  }, 60_000);
});

describe('npm start with a PICTOR_DATA_DIR that is not there yet', () => {
  it('makes it, and the parents it makes, readable by the bot’s user only (0700)', async () => {
    const dir = await testTempDir('pictor-data-dir-');
    await startService(unreachableSlackEnv(join(dir, 'new', 'data')), () => {}).catch(() => undefined);
    expect([(await stat(join(dir, 'new'))).mode & 0o777, (await stat(join(dir, 'new', 'data'))).mode & 0o777]).toEqual([0o700, 0o700]);
  }, 60_000);
});

describe('npm start on a data folder another npm start runs on (no Redis)', () => {
  it('exits 2 naming PICTOR_DATA_DIR, and the running one goes on and stops cleanly', async () => {
    const slack = await new FakeSlack().start();
    onTestFinished(() => slack.close());
    const dataDir = await testTempDir('pictor-data-dir-two-');
    const env = { PICTOR_DATA_DIR: dataDir, PICTOR_LOG_LEVEL: 'warn', ...surfaceEnv({ slack }) };
    const { child: first, output: firstOutput } = startRunning(env);
    await vi.waitFor(() => expect(firstOutput.stdout()).toMatch(/events at/), { timeout: 45_000, interval: 50 });
    const second = await start(env);
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(new RegExp(`^pictor: PICTOR_DATA_DIR ${dataDir} is in use by another Pictor process \\(pid ${first.pid} on `));
    expect(first.exitCode).toBe(null);
    first.kill('SIGTERM');
    expect((await firstOutput.ended).code).toBe(0);
  }, 120_000);
});

describe('npm start on a data folder whose store of an older version cannot be read, nor its backup', () => {
  it.each([
    { store: 'the Discord job store', file: join('discord', 'jobs.json'), remedy: 'buttons of the jobs it held will then say they are too old' },
    { store: 'the job history', file: 'history.json', remedy: 'the history it held is then not shown' },
  ])('exits 2 naming $store, its file and what to do, as for an unreadable ledger', async ({ store, file, remedy }) => {
    const dataDir = await testTempDir('pictor-data-dir-old-');
    await mkdir(join(dataDir, 'discord'), { recursive: true });
    await writeFile(join(dataDir, file), '{"version":1,"records":[{"ke');
    const result = await start(unreachableSlackEnv(dataDir));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^pictor: ${store} ${join(dataDir, file).replaceAll('.', '\\.')} \\(of an older version\\) is unreadable`));
    expect(result.stderr).toContain(`move it aside (or delete it) to start without it — ${remedy}`);
  }, 60_000);

  // A folder in the file's place (EISDIR): a test may run as root, whom no file mode stops reading.
  it.each([
    { what: 'the Discord job store', file: join('discord', 'jobs.json') },
    { what: 'the job history', file: 'history.json' },
  ])('exits 2 naming $what of an older version it cannot read (not absent, not damaged) and what to do', async ({ file }) => {
    const dataDir = await testTempDir('pictor-data-dir-old-');
    await mkdir(join(dataDir, file), { recursive: true });
    const result = await start(unreachableSlackEnv(dataDir));
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`pictor: could not read ${join(dataDir, file)}, kept by an older version (EISDIR): make it readable to the bot, or move it aside\n`);
  }, 60_000);
});
