import { afterEach, describe, expect, it, vi } from 'vitest';
import { runImageJob } from '../../../src/cli/commands/image-job.js';
import type { CliContext } from '../../../src/cli/context.js';
import { INTERRUPT_SETTLE_MS, JobWatch, type InterruptJson } from '../../../src/cli/interrupt.js';
import { readCoreConfig } from '../../../src/config.js';
import { connect } from '../../../src/connect.js';
import { silentLogger } from '../../../src/internal.js';
import type { SpendWatch } from '../../../src/spend/spend-guard.js';
import { tempDir } from '../run-cli.js';
import { spyOnInstance } from '../../helpers/instance-spy.js';

/** Called once each image file is written: here the test presses Ctrl+C in the middle of the job's writes. */
const written = vi.hoisted(() => ({ then: undefined as (() => void) | undefined }));
vi.mock('../../../src/cli/output-paths.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/cli/output-paths.js')>();
  return {
    ...real,
    writeOutput: async (...args: Parameters<typeof real.writeOutput>) => {
      await real.writeOutput(...args);
      written.then?.();
    },
  };
});

const before = { SIGINT: process.listeners('SIGINT'), SIGTERM: process.listeners('SIGTERM') };
afterEach(() => {
  written.then = undefined;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    for (const listener of process.listeners(signal)) if (!before[signal].includes(listener)) process.off(signal, listener);
  }
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** A promise held until `free()`. */
function held() {
  let free!: () => void;
  const promise = new Promise<void>((resolve) => (free = resolve));
  return { promise, free };
}

/**
 * `pictor generate --json` of one image on an embedded emulator, with a Ctrl+C once its image is written but before the
 * command has said anything; the ledger's answer (the watch's `settled`) held until `settle.free()`, and closing the
 * connection (which waits for that settle) until `close.free()`. `process.exit` is only recorded. Resolves once the
 * images are written, which arms that Ctrl+C's exit timer (the time is fake from the Ctrl+C on).
 */
async function generateCtrlCDuringTheWrites() {
  const out = await tempDir();
  const config = readCoreConfig({ PICTOR_DATA_DIR: await tempDir() });
  const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
  // This command's watch: the one whose files are in its own output folder.
  const imagesWritten = spyOnInstance(JobWatch.prototype, 'imagesWritten', (watch) => watch.files.some((file) => file.startsWith(out)));
  const settle = held();
  const close = held();
  const stdout: string[] = [];
  const stderr: string[] = [];
  const ctx: CliContext = {
    stdout: (line) => stdout.push(line),
    stderr: (line) => stderr.push(line),
    env: {},
    progressEveryMs: 60_000,
    connect: async (options) => {
      const onJob = options?.onJob;
      const connection = await connect(config, silentLogger(), {
        ...options,
        onJob: (watch) =>
          onJob?.({
            ...watch,
            get settled() {
              const { settled } = watch;
              return settled && settle.promise.then(() => settled);
            },
          } as SpendWatch),
      });
      return {
        ...connection,
        close: async () => {
          await close.promise;
          await connection.close();
        },
      };
    },
    client: (connection) => connection.client,
  };
  written.then = () => {
    written.then = undefined;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    process.emit('SIGINT');
  };
  let code: number | undefined;
  const running = runImageJob('generate', ['--prompt', 'a lighthouse', '--quality', 'low', '--out', `${out}/`, '--json'], ctx).then((exitCode) => (code = exitCode));
  await vi.waitFor(() => expect(imagesWritten).toHaveBeenCalled(), { timeout: 15_000 });
  expect(stderr.join('\n')).toContain('the job is done; writing its images');
  return { exit, settle, close, stdout, stderr, running, code: () => code };
}

describe('pictor generate --json with a Ctrl+C while the images of a finished job are written', () => {
  it('prints nothing before the ledger answers: when the 2 s run out first, the interruption is the one line, and the exit 130', async () => {
    const { exit, settle, close, stdout, running, code } = await generateCtrlCDuringTheWrites();
    expect(stdout).toEqual([]);

    await vi.advanceTimersByTimeAsync(INTERRUPT_SETTLE_MS);

    expect(exit).toHaveBeenCalledWith(130);
    expect(stdout.map((line) => JSON.parse(line) as InterruptJson)).toEqual([expect.objectContaining({ ok: false, code: 'interrupted', sent: true, charged: null })]);
    settle.free();
    close.free();
    await running;
    expect(code()).toBe(130);
    expect(stdout).toHaveLength(1);
  });

  it('gives the result (ok: true) and exits 0 when the ledger answers in time, even if closing takes longer than the 2 s', async () => {
    const { exit, settle, close, stdout, running, code } = await generateCtrlCDuringTheWrites();

    settle.free();
    await vi.waitFor(() => expect(stdout).toHaveLength(1));
    expect(JSON.parse(stdout[0]!)).toMatchObject({ ok: true, operation: 'generate' });
    await vi.advanceTimersByTimeAsync(INTERRUPT_SETTLE_MS);
    expect(exit).not.toHaveBeenCalled();

    close.free();
    await running;
    expect(code()).toBe(0);
    expect(stdout).toHaveLength(1);
    expect(exit).not.toHaveBeenCalled();
  });
});
