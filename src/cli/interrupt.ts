/**
 * What Ctrl+C (SIGINT) during `pictor generate` or `edit` says: whether the request had been sent (so the job may
 * have been billed) or was still waiting (nothing billed), and which images were already written. The CLI runs one
 * job per process, so this is the process's one record of it.
 */
export interface JobWatch {
  phase: 'waiting' | 'sent';
  /** Files written so far (partial and final images, and any saved to the temp directory). */
  readonly files: string[];
}

let current: JobWatch | undefined;
let answering = false;

/** The job under way; the first call also answers SIGINT for it (exit 130 after saying what it cost). */
export function watchJob(onInterrupt: (lines: string[]) => void): JobWatch {
  current = { phase: 'waiting', files: [] };
  if (!answering) {
    answering = true;
    process.once('SIGINT', () => {
      onInterrupt(interruptReport(current));
      process.exit(130);
    });
  }
  return current;
}

/** Records a file written for the job under way, if any. */
export function noteWritten(path: string): void {
  current?.files.push(path);
}

/** The lines Ctrl+C prints for a job in this state. */
export function interruptReport(job: JobWatch | undefined): string[] {
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
