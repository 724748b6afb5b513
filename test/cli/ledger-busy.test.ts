import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { useEmulator } from '../helpers/emulator.js';
import { run, tempDir } from './run-cli.js';

// The emulator poses as the real service: the job goes through the account's ledger.
const emu = useEmulator({ identifyAsEmulator: false });

/** A live process of this machine that does nothing: the holder of a lock that is not stale. */
async function liveProcess() {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  await new Promise<void>((resolve, reject) => child.once('spawn', resolve).once('error', reject));
  return child;
}

describe('pictor generate with a ledger another live process keeps locked', () => {
  it('fails with ledger_busy, retryable, names the lock and its holder, says nothing was sent, and sends nothing', async () => {
    const state = await tempDir();
    await mkdir(join(state, 'pictor'), { recursive: true });
    const holder = await liveProcess();
    try {
      const lock = join(state, 'pictor', 'quota-ledger.json.lock');
      await writeFile(lock, `${holder.pid}\n${hostname()}\ntoken\n`);
      const env = { PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, XDG_STATE_HOME: state };
      const { code, stdout, stderr } = await run(['generate', '--prompt', 'x', '--quality', 'low', '--json', '--out', `${await tempDir()}/`], env);
      expect(code).toBe(1);
      expect(JSON.parse(stdout)).toMatchObject({ ok: false, code: 'ledger_busy', path: lock, retryable: true });
      expect(stderr).toContain(`its lock ${lock} is held by process ${holder.pid} on ${hostname()}`);
      expect(stderr).toMatch(/Try again in a moment.*Nothing was sent\.$/);
      expect(emu.emulator.requests).toHaveLength(0);
    } finally {
      holder.kill();
    }
  });
});
