import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBotState } from '../../../bots/state/index.js';
import { DATA_FOLDER_LOCK, silentLogger } from '../../../src/internal.js';
import { testTempDir } from '../../helpers/temp-dir.js';
import { run } from '../../cli/run-cli.js';

const open = (dataDir: string) => openBotState({ dataDir, logger: silentLogger() });

/** The pid of a process that ran on this machine and is gone. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid!;
}

describe('openBotState on a data folder (no Redis)', () => {
  it('holds the folder while open, for this process only (its states share it), and gives it back when the last closes', async () => {
    const dataDir = await testTempDir('pictor-state-lock-');
    const lock = join(dataDir, DATA_FOLDER_LOCK);
    const first = await open(dataDir);
    expect(readFileSync(lock, 'utf8')).toBe(`${process.pid}\n${hostname()}\n`);
    const second = await open(dataDir);
    await first.close();
    expect(existsSync(lock)).toBe(true);
    await second.close();
    expect(existsSync(lock)).toBe(false);
    const again = await open(dataDir);
    await again.close();
  });

  it('refuses the folder while another live process of this machine holds it', async () => {
    const dataDir = await testTempDir('pictor-state-lock-');
    writeFileSync(join(dataDir, DATA_FOLDER_LOCK), `${process.ppid}\n${hostname()}\n`);
    await expect(open(dataDir)).rejects.toMatchObject({ param: 'PICTOR_DATA_DIR', message: expect.stringContaining(`(pid ${process.ppid} on ${hostname()})`) });
  });

  it('never takes over a lock of another machine (a network folder), however old: nothing here tells whether it still runs', async () => {
    const dataDir = await testTempDir('pictor-state-lock-');
    const lock = join(dataDir, DATA_FOLDER_LOCK);
    writeFileSync(lock, `4242\nanother-host.example\n`);
    utimesSync(lock, new Date(0), new Date(0));
    await expect(open(dataDir)).rejects.toMatchObject({ param: 'PICTOR_DATA_DIR', message: expect.stringContaining(`(pid 4242 on another-host.example)`) });
    await expect(open(dataDir)).rejects.toMatchObject({ message: expect.stringContaining(`If that process is gone for good, delete ${lock}.`) });
  });

  it('takes over a lock left by a process of this machine that is gone (a kill -9)', async () => {
    const dataDir = await testTempDir('pictor-state-lock-');
    writeFileSync(join(dataDir, DATA_FOLDER_LOCK), `${deadPid()}\n${hostname()}\n`);
    const state = await open(dataDir);
    await state.close();
  });

  it('lets the CLI, which shares only the ledger there, run beside the bots', async () => {
    const dataDir = await testTempDir('pictor-state-lock-');
    const state = await open(dataDir);
    try {
      const out = await testTempDir('pictor-state-lock-out-');
      const { code } = await run(['generate', '--prompt', 'a fox', '--quality', 'low', '--out', join(out, 'fox.png')], { PICTOR_DATA_DIR: dataDir, PICTOR_EMULATOR_LATENCY_MS: '0' });
      expect(code).toBe(0);
    } finally {
      await state.close();
    }
  }, 60_000);
});
