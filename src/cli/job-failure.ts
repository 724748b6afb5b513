import type { JobJson } from './interrupt.js';

/**
 * A job that failed once it was sent (a job refused before, by a cap or as invalid, fails with its refusal alone: nothing
 * was sent or charged): the failure (`error`, told as any failure) and, for `--json`'s line, what was written and
 * charged before it failed (`job`).
 */
export class JobFailure extends Error {
  constructor(
    readonly error: unknown,
    readonly job: JobJson & { lost?: string[] },
  ) {
    super(error instanceof Error ? error.message : String(error));
    this.name = 'JobFailure';
  }
}
