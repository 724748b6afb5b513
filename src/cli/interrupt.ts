/**
 * What Ctrl+C (SIGINT) during `pictor generate` or `edit` does and says. The first Ctrl+C cancels the request through
 * the job's signal, so the spend guard ends it as any cancelled job: released when it was still waiting (nothing
 * billed), settled when it had been sent (the images that came, plus the estimate of each that did not). The command
 * then writes the images that had arrived and exits 130 (`interruptedExit`), saying whether the request had been sent
 * and which images were written. If that takes longer than `INTERRUPT_SETTLE_MS` (a ledger that does not answer),
 * it says the same and exits 130 anyway, and so does a second Ctrl+C, at once: a reservation still open then is
 * charged its estimate by the next run's reconcile (`uncertain`). The CLI runs one job per process, so this is the process's one record of it.
 */
export interface JobWatch {
  phase: 'waiting' | 'sent';
  /** Files written so far (partial and final images, and any saved to the temp directory). */
  readonly files: string[];
  /** Aborted by the first Ctrl+C: give it to the request, which is then cancelled. */
  readonly signal: AbortSignal;
}

/** How long the first Ctrl+C waits for the cancelled job to be settled or released (and its images written) before exiting. */
export const INTERRUPT_SETTLE_MS = 2_000;

let current: { watch: JobWatch; controller: AbortController; say: (lines: string[]) => void } | undefined;
let answering = false;
let interrupted = false;
let reported = false;
let exitTimer: NodeJS.Timeout | undefined;

/** The job under way; the first call also answers SIGINT for the process. */
export function watchJob(onInterrupt: (lines: string[]) => void): JobWatch {
  const controller = new AbortController();
  const watch: JobWatch = { phase: 'waiting', files: [], signal: controller.signal };
  current = { watch, controller, say: onInterrupt };
  if (!answering) {
    answering = true;
    process.on('SIGINT', onSigint);
  }
  return watch;
}

function onSigint(): void {
  // A second Ctrl+C: at once.
  if (interrupted || !current) process.exit(interruptedExit());
  interrupted = true;
  current.controller.abort(new Error('interrupted (Ctrl+C)'));
  exitTimer = setTimeout(() => process.exit(interruptedExit()), INTERRUPT_SETTLE_MS);
}

/**
 * After the first Ctrl+C: says what was interrupted (once) and gives exit code 130. The job's command returns it once
 * its cancelled request has ended (settled or released) and the images that had arrived are written.
 */
export function interruptedExit(): number {
  if (!reported && current) {
    reported = true;
    current.say(interruptReport(current.watch));
  }
  return 130;
}

/** The job's command is over (whatever its outcome): a Ctrl+C that came after its request ended no longer exits it. */
export function jobEnded(): void {
  clearTimeout(exitTimer);
}

/** Records a file written for the job under way, if any. */
export function noteWritten(path: string): void {
  current?.watch.files.push(path);
}

/** The lines Ctrl+C prints for a job in this state. */
export function interruptReport(job: Pick<JobWatch, 'phase' | 'files'> | undefined): string[] {
  if (!job) return ['pictor: interrupted.'];
  const lines = [
    job.phase === 'sent'
      ? 'pictor: interrupted after the request was sent: the service may finish the job and bill it; check your usage before trying again.'
      : 'pictor: interrupted before the request was sent: nothing was billed.',
  ];
  if (job.files.length) {
    lines.push(`Images written before the interruption (${job.files.length}):`);
    for (const file of job.files) lines.push(`  ${file}`);
  } else if (job.phase === 'sent') {
    lines.push('No image had arrived yet, so none was written.');
  }
  return lines;
}
