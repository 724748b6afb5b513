import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { LOCK_WAIT_MS } from '../../src/spend/file-lock.js';
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
 * Runs `body` with a clock that stands still from the start and jumps past the time the ledger's lock is waited for
 * (`LOCK_WAIT_MS`) as the lock first asks whether its holder `holderPid` is alive (`process.kill(pid, 0)`, which
 * every try at a lock held on this machine does): the try that follows gives up as it would at the end of the wait,
 * without the wait. Only `Date` is faked; the lock's polls and everything else run on real timers. Were that question
 * never asked, the clock would never reach the end of the wait and the test would time out: it never waits the real one.
 */
async function pastTheLockWait<T>(holderPid: number, body: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'] });
  const kill = process.kill.bind(process);
  let jumped = false;
  const asked = vi.spyOn(process, 'kill').mockImplementation((pid, signal) => {
    if (pid === holderPid && signal === 0 && !jumped) {
      jumped = true;
      vi.setSystemTime(Date.now() + LOCK_WAIT_MS + 1);
    }
    return kill(pid, signal);
  });
  try {
    return await body();
  } finally {
    asked.mockRestore();
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
      const { code, stdout, stderr } = await pastTheLockWait(holder.pid!, () => run(['generate', '--prompt', 'x', '--quality', 'low', '--json', '--out', out], env));
      expect(code).toBe(1);
      expect(JSON.parse(stdout)).toMatchObject({ ok: false, code: 'ledger_busy', path: lock, retryable: true });
      expect(stderr).toContain(`its lock ${lock} is held by process ${holder.pid} on ${hostname()} for more than ${LOCK_WAIT_MS / 1000} s`);
      expect(stderr).toMatch(/Try again in a moment.*Nothing was sent\.$/);
      expect(emu.emulator.requests).toHaveLength(0);
    } finally {
      holder.kill();
    }
  });
});
