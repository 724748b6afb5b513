import { spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
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

/**
 * Runs `body` with a clock that jumps past the 10 s the ledger's lock in `folder` is waited for as soon as the lock is
 * first tried (its draft file made beside it): the wait ends as it would, without 10 s of wall time. Only `Date` is
 * faked, and it goes on with the wall clock (a missed event costs the real 10 s, never a hang); the lock's polls and
 * everything else run on real timers.
 */
async function pastTheLockWait<T>(folder: string, body: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  const watcher = watch(folder, (_event, name) => {
    if (!name?.startsWith('quota-ledger.json.lock.') || !name.endsWith('.tmp')) return;
    watcher.close();
    vi.setSystemTime(Date.now() + 10_001);
  });
  try {
    return await body();
  } finally {
    watcher.close();
    vi.useRealTimers();
  }
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
      const out = `${await tempDir()}/`;
      const { code, stdout, stderr } = await pastTheLockWait(join(state, 'pictor'), () => run(['generate', '--prompt', 'x', '--quality', 'low', '--json', '--out', out], env));
      expect(code).toBe(1);
      expect(JSON.parse(stdout)).toMatchObject({ ok: false, code: 'ledger_busy', path: lock, retryable: true });
      expect(stderr).toContain(`its lock ${lock} is held by process ${holder.pid} on ${hostname()} for more than 10 s`);
      expect(stderr).toMatch(/Try again in a moment.*Nothing was sent\.$/);
      expect(emu.emulator.requests).toHaveLength(0);
    } finally {
      holder.kill();
    }
  });
});
