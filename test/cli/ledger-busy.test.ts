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
 * Runs `body` with a clock that stands still from the start and moves as the lock asks whether its holder `holderPid`
 * is alive (`process.kill(pid, 0)`, which every try at a lock held on this machine does): at the first question to a
 * millisecond short of the time the ledger's lock is waited for (`LOCK_WAIT_MS`), so that try must not give up yet, and
 * at the next past it, so the try that follows gives up as it would at the end of the wait, without the wait. Answers
 * how often the holder was asked about, besides what `body` answers: a lock that gave up at the first try asked once.
 * Only `Date` is faked; the lock's polls and everything else run on real timers. Were that question never asked, the
 * clock would never reach the end of the wait and the test would time out: it never waits the real one.
 */
async function pastTheLockWait<T>(holderPid: number, body: () => Promise<T>): Promise<{ result: T; asked: number }> {
  vi.useFakeTimers({ toFake: ['Date'] });
  const kill = process.kill.bind(process);
  let first: number | undefined;
  let asked = 0;
  const spy = vi.spyOn(process, 'kill').mockImplementation((pid, signal) => {
    if (pid === holderPid && signal === 0) {
      asked++;
      first ??= Date.now();
      vi.setSystemTime(first + LOCK_WAIT_MS + (asked === 1 ? -1 : 1));
    }
    return kill(pid, signal);
  });
  try {
    return { result: await body(), asked };
  } finally {
    spy.mockRestore();
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
      const { result, asked } = await pastTheLockWait(holder.pid!, () => run(['generate', '--prompt', 'x', '--quality', 'low', '--json', '--out', out], env));
      const { code, stdout, stderr } = result;
      // Waited the whole time, not given up at the first try: the holder was asked about before and after the end.
      expect(asked).toBeGreaterThanOrEqual(2);
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
