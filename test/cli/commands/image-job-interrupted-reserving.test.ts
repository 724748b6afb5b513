import { afterEach, describe, expect, it, vi } from 'vitest';
import { runImageJob } from '../../../src/cli/commands/image-job.js';
import type { CliContext } from '../../../src/cli/context.js';
import { INTERRUPT_SETTLE_MS, type InterruptJson } from '../../../src/cli/interrupt.js';
import type { Connection } from '../../../src/connect.js';
import { PictorClient } from '../../../src/index.js';
import { tempDir } from '../run-cli.js';

const before = { SIGINT: process.listeners('SIGINT'), SIGTERM: process.listeners('SIGTERM') };
afterEach(() => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    for (const listener of process.listeners(signal)) if (!before[signal].includes(listener)) process.off(signal, listener);
  }
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('pictor generate stopped while the ledger is still reserving the job', () => {
  it('exits 130 at once when the reservation then fails: no settle is coming, so it does not wait out the 2 s, and says nothing was billed', async () => {
    const out = await tempDir();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    // The spend guard's reservation, held until the test lets it fail (a ledger that could not be used).
    let reserving!: () => void;
    const reached = new Promise<void>((resolve) => (reserving = resolve));
    let fail!: (error: unknown) => void;
    const onRequest = () => {
      reserving();
      return new Promise<never>((_, reject) => (fail = reject));
    };
    const stdout: string[] = [];
    const stderr: string[] = [];
    const connection: Connection = { client: undefined as never, emulatorUrl: undefined, emulatorLatencyMs: undefined, ledger: 'account', close: async () => undefined };
    const ctx: CliContext = {
      stdout: (line) => stdout.push(line),
      stderr: (line) => stderr.push(line),
      env: { PICTOR_BASE_URL: 'http://127.0.0.1:9' },
      progressEveryMs: 60_000,
      connect: async () => connection,
      client: () => new PictorClient({ baseURL: 'http://127.0.0.1:9', apiKey: 'sk-test', onRequest }),
    };

    let code: number | undefined;
    void runImageJob('generate', ['--prompt', 'a lighthouse', '--quality', 'low', '--out', `${out}/`, '--json'], ctx).then((exitCode) => (code = exitCode));
    await reached;
    process.emit('SIGINT');
    fail(new Error('the ledger could not be used'));
    await vi.advanceTimersByTimeAsync(INTERRUPT_SETTLE_MS - 1);

    expect(code).toBe(130);
    expect(exit).not.toHaveBeenCalled();
    expect(stderr).toContain('pictor: interrupted before the request was sent: nothing was billed.');
    expect(stdout.map((line) => JSON.parse(line) as InterruptJson)).toEqual([expect.objectContaining({ code: 'interrupted', sent: false, charged: 0 })]);
  });
});
