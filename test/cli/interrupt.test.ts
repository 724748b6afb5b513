import { join } from 'node:path';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import { describe, expect, it, onTestFinished, vi, type MockInstance } from 'vitest';
import { firstStopLine, firstStopOf, INTERRUPT_SETTLE_MS, interruptJson, interruptReport, jobJson, JobWatch, wasSent, type InterruptJson } from '../../src/cli/interrupt.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { estimatePrice } from '../../src/core/pricing.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { JobLedger } from '../../src/spend/job-ledger.js';
import { LAPSED_LEASES_AT_MOST } from '../../src/spend/ledger-document.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import type { QuotaStore } from '../../src/spend/types.js';
import { THIS_HOST } from '../../src/spend/file-lock.js';
import { LEDGER_FILES } from '../../src/spend/ledger-files.js';
import { useEmulator } from '../helpers/emulator.js';
import { waitUntil } from '../helpers/runner-harness.js';
import { silentServer } from '../helpers/silent-server.js';
import { cliInAProcess, run, tempDir } from './run-cli.js';
import { spyOnInstance } from '../helpers/instance-spy.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const env = useEmulator();

/**
 * Runs `body` with a job's Ctrl+C answered (its lines collected in `said`), on fake timers and with `process.exit`
 * recorded instead of run; afterwards the job stops answering Ctrl+C and the clock and `process.exit` are the real ones
 * again.
 */
async function withWatcher(body: (watcher: { job: JobWatch; said: string[]; exit: MockInstance<typeof process.exit> }) => void | Promise<void>): Promise<void> {
  vi.useFakeTimers();
  const exit = exitRecorded();
  const job = new JobWatch();
  const said: string[] = [];
  job.listen((lines) => said.push(...lines));
  try {
    await body({ job, said, exit });
  } finally {
    job.close();
    exit.mockRestore();
    vi.useRealTimers();
  }
}

/**
 * The Ctrl+C report's words, checked here once: every other test of a Ctrl+C asserts which case it told (the report
 * of a job in that state), its exit code and its `--json` facts.
 */
describe('the words of a Ctrl+C: its first line and its report', () => {
  it('says whether the job may have been billed, what the ledger charged, and which images were written', () => {
    expect(interruptReport({ phase: 'waiting', files: [] })).toEqual(['pictor: interrupted before the request was sent: nothing was billed.']);
    expect(interruptReport({ phase: 'sent', files: ['/tmp/out/fox.partial-1.png'], settled: { action: 'settled', usd: 0.00636, recorded: true, deferred: false } })).toEqual([
      'pictor: interrupted after the request was sent: charged $0.00636 (the images that came, plus the estimate of each that did not), as the service may finish the job and bill it; check your usage before trying again.',
      'Images written before the interruption (1):',
      '  /tmp/out/fox.partial-1.png',
    ]);
    expect(interruptReport({ phase: 'sent', files: [], settled: { action: 'released', usd: 0, recorded: true, deferred: false, released: 'answered' } })[0]).toBe(
      'pictor: interrupted after the service had refused the request, before it was sent again: nothing was charged.',
    );
  });

  it('words the end from why the process exits and from what the ledger decided, not from the phase alone', () => {
    expect(interruptReport({ phase: 'sent', files: [], settled: { action: 'released', usd: 0, recorded: true, deferred: false, released: 'not_sent' } })[0]).toBe(
      'pictor: interrupted before the request was sent: nothing was billed.',
    );
    // A failed job whose good images are being written: what the ledger charged, not "as finished".
    expect(interruptReport({ phase: 'done', files: ['/tmp/out/fox.png'], settled: { action: 'settled', usd: 0.00636, recorded: true, deferred: false } })[0]).toBe(
      'pictor: interrupted while writing the images of a job that had ended: charged $0.00636.',
    );
    expect(interruptReport({ phase: 'done', files: [], settled: { action: 'released', usd: 0, recorded: true, deferred: false, released: 'answered' } })[0]).toBe(
      'pictor: interrupted while writing the images of a job that had ended: nothing was charged.',
    );
    // Its images written, the exit came while waiting for the ledger: not "while writing".
    expect(interruptReport({ phase: 'done', files: ['/tmp/out/fox.png'], written: true, settled: { action: 'settled', usd: 0.00636, recorded: true, deferred: false } })[0]).toBe(
      'pictor: interrupted after writing the images of a job that had ended: charged $0.00636.',
    );
  });

  it('says nothing was sent when the exit comes while the ledger records that the request may be billed, and that the job may be charged its estimate if it had recorded it', () => {
    expect(interruptReport({ phase: 'marking', files: [], exitedBy: 'timer' })).toEqual([
      'pictor: interrupted before the request was sent: nothing was sent, but the ledger did not answer in time while recording that it may be billed, and if it had recorded that, the job may be charged its estimate (marked uncertain when a later run charges it); check your usage before trying again.',
    ]);
    expect(interruptReport({ phase: 'marking', files: [], exitedBy: 'second_interrupt', secondSignal: 'the second Ctrl+C' })[0]).toBe(
      'pictor: interrupted before the request was sent: nothing was sent, but the second Ctrl+C came while the ledger was recording that it may be billed, and if it had recorded that, the job may be charged its estimate (marked uncertain when a later run charges it); check your usage before trying again.',
    );
    expect(interruptReport({ phase: 'marking', files: [], exitedBy: 'timer', emulator: true })[0]).toBe(
      "pictor: interrupted before the request was sent to the emulator: nothing was spent; the emulator's ledger did not answer in time while recording that it may be billed, and if it had recorded that, the job may be recorded there at its estimate (marked uncertain when a later run records it).",
    );
    // The ledger answered that it kept the cancel's release for later: it cannot tell whether its mark was recorded.
    expect(interruptReport({ phase: 'marking', files: [], kept: { action: 'released', usd: 0, recorded: false, deferred: true, released: 'not_sent' } })[0]).toBe(
      'pictor: interrupted before the request was sent: nothing was sent, but the ledger kept its release for later without saying whether it had recorded that it may be billed, and if it had recorded that, the job may be charged its estimate (marked uncertain when a later run charges it); check your usage before trying again.',
    );
    // The ledger answered: the cancel released it.
    expect(interruptReport({ phase: 'marking', files: [], settled: { action: 'released', usd: 0, recorded: true, deferred: false, released: 'not_sent' } })[0]).toBe(interruptReport({ phase: 'waiting', files: [] })[0]);
  });

  it('tells a job the emulator answered as what it would have cost, with nothing spent and no usage to check', () => {
    expect(interruptReport({ phase: 'sent', files: [], settled: { action: 'settled', usd: 0.16854, recorded: true, deferred: false }, emulator: true })[0]).toBe(
      'pictor: interrupted after the request was sent to the emulator: it would have cost $0.16854 on the real service (the images that came, plus the estimate of each that did not); nothing was spent.',
    );
    expect(interruptReport({ phase: 'done', files: [], settled: { action: 'settled', usd: 0.00636, recorded: true, deferred: false }, emulator: true })[0]).toBe(
      'pictor: interrupted while writing the images of a job the emulator had ended: it would have cost $0.00636 on the real service; nothing was spent.',
    );
    expect(interruptReport({ phase: 'sent', files: [], settled: { action: 'released', usd: 0, recorded: true, deferred: false, released: 'not_sent' }, emulator: true })[0]).toBe(
      'pictor: interrupted before the request was sent: nothing was billed.',
    );
  });

  it('says at once what the first Ctrl+C does: stops before anything was sent, cancels a sent request, or lets a done job write its images', () => {
    expect(firstStopOf('waiting')).toBe('stopping');
    expect(firstStopOf('marking')).toBe('stopping');
    expect(firstStopOf('sent')).toBe('cancelling');
    expect(firstStopOf('done')).toBe('writing');
    expect(firstStopLine('stopping', 'SIGINT')).toBe('pictor: stopping; nothing was sent (Ctrl+C again to exit now).');
    expect(firstStopLine('stopping', 'SIGTERM')).toBe('pictor: stopped by SIGTERM; nothing was sent (Ctrl+C to exit now).');
    expect(firstStopLine('cancelling', 'SIGINT')).toBe('pictor: cancelling the request (Ctrl+C again to exit now).');
    expect(firstStopLine('cancelling', 'SIGTERM')).toBe('pictor: stopped by SIGTERM; cancelling the request (Ctrl+C to exit now).');
    expect(firstStopLine('writing', 'SIGINT')).toBe('pictor: the job is done; writing its images (Ctrl+C again to stop now).');
    expect(firstStopLine('writing', 'SIGTERM')).toBe('pictor: stopped by SIGTERM; the job is done; writing its images (Ctrl+C to stop now).');
    expect(firstStopLine('settling', 'SIGINT')).toBe("pictor: the images are written; waiting 2 s at most for the ledger's answer (Ctrl+C again to exit now).");
    expect(firstStopLine('settling', 'SIGTERM')).toBe("pictor: stopped by SIGTERM; the images are written; waiting 2 s at most for the ledger's answer (Ctrl+C to exit now).");
  });

  it('words in full each way a charge is left to the ledger: a settle or release kept or unanswered, and a settle that found the job already ended', () => {
    const settle = { action: 'settled', usd: 0.00636, recorded: false, deferred: true } as const;
    const release = { action: 'released', usd: 0, recorded: false, deferred: true, released: 'answered' } as const;
    const endedBefore = { action: 'settled', usd: 0.00636, recorded: false, deferred: false } as const;
    const second = { exitedBy: 'second_interrupt', secondSignal: 'the second Ctrl+C' } as const;
    const settleOpen =
      'if its settle still reaches the ledger, or had already written its usage record (a later run then charges what that record says), the job is charged what this run decided; if neither, a later run charges it its estimate (marked uncertain), or nothing if the ledger had recorded that nothing was billed';
    const releaseOpen = 'if its release still reaches the ledger, nothing is charged; if not, a later run charges it its estimate (marked uncertain), or nothing if the ledger had recorded that nothing was billed';
    const emulatorSettleOpen =
      "if its settle still reaches the emulator's ledger, or had already written its usage record (a later run then records what that record says), the job is recorded there at what this run decided; if neither, a later run records it there at its estimate (marked uncertain), or nothing if the emulator's ledger had recorded that nothing was billed";
    const emulatorReleaseOpen =
      "if its release still reaches the emulator's ledger, nothing is recorded there; if not, a later run records it there at its estimate (marked uncertain), or nothing if the emulator's ledger had recorded that nothing was billed";
    const ended =
      "the ledger had already ended the job when this run's settle of $0.00636 reached it, so the settle charged nothing more: the job is charged what ended it — a reconcile once this run's lease had lapsed (its estimate, marked uncertain, or what its usage record says if the settle had written one), or an earlier try of the same settle whose answer was lost ($0.00636)";
    const sent = 'pictor: interrupted after the request was sent: the service may finish the job and bill it, and';
    const check = '; check your usage before trying again.';
    const cases: [Parameters<typeof interruptReport>[0], string][] = [
      [{ phase: 'sent', files: [], exitedBy: 'timer' }, `${sent} the ledger did not answer in time: ${settleOpen}${check}`],
      [{ phase: 'sent', files: [], ...second }, `${sent} the second Ctrl+C came before the ledger answered: ${settleOpen}${check}`],
      [{ phase: 'sent', files: [], exitedBy: 'second_interrupt', secondSignal: 'a SIGTERM' }, `${sent} a SIGTERM came before the ledger answered: ${settleOpen}${check}`],
      [{ phase: 'sent', files: [], exitedBy: 'second_interrupt', secondSignal: 'the second SIGTERM' }, `${sent} the second SIGTERM came before the ledger answered: ${settleOpen}${check}`],
      [{ phase: 'sent', files: [], kept: settle }, `${sent} the ledger kept its settle of $0.00636 for later: ${settleOpen}${check}`],
      [{ phase: 'sent', files: [], kept: release }, `pictor: interrupted after the service had refused the request, before it was sent again: nothing was billed, and the ledger kept its release for later: ${releaseOpen}${check}`],
      [{ phase: 'sent', files: [], kept: { ...release, released: 'not_sent' } }, `pictor: interrupted before the request was sent: nothing was billed, and the ledger kept its release for later: ${releaseOpen}${check}`],
      [{ phase: 'sent', files: [], settled: endedBefore }, `${sent} ${ended}${check}`],
      [{ phase: 'done', files: [], exitedBy: 'timer' }, `pictor: interrupted while writing the images of a job that had ended: the ledger did not answer in time: ${settleOpen}.`],
      [{ phase: 'done', files: [], ...second }, `pictor: interrupted while writing the images of a job that had ended: the second Ctrl+C came before the ledger answered: ${settleOpen}.`],
      [{ phase: 'done', files: [], kept: settle }, `pictor: interrupted while writing the images of a job that had ended: the ledger kept its settle of $0.00636 for later: ${settleOpen}.`],
      [{ phase: 'done', files: [], kept: release }, `pictor: interrupted while writing the images of a job that had ended: the ledger kept its release for later: ${releaseOpen}.`],
      [{ phase: 'done', files: [], settled: endedBefore }, `pictor: interrupted while writing the images of a job that had ended: ${ended}.`],
      [{ phase: 'done', files: [], written: true, exitedBy: 'timer' }, `pictor: interrupted after writing the images of a job that had ended: the ledger did not answer in time: ${settleOpen}.`],
      [{ phase: 'done', files: [], written: true, ...second }, `pictor: interrupted after writing the images of a job that had ended: the second Ctrl+C came before the ledger answered: ${settleOpen}.`],
      [{ phase: 'done', files: [], written: true, kept: settle }, `pictor: interrupted after writing the images of a job that had ended: the ledger kept its settle of $0.00636 for later: ${settleOpen}.`],
      [{ phase: 'done', files: [], written: true, kept: release }, `pictor: interrupted after writing the images of a job that had ended: the ledger kept its release for later: ${releaseOpen}.`],
      [{ phase: 'done', files: [], written: true, settled: endedBefore }, `pictor: interrupted after writing the images of a job that had ended: ${ended}.`],
      [{ phase: 'sent', files: [], exitedBy: 'timer', emulator: true }, `pictor: interrupted after the request was sent to the emulator: nothing was spent; the emulator's ledger did not answer in time: ${emulatorSettleOpen}.`],
      [{ phase: 'sent', files: [], ...second, emulator: true }, `pictor: interrupted after the request was sent to the emulator: nothing was spent; the second Ctrl+C came before the emulator's ledger answered: ${emulatorSettleOpen}.`],
      [{ phase: 'sent', files: [], kept: settle, emulator: true }, `pictor: interrupted after the request was sent to the emulator: nothing was spent; the emulator's ledger kept its settle of $0.00636 for later: ${emulatorSettleOpen}.`],
      [{ phase: 'sent', files: [], kept: release, emulator: true }, `pictor: interrupted after the request was sent to the emulator: nothing was spent; the emulator's ledger kept its release for later: ${emulatorReleaseOpen}.`],
      [{ phase: 'done', files: [], exitedBy: 'timer', emulator: true }, `pictor: interrupted while writing the images of a job the emulator had ended: nothing was spent; the emulator's ledger did not answer in time: ${emulatorSettleOpen}.`],
      [{ phase: 'done', files: [], ...second, emulator: true }, `pictor: interrupted while writing the images of a job the emulator had ended: nothing was spent; the second Ctrl+C came before the emulator's ledger answered: ${emulatorSettleOpen}.`],
      [{ phase: 'done', files: [], kept: settle, emulator: true }, `pictor: interrupted while writing the images of a job the emulator had ended: nothing was spent; the emulator's ledger kept its settle of $0.00636 for later: ${emulatorSettleOpen}.`],
      [{ phase: 'done', files: [], kept: release, emulator: true }, `pictor: interrupted while writing the images of a job the emulator had ended: nothing was spent; the emulator's ledger kept its release for later: ${emulatorReleaseOpen}.`],
      [{ phase: 'done', files: [], written: true, exitedBy: 'timer', emulator: true }, `pictor: interrupted after writing the images of a job the emulator had ended: nothing was spent; the emulator's ledger did not answer in time: ${emulatorSettleOpen}.`],
      [{ phase: 'done', files: [], written: true, ...second, emulator: true }, `pictor: interrupted after writing the images of a job the emulator had ended: nothing was spent; the second Ctrl+C came before the emulator's ledger answered: ${emulatorSettleOpen}.`],
      [{ phase: 'done', files: [], written: true, kept: settle, emulator: true }, `pictor: interrupted after writing the images of a job the emulator had ended: nothing was spent; the emulator's ledger kept its settle of $0.00636 for later: ${emulatorSettleOpen}.`],
      [{ phase: 'done', files: [], written: true, kept: release, emulator: true }, `pictor: interrupted after writing the images of a job the emulator had ended: nothing was spent; the emulator's ledger kept its release for later: ${emulatorReleaseOpen}.`],
    ];
    for (const [job, line] of cases) expect(interruptReport(job)[0], JSON.stringify(job)).toBe(line);
    // Below the first line, the images written; or, once a request was sent, that none had arrived.
    expect(interruptReport({ phase: 'done', files: ['/out/fox.png'], written: true, exitedBy: 'timer' }).slice(1)).toEqual(['Images written before the interruption (1):', '  /out/fox.png']);
    expect(interruptReport({ phase: 'sent', files: [], exitedBy: 'timer' }).slice(1)).toEqual(['No image had arrived yet, so none was written.']);
  });
});

describe('Ctrl+C during a generation', () => {
  it("with --json, tells the interruption as a failure that still lists the files written and what the ledger charged (null when no charge is known yet: no answer, or kept for later)", () => {
    const about = { operation: 'generate' as const, isPartial: (path: string) => path.includes('.partial-') };
    expect(interruptJson({ phase: 'sent', files: ['/out/fox.partial-1.png', '/out/fox.png'], settled: { action: 'settled', usd: 0.16854, recorded: true, deferred: false } }, about)).toEqual({
      ok: false,
      code: 'interrupted',
      message: interruptReport({ phase: 'sent', files: [], settled: { action: 'settled', usd: 0.16854, recorded: true, deferred: false } })[0]!.replace(/^pictor: /, ''),
      operation: 'generate',
      files: ['/out/fox.png'],
      partials: ['/out/fox.partial-1.png'],
      sent: true,
      charged: 0.16854,
      emulator: false,
    });
    expect(interruptJson({ phase: 'sent', files: [], exitedBy: 'timer' }, about)).toMatchObject({ sent: true, charged: null });
    // The ledger had already ended the job (a reconcile after this run's lease lapsed): this settle charged nothing, and
    // what the job was charged is what ended it, not this run's amount.
    expect(interruptJson({ phase: 'sent', files: [], settled: { action: 'settled', usd: 0.04, recorded: false, deferred: false } }, about)).toMatchObject({ sent: true, charged: null });
    // Stopped before the ledger's mark: a later run releases whatever the ledger holds.
    expect(interruptJson({ phase: 'waiting', files: [] }, about)).toMatchObject({ sent: false, charged: 0 });
    // Stopped while the ledger recorded that mark, which did not answer: nothing sent, but a later run may charge it.
    expect(interruptJson({ phase: 'marking', files: [], exitedBy: 'timer' }, about)).toMatchObject({ sent: false, charged: null });
    expect(interruptJson({ phase: 'marking', files: [], settled: { action: 'released', usd: 0, recorded: true, deferred: false, released: 'not_sent' } }, about)).toMatchObject({ sent: false, charged: 0 });
    expect(interruptJson({ phase: 'sent', files: [], settled: { action: 'released', usd: 0, recorded: true, deferred: false, released: 'not_sent' } }, about)).toMatchObject({ sent: false, charged: 0 });
    expect(interruptJson({ phase: 'sent', files: [], settled: { action: 'released', usd: 0, recorded: true, deferred: false, released: 'answered' } }, about)).toMatchObject({ sent: true, charged: 0 });
    // The ledger answered, but kept the settle or release for later: no charge is known yet.
    expect(interruptJson({ phase: 'done', files: [], kept: { action: 'settled', usd: 0.00636, recorded: false, deferred: true } }, about)).toMatchObject({ sent: true, charged: null });
    expect(interruptJson({ phase: 'sent', files: [], kept: { action: 'released', usd: 0, recorded: false, deferred: true, released: 'answered' } }, about)).toMatchObject({ sent: true, charged: null });
    // A failed job's line says the same.
    const failed = new JobWatch();
    failed.noteSettled({ action: 'released', usd: 0, recorded: false, deferred: true, released: 'answered' });
    expect(jobJson(failed, about)).toMatchObject({ charged: null });
  });

  it('counts a request sent once it left, and still once it ended; not while waiting nor while the ledger records its mark', () => {
    expect((['waiting', 'marking', 'sent', 'done'] as const).map(wasSent)).toEqual([false, false, true, true]);
  });

  it('speaks of no request when Ctrl+C comes before one was sent (connecting, or waiting for a slot or the ledger), and still stops the job', async () => {
    await withWatcher(({ job, said }) => {
      process.emit('SIGINT');
      expect(job.firstStop).toBe('stopping');
      expect(job.signal.aborted).toBe(true);
      expect(said).toEqual([firstStopLine('stopping', 'SIGINT')]);
    });
  });

  it('says a second Ctrl+C, not a silent ledger, ended the wait for the ledger', async () => {
    await withWatcher(({ job, said, exit }) => {
      job.phase = 'sent';
      process.emit('SIGINT');
      process.emit('SIGINT');
      expect(exit).toHaveBeenCalledWith(130);
      expect(job.exitedBy).toBe('second_interrupt');
      expect(said.slice(1)).toEqual(interruptReport({ phase: 'sent', files: [], exitedBy: 'second_interrupt', secondSignal: 'the second Ctrl+C' }));
    });
  });

  it('names the signal that ended the wait for the ledger: a SIGTERM after a Ctrl+C is not called a second Ctrl+C', async () => {
    await withWatcher(({ job, said, exit }) => {
      job.phase = 'sent';
      process.emit('SIGINT');
      process.emit('SIGTERM');
      expect(exit).toHaveBeenCalledWith(130);
      expect(job.secondSignal).toBe('a SIGTERM');
      expect(said.slice(1)).toEqual(interruptReport({ phase: 'sent', files: [], exitedBy: 'second_interrupt', secondSignal: 'a SIGTERM' }));
    });
    await withWatcher(({ job, said, exit }) => {
      job.phase = 'sent';
      process.emit('SIGTERM');
      process.emit('SIGTERM');
      expect(exit).toHaveBeenCalledWith(143);
      expect(job.secondSignal).toBe('the second SIGTERM');
      expect(said.slice(1)).toEqual(interruptReport({ phase: 'sent', files: [], exitedBy: 'second_interrupt', secondSignal: 'the second SIGTERM' }));
    });
  });

  it('a Ctrl+C after the request ended arms no exit, so the images are written; a second one still exits at once', async () => {
    await withWatcher(async ({ job, said, exit }) => {
      job.phase = 'sent';
      job.jobEnded();
      process.emit('SIGINT');
      expect(job.signal.aborted).toBe(false);
      await vi.advanceTimersByTimeAsync(INTERRUPT_SETTLE_MS * 2);
      expect(exit).not.toHaveBeenCalled();
      expect(job.firstStop).toBe('writing');
      expect(said).toEqual([firstStopLine('writing', 'SIGINT')]);
      process.emit('SIGINT');
      expect(exit).toHaveBeenCalledWith(130);
    });
  });

  it('once the images are written after a Ctrl+C during the writes, waits for the ledger 2 s at most, as after a cancel, then exits saying it did not answer', async () => {
    await withWatcher(async ({ job, said, exit }) => {
      job.phase = 'sent';
      job.jobEnded();
      process.emit('SIGINT');
      expect(job.firstStop).toBe('writing');
      job.imagesWritten();
      await vi.advanceTimersByTimeAsync(INTERRUPT_SETTLE_MS - 1);
      expect(exit).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(exit).toHaveBeenCalledWith(130);
      expect(job.exitedBy).toBe('timer');
      // The writes had finished: the wait cut short was the ledger's, not the writes.
      expect(job.written).toBe(true);
      expect(said.slice(1)).toEqual(interruptReport({ phase: 'done', files: [], written: true, exitedBy: 'timer' }));
    });
  });

  it('tells a settle the ledger kept for later as one that may still land at what this run decided, else be charged its estimate by a later run', async () => {
    await withWatcher(async ({ job, said, exit }) => {
      job.phase = 'sent';
      job.jobEnded();
      process.emit('SIGINT');
      job.imagesWritten();
      // The ledger kept the settle (tried again until the process closes its ledger): no charge is known, none is lost.
      job.noteSettled({ action: 'settled', usd: 0.00636, recorded: false, deferred: true });
      expect(job.interruptedExit()).toBe(130);
      expect(job.settled).toBeUndefined();
      // The ledger did answer (no "did not answer in time"): with the charge this run decided, and both ways it can end.
      expect(job.kept).toEqual({ action: 'settled', usd: 0.00636, recorded: false, deferred: true });
      expect(said.slice(1)).toEqual(interruptReport({ phase: 'done', files: [], written: true, kept: { action: 'settled', usd: 0.00636, recorded: false, deferred: true } }));
      expect(interruptJson(job, { operation: 'generate', isPartial: () => false })).toMatchObject({ sent: true, charged: null });
      expect(exit).not.toHaveBeenCalled();
    });
  });

  it('after a cancel, waits for the request to end, lets its images be written, then waits for the ledger 2 s at most from the writes', async () => {
    await withWatcher(async ({ job, exit }) => {
      job.phase = 'sent';
      process.emit('SIGINT');
      expect(job.firstStop).toBe('cancelling');
      await vi.advanceTimersByTimeAsync(INTERRUPT_SETTLE_MS - 1);
      job.jobEnded();
      // Writing the images that came: no exit, however long the disk takes.
      await vi.advanceTimersByTimeAsync(INTERRUPT_SETTLE_MS * 2);
      expect(exit).not.toHaveBeenCalled();
      job.imagesWritten();
      await vi.advanceTimersByTimeAsync(INTERRUPT_SETTLE_MS - 1);
      expect(exit).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(exit).toHaveBeenCalledWith(130);
      expect(job.exitedBy).toBe('timer');
    });
  });

  it('arms no exit when the images are written with no Ctrl+C, nor once the run is closed', async () => {
    await withWatcher(async ({ job, exit }) => {
      job.phase = 'sent';
      job.jobEnded();
      job.imagesWritten();
      await vi.advanceTimersByTimeAsync(INTERRUPT_SETTLE_MS * 2);
      expect(exit).not.toHaveBeenCalled();
    });
    await withWatcher(async ({ job, exit }) => {
      job.phase = 'sent';
      process.emit('SIGINT');
      job.jobEnded();
      job.imagesWritten();
      job.close();
      await vi.advanceTimersByTimeAsync(INTERRUPT_SETTLE_MS * 2);
      expect(exit).not.toHaveBeenCalled();
    });
  });

  it('tells a job refused before its request left (a cap) as never sent after it ended: a Ctrl+C then stops it, and the report charges nothing', async () => {
    for (const phase of ['waiting', 'marking'] as const) {
      await withWatcher(({ job, said, exit }) => {
        const lines: string[] = [];
        job.noteJob({ operation: 'generate', emulator: false, json: (line) => lines.push(line), isPartial: () => false });
        job.phase = phase;
        // Refused: the ledger released it (a refused mark), or never held it (a cap).
        if (phase === 'marking') job.noteSettled({ action: 'released', usd: 0, recorded: true, deferred: false, released: 'not_sent' });
        job.jobEnded();
        expect(job.phase).toBe(phase);
        process.emit('SIGINT');
        expect(job.firstStop).toBe('stopping');
        expect(said).toEqual([firstStopLine('stopping', 'SIGINT')]);
        process.emit('SIGINT');
        expect(exit).toHaveBeenCalledWith(130);
        expect(said.slice(1)).toEqual(interruptReport({ phase: 'waiting', files: [] }));
        expect(lines.map((line) => JSON.parse(line) as InterruptJson)).toEqual([expect.objectContaining({ sent: false, charged: 0 })]);
      });
    }
  });

  it("gives each job a Ctrl+C of its own: a job run after an interrupted one in the same process is cancelled by its first Ctrl+C, and told", async () => {
    await withWatcher(({ job }) => {
      job.phase = 'sent';
      process.emit('SIGINT');
      job.jobEnded();
      expect(job.interruptedExit()).toBe(130);
    });
    await withWatcher(({ job, said, exit }) => {
      job.phase = 'sent';
      process.emit('SIGINT');
      expect(exit).not.toHaveBeenCalled();
      expect(job.signal.aborted).toBe(true);
      job.jobEnded();
      expect(job.interruptedExit()).toBe(130);
      expect(job.firstStop).toBe('cancelling');
      expect(said).toEqual([firstStopLine('cancelling', 'SIGINT'), ...interruptReport({ phase: 'sent', files: [] })]);
    });
  });

  it('answers a signal once however often it is told to listen, and never leaves the signal without its handler meanwhile (Node would end the process unanswered)', async () => {
    const removed: string[] = [];
    const onRemoved = (type: string | symbol) => void removed.push(String(type));
    process.on('removeListener', onRemoved);
    try {
      await withWatcher(({ job }) => {
        const before = process.listenerCount('SIGTERM');
        job.listen(() => undefined);
        job.listen(() => undefined);
        expect(process.listenerCount('SIGTERM')).toBe(before);
        expect(removed.filter((type) => type.startsWith('SIG'))).toEqual([]);
      });
    } finally {
      process.off('removeListener', onRemoved);
    }
  });

  it('exits 130 after a request was sent to the emulator, saying what it would have cost and naming the partial image already written', async () => {
    // Partial images at 3 s and 6 s, the image at 9 s: interrupted between the first partial and the end.
    env.emulator.configure({ latencyMs: 9_000 });
    const dir = await tempDir();
    const data = await tempDir();
    const child = spawnFox(['--stream', '--partial-images', '2', '--out', `${dir}/fox.png`], data);
    await waitUntil(() => child.stderr().includes('fox.partial-1.png'), 'the first partial image is written', 30_000);
    child.process.kill('SIGINT');
    expect(await child.exited).toBe(130);
    // The test's service is an emulator: what the job would have cost (as its ledger recorded it), nothing spent.
    const [record] = await usageIn(data);
    expect(record!.costUsd).toBeGreaterThan(0);
    expect(reportLineOf(child.stderr())).toBe(interruptReport({ phase: 'sent', files: [], settled: settledAt(record!.costUsd), emulator: true })[0]);
    expect(child.stderr()).toContain(`  ${dir}/fox.partial-1.png`);
  }, 60_000);

  it('with --json, prints one JSON line on stdout before exiting 130: the images and partial images written, and what the ledger charged', async () => {
    // Partial images at 2 s, the image at 4 s, the second image's partial at 6 s: interrupted after that one.
    env.emulator.configure({ latencyMs: 4_000 });
    const data = await tempDir();
    const out = await tempDir();
    const child = spawnFox(['--n', '2', '--stream', '--partial-images', '1', '--json', '--out', `${out}/fox.png`], data);
    await waitUntil(() => child.stderr().includes('fox-2.partial-1.png'), "the second image's partial is written", 30_000);
    child.process.kill('SIGINT');
    expect(await child.exited).toBe(130);
    const line = onlyJsonLine(child.stdout());
    expect(line).toMatchObject({ ok: false, code: 'interrupted', operation: 'generate', sent: true, emulator: true });
    expect(line.files).toEqual([`${out}/fox.png`]);
    expect(line.partials).toEqual([`${out}/fox.partial-1.png`, `${out}/fox-2.partial-1.png`]);
    // What the emulator's ledger recorded for the cancelled job, as the usage shows it.
    const store = new FileQuotaStore({ dir: join(data, 'emulator') });
    try {
      const [record] = await store.usage({});
      expect(line.charged).toBe(record!.costUsd);
      expect(line.charged).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
    expect(line.message).toBe(child.stderr().split('\n').find((l) => l.startsWith('pictor: interrupted'))!.replace(/^pictor: /, ''));
  }, 60_000);

  it('cancels a request it had sent before exiting 130: the job is charged as a cancel (basis estimate) and no reservation is left', async () => {
    // The image takes a minute: the request is at the service, unanswered, when Ctrl+C comes.
    env.emulator.configure({ latencyMs: 60_000 });
    const data = await tempDir();
    const out = await tempDir();
    const child = spawnFox(['--out', `${out}/`], data);
    await waitUntil(() => env.emulator.requests.length === 1, 'the service has the request', 30_000);
    child.process.kill('SIGINT');
    expect(await child.exited).toBe(130);
    expect(reportLineOf(child.stderr())).toBe(interruptReport({ phase: 'sent', files: [], settled: settledAt(0.00636), emulator: true })[0]);

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
    const child = spawnFox(['--n', '2', '--stream', '--partial-images', '0', '--json', '--out', `${out}/fox.png`], data);
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
    expect(child.stderr()).toContain(interruptReport({ phase: 'sent', files: [`${out}/fox.png`], exitedBy: 'timer', emulator: true }).join('\n'));
    // With --json the exit by the timer still prints its line: the image kept, the charge not known.
    expect(onlyJsonLine(child.stdout())).toMatchObject({ ok: false, code: 'interrupted', files: [`${out}/fox.png`], partials: [], sent: true, charged: null, emulator: true });
  }, 60_000);

  it('exits 130 after one Ctrl+C on a job not streamed while the ledger does not answer: the timer ends the wait, saying the charge is not known', async () => {
    env.emulator.configure({ latencyMs: 60_000 });
    const data = await tempDir();
    const out = await tempDir();
    const child = spawnFox(['--json', '--out', `${out}/`], data);
    const lock = holdLedgerLock(data);
    try {
      await waitUntil(() => env.emulator.requests.length === 1, 'the service has the request', 30_000);
      lock.take();
      child.process.kill('SIGINT');
      expect(await child.exited).toBe(130);
    } finally {
      lock.free();
    }
    expect(child.stderr()).toContain(interruptReport({ phase: 'sent', files: [], exitedBy: 'timer', emulator: true }).join('\n'));
    expect(onlyJsonLine(child.stdout())).toMatchObject({ ok: false, code: 'interrupted', files: [], partials: [], sent: true, charged: null, emulator: true });
  }, 60_000);

  it('answers SIGTERM as Ctrl+C, with exit 143: the sent request is cancelled and what the ledger charged is said, on stdout too with --json', async () => {
    env.emulator.configure({ latencyMs: 60_000 });
    const data = await tempDir();
    const out = await tempDir();
    const child = spawnFox(['--json', '--out', `${out}/`], data);
    await waitUntil(() => env.emulator.requests.length === 1, 'the service has the request', 30_000);
    child.process.kill('SIGTERM');
    expect(await child.exited).toBe(143);
    expect(child.stderr()).toContain(firstStopLine('cancelling', 'SIGTERM'));
    expect(reportLineOf(child.stderr())).toBe(interruptReport({ phase: 'sent', files: [], settled: settledAt(0.00636), emulator: true })[0]);
    expect(onlyJsonLine(child.stdout())).toMatchObject({ ok: false, code: 'interrupted', files: [], partials: [], sent: true, charged: 0.00636, emulator: true });
  }, 60_000);

  it('exits 130 at a second Ctrl+C while the first waits for a ledger that does not answer', async () => {
    env.emulator.configure({ latencyMs: 60_000 });
    const data = await tempDir();
    const out = await tempDir();
    const child = spawnFox(['--json', '--out', `${out}/`], data);
    const lock = holdLedgerLock(data);
    try {
      await waitUntil(() => env.emulator.requests.length === 1, 'the service has the request', 30_000);
      lock.take();
      child.process.kill('SIGINT');
      await waitUntil(() => child.stderr().includes(firstStopLine('cancelling', 'SIGINT')), 'the first Ctrl+C is answered', 30_000);
      child.process.kill('SIGINT');
      expect(await child.exited).toBe(130);
    } finally {
      lock.free();
    }
    // One report, whichever signal came last.
    expect(reportLineOf(child.stderr())).toBe(interruptReport({ phase: 'sent', files: [], exitedBy: 'second_interrupt', secondSignal: 'the second Ctrl+C', emulator: true })[0]);
    expect(onlyJsonLine(child.stdout())).toMatchObject({ ok: false, code: 'interrupted', files: [], partials: [], sent: true, charged: null });
  }, 60_000);
});

describe('Ctrl+C after the ledger had ended the job before its settle (this run\'s lease lapsed)', () => {
  const request = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low' };
  const estimate = estimatePrice(request).totalUsd;

  /**
   * A job sent through `store`'s ledger, which `other` (another process sharing the ledger) ends by its reconcile, as
   * after this process's lease lapsed; then this run's cancel settles it. What Ctrl+C reports of that settle.
   */
  async function reportOfJobEndedBefore(store: QuotaStore, other: QuotaStore, lapse: () => Promise<void>, now: number) {
    const job = await new JobLedger({ store }).begin({ jobId: 'fox-1', userKey: 'cli:ann', scopeKey: 'cli', limits: {}, request });
    if (!job.ok) throw new Error(`refused: ${job.code}`);
    await job.job.beforeSend();
    await lapse();
    expect(await other.reconcile(now)).toMatchObject({ settledAtEstimate: ['fox-1'] });

    const settlement = await job.job.end({ kind: 'cancelled' }).settled;

    expect(settlement).toMatchObject({ action: 'settled', usd: estimate, recorded: false, deferred: false });
    const watch = new JobWatch();
    watch.phase = 'sent';
    watch.noteSettled(settlement);
    return interruptReport(watch)[0];
  }

  it('says the settle charged nothing more, on the file ledger, which charged the job once: its estimate, marked uncertain', async () => {
    const dir = await tempDir();
    const alias = `${dir}-other-process`;
    await symlink(dir, alias);
    onTestFinished(() => rmSync(alias, { force: true }));
    // One store per file per process: the other process's opens the ledger through the link, its clock past the lapse of this one's lease.
    const longAfter = Date.now() + (LAPSED_LEASES_AT_MOST + 1) * 60_000;
    const store = new FileQuotaStore({ dir });
    const other = new FileQuotaStore({ dir: alias, clock: () => longAfter });
    onTestFinished(async () => void (await Promise.all([store.close(), other.close()])));

    const line = await reportOfJobEndedBefore(store, other, async () => undefined, longAfter);

    expect(line).toBe(interruptReport({ phase: 'sent', files: [], settled: { action: 'settled', usd: estimate, recorded: false, deferred: false } })[0]);
    expect((await store.usage({})).map((r) => [r.jobId, r.costUsd, r.basis])).toEqual([['fox-1', estimate, 'uncertain']]);
    expect(await store.spentToday('cli:ann', Date.now())).toBeCloseTo(estimate, 9);
  });

  it.skipIf(testRedis().skipReason)('says the same on the Redis ledger, whose lease key expired', async () => {
    const url = requireRedisUrl(testRedis());
    const prefix = uniquePrefix('interrupt-ended');
    const redis = await connectRedis(url);
    onTestFinished(async () => {
      redis.disconnect();
      await deleteKeys(url, prefix);
    });
    const store = new RedisQuotaStore({ redis, prefix });
    const other = new RedisQuotaStore({ redis, prefix });
    onTestFinished(async () => void (await Promise.all([store.close(), other.close()])));
    // Its lease lapses (Redis was out of its reach longer than the lease): the key is gone, and another process meets the job.
    const lapse = async () => {
      for (const key of await redis.keys(`${prefix}:quota:owner:*`)) await redis.del(key);
    };

    const line = await reportOfJobEndedBefore(store, other, lapse, Date.now());

    expect(line).toBe(interruptReport({ phase: 'sent', files: [], settled: { action: 'settled', usd: estimate, recorded: false, deferred: false } })[0]);
    expect((await store.usage({})).map((r) => [r.jobId, r.costUsd, r.basis])).toEqual([['fox-1', estimate, 'uncertain']]);
    expect(await store.spentToday('cli:ann', Date.now())).toBeCloseTo(estimate, 9);
  });
});

describe('Ctrl+C while the ledger records that the request may be billed', () => {
  it('says nothing was sent, sends nothing and charges nothing: the request leaves only once the ledger has recorded it', async () => {
    const data = await tempDir();
    const out = await tempDir();
    // The exit timer must not end the test's process: recorded instead.
    const exit = exitRecorded();
    // The ledger's "may be billed" mark waits, as it does behind another process using the ledger, until the test lets it go.
    const { atMark, letGo } = ledgerMarkHeld('before recording it', data);
    const said: string[] = [];
    const running = run(['generate', '--prompt', 'a slow fox', '--quality', 'low', '--json', '--out', `${out}/`], { PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: data }, { stderr: (line) => said.push(line) });
    await atMark;
    process.emit('SIGINT');
    expect(said).toContain(firstStopLine('stopping', 'SIGINT'));
    letGo();
    const { code, stdout, stderr } = await running;
    expect(code).toBe(130);
    expect(exit).not.toHaveBeenCalled();
    expect(stderr).not.toContain(firstStopLine('cancelling', 'SIGINT'));
    expect(stderr).toContain(interruptReport({ phase: 'waiting', files: [] })[0]);
    expect(env.emulator.requests).toHaveLength(0);
    expect(onlyJsonLine(stdout)).toMatchObject({ ok: false, code: 'interrupted', sent: false, charged: 0 });
    const store = new FileQuotaStore({ dir: join(data, 'emulator') });
    try {
      expect(await store.activeJobs()).toEqual([]);
      expect((await store.usage({})).reduce((sum, record) => sum + record.costUsd, 0)).toBe(0);
    } finally {
      await store.close();
    }
  }, 60_000);
});

describe('an exit while the ledger records that the request may be billed', () => {
  it('says nothing was sent and, with --json, sent false and charged null, as the mark recorded leaves the job to be charged its estimate', async () => {
    const data = await tempDir();
    const out = await tempDir();
    const exit = exitRecorded();
    // The mark is recorded, then its answer never comes (until the test lets it go, after the exit).
    const { atMark, letGo } = ledgerMarkHeld('after recording it', data);
    const said: string[] = [];
    const lines: string[] = [];
    const running = run(['generate', '--prompt', 'a slow fox', '--quality', 'low', '--json', '--out', `${out}/`], { PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: data }, { stderr: (line) => said.push(line), stdout: (line) => lines.push(line) });
    await atMark;
    // However the test ends, the run is let go, and it ends (its exit timer with it).
    onTestFinished(async () => {
      letGo();
      await running;
    });
    process.emit('SIGINT');
    expect(said).toContain(firstStopLine('stopping', 'SIGINT'));
    process.emit('SIGINT');
    expect(exit).toHaveBeenCalledWith(130);
    expect(said).toContain(interruptReport({ phase: 'marking', files: [], exitedBy: 'second_interrupt', secondSignal: 'the second Ctrl+C', emulator: true })[0]);
    expect(lines.map((line) => JSON.parse(line) as InterruptJson)).toEqual([expect.objectContaining({ ok: false, code: 'interrupted', sent: false, charged: null })]);
    // What a later run finds: a reservation marked as possibly billed, which its reconcile charges at its estimate.
    const ledger = JSON.parse(readFileSync(join(data, 'emulator', LEDGER_FILES.ledger), 'utf8')) as { reservations: Record<string, { sent?: boolean }> };
    expect(Object.values(ledger.reservations)).toEqual([expect.objectContaining({ sent: true })]);
    expect(env.emulator.requests).toHaveLength(0);
  }, 60_000);
});

describe('Ctrl+C or SIGTERM while connecting', () => {
  it.each([
    { name: 'Ctrl+C', signal: 'SIGINT', exitCode: 130 },
    { name: 'SIGTERM', signal: 'SIGTERM', exitCode: 143 },
  ] as const)('$name while connecting to a Redis that accepts and never answers gives connecting up: exit $exitCode, nothing sent, nothing charged, and the --json line', async ({ signal, exitCode }) => {
    const silent = await silentServer();
    const home = await tempDir();
    // The debug log says when it starts connecting to Redis.
    const child = cliInAProcess(['generate', '--prompt', 'a fox', '--json', '--out', `${home}/`], { HOME: home, REDIS_URL: `redis://127.0.0.1:${silent.port}`, PICTOR_LOG_LEVEL: 'debug' });
    await waitUntil(() => child.stderr().includes('connecting to Redis'), 'the CLI says it is connecting to Redis', 30_000);
    await silent.connected;
    child.process.kill(signal);
    expect(await child.exited).toBe(exitCode);
    expect(child.stderr()).toContain(firstStopLine('stopping', signal));
    expect(child.stderr()).not.toContain(firstStopLine('cancelling', signal));
    expect(child.stderr()).toContain(interruptReport({ phase: 'waiting', files: [] })[0]);
    expect(onlyJsonLine(child.stdout())).toMatchObject({ ok: false, code: 'interrupted', files: [], partials: [], sent: false, charged: 0 });
  }, 60_000);
});

/** `process.exit` recorded instead of run, as it is again once the running test has finished (or at `mockRestore`). */
function exitRecorded(): MockInstance<typeof process.exit> {
  const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
  onTestFinished(() => exit.mockRestore());
  return exit;
}

/**
 * The "may be billed" mark of the ledger in `data` held, before or after it is recorded, until the test lets it go:
 * `atMark` once a job reached it. The mark is the ledger's own again once the running test has finished.
 */
function ledgerMarkHeld(when: 'before recording it' | 'after recording it', data: string): { atMark: Promise<void>; letGo: () => void } {
  const markSent = FileQuotaStore.prototype.markSent;
  let reached!: () => void;
  const atMark = new Promise<void>((resolve) => (reached = resolve));
  let letGo!: () => void;
  const held = new Promise<void>((resolve) => (letGo = resolve));
  spyOnInstance(FileQuotaStore.prototype, 'markSent', (store) => store.path.startsWith(data)).mockImplementation(async function (this: FileQuotaStore, jobId: string) {
    if (when === 'after recording it') await markSent.call(this, jobId);
    reached();
    await held;
    if (when === 'before recording it') await markSent.call(this, jobId);
  });
  onTestFinished(() => vi.mocked(FileQuotaStore.prototype.markSent).mockRestore());
  return { atMark, letGo };
}

/** `pictor generate` of a fox against the test's emulator, in its own process, its ledgers in `data`. */
function spawnFox(args: string[], data: string) {
  return cliInAProcess(['generate', '--prompt', 'a slow fox', '--quality', 'low', ...args], { PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: data });
}

/** stdout of a `--json` run: exactly one line, a JSON document. */
function onlyJsonLine(stdout: string): InterruptJson {
  const lines = stdout.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as InterruptJson;
}

/** The emulator ledger's lock in `data`, held as another live process of this machine would (this test's own pid). */
function holdLedgerLock(data: string) {
  const path = join(data, 'emulator', `${LEDGER_FILES.ledger}.lock`);
  return {
    take: () => writeFileSync(path, `${process.pid}\n${THIS_HOST}\n`, { flag: 'wx' }),
    free: () => rmSync(path, { force: true }),
  };
}

/** The first line of the Ctrl+C report in a run's stderr: there is exactly one. */
function reportLineOf(stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line.startsWith('pictor: interrupted'));
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

/** A settle the ledger took, charging `usd`. */
function settledAt(usd: number) {
  return { action: 'settled', usd, recorded: true, deferred: false } as const;
}

/** The usage records of the emulator's ledger in `data`. */
async function usageIn(data: string) {
  const store = new FileQuotaStore({ dir: join(data, 'emulator') });
  try {
    return await store.usage({});
  } finally {
    await store.close();
  }
}
