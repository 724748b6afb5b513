import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it, vi, type MockInstance } from 'vitest';
import { interruptReport } from '../../src/cli/interrupt.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { THIS_HOST } from '../../src/spend/file-lock.js';
import { LEDGER_FILES } from '../../src/spend/ledger-files.js';
import { useEmulator } from '../helpers/emulator.js';
import { waitUntil } from '../helpers/runner-harness.js';
import { CLI_ENTRY, REPO_ROOT, tempDir } from './run-cli.js';

const env = useEmulator();
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/**
 * Runs `body` with a fresh copy of the Ctrl+C watcher, on fake timers and with `process.exit` recorded instead of
 * run; afterwards the SIGINT listeners it added are removed and the clock and `process.exit` are the real ones again.
 */
async function withWatcher(body: (watcher: { interrupt: typeof import('../../src/cli/interrupt.js'); exit: MockInstance<typeof process.exit> }) => void | Promise<void>): Promise<void> {
  vi.useFakeTimers();
  vi.resetModules();
  const before = new Set(process.listeners('SIGINT'));
  const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
  try {
    await body({ interrupt: await import('../../src/cli/interrupt.js'), exit });
  } finally {
    for (const listener of process.listeners('SIGINT')) if (!before.has(listener)) process.off('SIGINT', listener);
    exit.mockRestore();
    vi.useRealTimers();
  }
}

describe('Ctrl+C during a generation', () => {
  it('says whether the job may have been billed, what the ledger charged, and which images were written', () => {
    expect(interruptReport({ phase: 'waiting', files: [] })).toEqual(['pictor: interrupted before the request was sent: nothing was billed.']);
    expect(interruptReport({ phase: 'sent', files: [] })).toEqual([
      'pictor: interrupted after the request was sent: the service may finish the job and bill it, and the ledger did not answer in time, so a later run charges it its estimate (marked uncertain); check your usage before trying again.',
      'No image had arrived yet, so none was written.',
    ]);
    expect(interruptReport({ phase: 'sent', files: ['/tmp/out/fox.partial-1.png'], settled: { action: 'settled', usd: 0.00636 } })).toEqual([
      'pictor: interrupted after the request was sent: charged $0.00636 (the images that came, plus the estimate of each that did not), as the service may finish the job and bill it; check your usage before trying again.',
      'Images written before the interruption (1):',
      '  /tmp/out/fox.partial-1.png',
    ]);
    expect(interruptReport({ phase: 'sent', files: [], settled: { action: 'released', usd: 0, released: 'answered' } })[0]).toBe(
      'pictor: interrupted after the service had refused the request, before it was sent again: nothing was charged.',
    );
  });

  it('words the end from why the process exits and from what the ledger decided, not from the phase alone', () => {
    expect(interruptReport({ phase: 'sent', files: [], exitedBy: 'second_interrupt' })[0]).toBe(
      'pictor: interrupted after the request was sent: the service may finish the job and bill it, and the second Ctrl+C came before the ledger answered, so a later run charges it its estimate (marked uncertain); check your usage before trying again.',
    );
    expect(interruptReport({ phase: 'sent', files: [], exitedBy: 'timer' })[0]).toContain('the ledger did not answer in time');
    expect(interruptReport({ phase: 'sent', files: [], settled: { action: 'released', usd: 0, released: 'not_sent' } })[0]).toBe(
      'pictor: interrupted before the request was sent: nothing was billed.',
    );
    // A failed job whose good images are being written: what the ledger charged, not "as finished".
    expect(interruptReport({ phase: 'done', files: ['/tmp/out/fox.png'], settled: { action: 'settled', usd: 0.00636 } })[0]).toBe(
      'pictor: interrupted while writing the images of a job that had ended: charged $0.00636.',
    );
    expect(interruptReport({ phase: 'done', files: [], settled: { action: 'released', usd: 0, released: 'answered' } })[0]).toBe(
      'pictor: interrupted while writing the images of a job that had ended: nothing was charged.',
    );
  });

  it('says a second Ctrl+C, not a silent ledger, ended the wait for the ledger', async () => {
    await withWatcher(({ interrupt, exit }) => {
      const said: string[] = [];
      const job = interrupt.watchJob((lines) => said.push(...lines));
      job.phase = 'sent';
      process.emit('SIGINT');
      process.emit('SIGINT');
      expect(exit).toHaveBeenCalledWith(130);
      expect(said[1]).toContain('the second Ctrl+C came before the ledger answered');
    });
  });

  it('a Ctrl+C after the request ended arms no exit, so the images are written; a second one still exits at once', async () => {
    await withWatcher(async ({ interrupt, exit }) => {
      const said: string[] = [];
      const job = interrupt.watchJob((lines) => said.push(...lines));
      job.phase = 'sent';
      interrupt.jobEnded();
      process.emit('SIGINT');
      expect(job.signal.aborted).toBe(false);
      await vi.advanceTimersByTimeAsync(interrupt.INTERRUPT_SETTLE_MS * 2);
      expect(exit).not.toHaveBeenCalled();
      expect(said).toEqual(['pictor: the job is done; writing its images (Ctrl+C again to stop now).']);
      process.emit('SIGINT');
      expect(exit).toHaveBeenCalledWith(130);
    });
  });

  it('exits 130 after a request was sent, saying it may be billed and naming the partial image already written', async () => {
    // Partial images at 3 s and 6 s, the image at 9 s: interrupted between the first partial and the end.
    env.emulator.configure({ latencyMs: 9_000 });
    const dir = await tempDir();
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'generate', '--prompt', 'a slow fox', '--stream', '--partial-images', '2', '--out', `${dir}/fox.png`], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitUntil(() => stderr.includes('fox.partial-1.png'), 'the first partial image is written', 30_000);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('pictor: interrupted after the request was sent: charged $');
    expect(stderr).toContain(`  ${dir}/fox.partial-1.png`);
  }, 60_000);

  it('cancels a request it had sent before exiting 130: the job is charged as a cancel (basis estimate) and no reservation is left', async () => {
    // The image takes a minute: the request is at the service, unanswered, when Ctrl+C comes.
    env.emulator.configure({ latencyMs: 60_000 });
    const data = await tempDir();
    const out = await tempDir();
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'generate', '--prompt', 'a slow fox', '--quality', 'low', '--out', `${out}/`], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: data },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitUntil(() => env.emulator.requests.length === 1, 'the service has the request', 30_000);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('pictor: interrupted after the request was sent: charged $0.00636 ');

    // The emulator's jobs go to its own ledger, inside the data folder.
    const store = new FileQuotaStore({ dir: join(data, 'emulator') });
    try {
      expect(await store.activeJobs()).toEqual([]);
      const records = await store.usage({});
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ outcome: 'cancelled', basis: 'estimate', images: 0, quality: 'low', costUsd: 0.00636 });
    } finally {
      await store.close();
    }
  }, 60_000);

  it('keeps an image that had arrived when the ledger does not answer: written as it came, then the exit 2 s after Ctrl+C says the ledger did not answer', async () => {
    // Two images, 4 s each: Ctrl+C between the first and the second.
    env.emulator.configure({ latencyMs: 4_000 });
    const data = await tempDir();
    const out = await tempDir();
    const child = spawnFox(['--n', '2', '--stream', '--partial-images', '0', '--out', `${out}/fox.png`], data);
    const lock = holdLedgerLock(data);
    try {
      await waitUntil(() => child.stderr().includes('image 1/2 done'), 'the first image arrived', 30_000);
      // Another process holds the ledger: the cancelled job cannot be settled.
      lock.take();
      child.process.kill('SIGINT');
      expect(await child.exited).toBe(130);
    } finally {
      lock.free();
    }
    expect(readFileSync(`${out}/fox.png`).subarray(1, 4).toString()).toBe('PNG');
    expect(existsSync(`${out}/fox-2.png`)).toBe(false);
    expect(child.stderr()).toContain('the ledger did not answer in time, so a later run charges it its estimate (marked uncertain)');
    expect(child.stderr()).toContain(`  ${out}/fox.png`);
  }, 60_000);

  it('exits 130 at a second Ctrl+C while the first waits for a ledger that does not answer', async () => {
    env.emulator.configure({ latencyMs: 60_000 });
    const data = await tempDir();
    const out = await tempDir();
    const child = spawnFox(['--out', `${out}/`], data);
    const lock = holdLedgerLock(data);
    try {
      await waitUntil(() => env.emulator.requests.length === 1, 'the service has the request', 30_000);
      lock.take();
      child.process.kill('SIGINT');
      await waitUntil(() => child.stderr().includes('Ctrl+C again to exit now'), 'the first Ctrl+C is answered', 30_000);
      child.process.kill('SIGINT');
      expect(await child.exited).toBe(130);
    } finally {
      lock.free();
    }
    expect(child.stderr().match(/pictor: interrupted after the request was sent/g)).toHaveLength(1);
  }, 60_000);
});

/** `pictor generate` of a fox against the test's emulator, in its own process, its ledgers in `data`. */
function spawnFox(args: string[], data: string) {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'generate', '--prompt', 'a slow fox', '--quality', 'low', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: data },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { process: child, stderr: () => stderr, exited };
}

/** The emulator ledger's lock in `data`, held as another live process of this machine would (this test's own pid). */
function holdLedgerLock(data: string) {
  const path = join(data, 'emulator', `${LEDGER_FILES.ledger}.lock`);
  return {
    take: () => writeFileSync(path, `${process.pid}\n${THIS_HOST}\n`, { flag: 'wx' }),
    free: () => rmSync(path, { force: true }),
  };
}
