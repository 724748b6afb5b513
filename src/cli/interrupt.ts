import { describeDuration } from '../core/describe-duration.js';
import { formatUsdExact } from '../core/pricing.js';
import { chargedOf } from '../spend/charge-rules.js';
import type { JobSettlement } from '../spend/job-ledger.js';

/**
 * What Ctrl+C (SIGINT) during `pictor generate` or `edit` does and says. The first Ctrl+C says what it does
 * (`firstStopLine`) and aborts the job's signal: connecting is given up at once (nothing was sent), and a job handed
 * to the client is cancelled, so the spend guard ends it as any cancelled job: released when nothing that may be billed had
 * reached the service (still waiting, or waiting to retry an attempt the service refused), settled otherwise (the
 * images that came, plus the estimate of each that did not). Each image is written as it arrives, so an exit at any
 * moment keeps those already paid. Once the cancelled request has ended the command exits 130 (`interruptedExit`),
 * saying whether the request had been sent, what the ledger charged (a settle that found the job already ended there
 * charged nothing more: `chargeOfEndedJob` says what ended it), and which images were written. If the request
 * has not ended within `INTERRUPT_SETTLE_MS` (a ledger that does not answer), it says so and exits 130 anyway, and so
 * does a second Ctrl+C, at once (it says which): the job's settle, under way or kept for later, may still land (then
 * it is charged what this run decided, and so it is when the settle had already written its usage record, which a later
 * run charges); if neither, a later run's reconcile charges the reservation left open its estimate (`uncertain`),
 * unless it was waiting to retry an attempt that billed nothing (the ledger marks such a job not sent, so the reconcile
 * releases it). The report says each (`chargeLeftOpen`). A request not sent yet is charged so
 * only when the exit comes while the ledger records that it may be billed (`marking`) and that mark was recorded: the
 * report says nothing was sent, and that the job may then be charged its estimate. A Ctrl+C that comes after a sent request
 * ended (`jobEnded`: its result is being written) arms no exit: the writes finish; only a second one stops them.
 * Once the images are written (`imagesWritten`), what is left is the ledger's answer, waited for by the same rule
 * however the first Ctrl+C came (before, during or after the writes): `INTERRUPT_SETTLE_MS` at most from then, then the
 * exit the timer tells (its report says the images were written: what the exit cut short was the wait for the ledger).
 * The command waits for that answer without a timer of its own: this one bounds it. A job that ended well and had a
 * Ctrl+C before its result was told says nothing before that answer: one in time (`ledgerAnswered`) gives the job's own
 * result and exit code; otherwise the interruption is the one thing told (a settle the ledger kept for later, at once). A job the ledger never reserved (a
 * Ctrl+C while it was being reserved, and the reservation failed) has no answer coming: the command exits at once.
 * With `--json` the same report is also one JSON line on stdout (`interruptJson`), written before the process exits
 * on every one of those paths. A job that went to an emulator is told as what it would have cost: nothing was spent.
 * SIGTERM is answered the same way, with exit code 143.
 *
 * One `JobWatch` per run of the command, which creates it, passes it where the job is followed (the connection's
 * ledger, the progress, the image writes) and closes it when the run is over: Ctrl+C is answered from `listen` to
 * `close`, and two runs in one process never see each other's state.
 */
export class JobWatch {
  /**
   * `waiting`: connecting, queued for a slot or for the ledger's reservation (nothing the ledger could charge);
   * `marking`: the slot is given and the ledger is recording that the request may be billed (not sent yet, but once
   * that mark is recorded a job left open is charged its estimate by a later run); `sent`: the request left; `done`:
   * the request that left has ended (its images are being written).
   */
  phase: 'waiting' | 'marking' | 'sent' | 'done' = 'waiting';
  /** Files written so far (partial and final images, and any saved to the temp directory). */
  readonly files: string[] = [];
  /** What the ledger did when the request ended; absent until it answered. */
  settled?: JobSettled | undefined;
  /**
   * The ledger answered that it kept the job's settle (or release) for later (`deferred`): no charge is known yet, but
   * the ledger did answer, and that settle may still land at what this run decided.
   */
  kept?: JobSettled | undefined;
  /** Why the process exits before the ledger answered: the settle timer ran out, or a second Ctrl+C. */
  exitedBy?: 'timer' | 'second_interrupt' | undefined;
  /** With `exitedBy: 'second_interrupt'`: the signal that cut the wait short, as the report names it ("the second Ctrl+C", "a SIGTERM"). */
  secondSignal?: string | undefined;
  /** The job went to an emulator: nothing is spent, whatever its ledger records. */
  emulator?: boolean | undefined;
  /** What the first Ctrl+C (or SIGTERM) did, once one came (see `FirstStop`). */
  firstStop?: FirstStop | undefined;
  readonly #controller = new AbortController();
  #say: (lines: string[]) => void = () => undefined;
  #about: JobAbout | undefined;
  /** The signal that stopped the job, once one came: Ctrl+C (SIGINT), or SIGTERM (`kill`, a service manager, a closing terminal's session). */
  #stoppedBy: 'SIGINT' | 'SIGTERM' | undefined;
  #reported = false;
  #exitTimer: NodeJS.Timeout | undefined;
  #written = false;
  readonly #onSigint = () => this.#stop('SIGINT');
  readonly #onSigterm = () => this.#stop('SIGTERM');

  /** Its images are written (`imagesWritten`): an exit from then on came while waiting for the ledger, not during the writes. */
  get written(): boolean {
    return this.#written;
  }

  /** Aborted by the first Ctrl+C: give it to the request, which is then cancelled. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /**
   * From now until `close`, answers Ctrl+C (SIGINT) and SIGTERM for the process, saying its lines through `say`. SIGTERM
   * is answered as Ctrl+C is (the job is cancelled, what it was charged is said, the live line's cursor shown again),
   * with exit code 143 instead of 130.
   */
  listen(say: (lines: string[]) => void): void {
    this.#say = say;
    // Added once, never removed and added again: a signal with no listener for a moment ends the process unanswered.
    if (!process.listeners('SIGINT').includes(this.#onSigint)) process.on('SIGINT', this.#onSigint);
    if (!process.listeners('SIGTERM').includes(this.#onSigterm)) process.on('SIGTERM', this.#onSigterm);
  }

  /** The run is over: Ctrl+C and SIGTERM are no longer this job's to answer. */
  close(): void {
    clearTimeout(this.#exitTimer);
    process.off('SIGINT', this.#onSigint);
    process.off('SIGTERM', this.#onSigterm);
  }

  #stop(signal: 'SIGINT' | 'SIGTERM'): void {
    // A second Ctrl+C (or SIGTERM): at once.
    if (this.#stoppedBy) {
      if (!this.exitedBy) {
        this.exitedBy = 'second_interrupt';
        const name = signal === 'SIGINT' ? 'Ctrl+C' : 'SIGTERM';
        this.secondSignal = `${signal === this.#stoppedBy ? 'the second' : 'a'} ${name}`;
      }
      process.exit(this.interruptedExit());
      return;
    }
    this.#stoppedBy = signal;
    // Its images written, only the ledger's answer is waited for: as long as after a cancel, then the exit.
    this.firstStop = this.#written ? 'settling' : firstStopOf(this.phase);
    this.#say([firstStopLine(this.firstStop, signal)]);
    // The request is over: nothing to cancel, and its images are being written; only a second Ctrl+C cuts that short.
    if (this.firstStop === 'writing') return;
    this.#controller.abort(new Error(signal === 'SIGINT' ? 'interrupted (Ctrl+C)' : 'terminated (SIGTERM)'));
    this.#armExit();
  }

  /**
   * The one wait of a first Ctrl+C (or SIGTERM): for the cancelled request to end, or once the images are written for
   * the ledger's answer; `INTERRUPT_SETTLE_MS` at most, then the exit, which says the ledger did not answer in time. The
   * timer holds the process: the exit comes from here, not from an event loop that ran dry.
   */
  #armExit(): void {
    clearTimeout(this.#exitTimer);
    this.#exitTimer = setTimeout(() => {
      this.exitedBy ??= 'timer';
      process.exit(this.interruptedExit());
    }, INTERRUPT_SETTLE_MS);
  }

  /**
   * After the first Ctrl+C: says what was interrupted (once) and gives exit code 130 (143 after SIGTERM). The job's
   * command returns it once its cancelled request has ended (settled or released) and the images that had arrived are
   * written.
   */
  interruptedExit(): number {
    if (!this.#reported) {
      this.#reported = true;
      // The line for a script first: a second Ctrl+C (or a closed terminal) must not cut it off.
      if (this.#about?.json) this.#about.json(JSON.stringify(interruptJson(this, this.#about)));
      this.#say(interruptReport(this));
    }
    return this.#stoppedBy === 'SIGTERM' ? 143 : 130;
  }

  /** Tells where the job goes and how its result is printed (see `JobAbout`). */
  noteJob(about: JobAbout): void {
    this.#about = about;
    this.emulator = about.emulator;
  }

  /**
   * The job's request is over (whatever its outcome), before its images are written: an exit timer already armed is
   * stopped, and a request that had left is `done`, so a Ctrl+C from here on no longer arms the timer and a slow disk
   * never leaves a file half written. A job refused before its request left (a cap, a mark the ledger did not record)
   * keeps its phase: nothing was sent, so a Ctrl+C then stops it as before sending, and its report charges nothing.
   */
  jobEnded(): void {
    clearTimeout(this.#exitTimer);
    // After a cancel the report tells what was cancelled: waiting or sent.
    if (!this.#stoppedBy && wasSent(this.phase)) this.phase = 'done';
  }

  /**
   * The job's images are written (or listed as lost): what is left is the ledger's answer, which a first Ctrl+C (or
   * SIGTERM) then waits for `INTERRUPT_SETTLE_MS` at most, as after a cancel, before the exit: from now when it came
   * already (a cancel, or one during the writes), from that Ctrl+C when it comes later.
   */
  imagesWritten(): void {
    this.#written = true;
    if (this.#stoppedBy) this.#armExit();
  }

  /**
   * A Ctrl+C came, the images are written, and the ledger answered before the exit timer ran out: the command gives the
   * job's own answer (its result, and its exit code), so the timer no longer exits. A second Ctrl+C still does.
   */
  ledgerAnswered(): void {
    clearTimeout(this.#exitTimer);
  }

  /** Records how the ledger ended the job; a settle the ledger did not take yet (`deferred`) is recorded as `kept`, charging nothing known. */
  noteSettled(settled: JobSettled): void {
    if (settled.deferred) this.kept = settled;
    else this.settled = settled;
  }

  /** Records a file written for the job. */
  noteWritten(path: string): void {
    this.files.push(path);
  }
}

/**
 * Whether the job's request had left by this phase: `sent`, or `done` (its request ended; a job refused before its
 * request left is never marked done). The one answer of the Ctrl+C report,
 * its `--json` line, the first Ctrl+C's line and a failed job's exit.
 */
export function wasSent(phase: JobWatch['phase']): boolean {
  return phase === 'sent' || phase === 'done';
}

/**
 * What the first Ctrl+C (or SIGTERM) does, by the job's phase: `stopping` before anything was sent (connecting to
 * Redis, the ledger or the service, or waiting for a slot, the ledger's reservation or its mark that the request may be
 * billed: no request left to cancel),
 * `cancelling` the request that was sent, or, once the job is done, `writing` its images to the end.
 */
export type FirstStop = 'stopping' | 'cancelling' | 'writing' | 'settling';

export function firstStopOf(phase: JobWatch['phase']): FirstStop {
  if (!wasSent(phase)) return 'stopping';
  return phase === 'sent' ? 'cancelling' : 'writing';
}

/** The line the first Ctrl+C (or SIGTERM) prints at once, saying what it does and what a second one does. */
export function firstStopLine(stop: FirstStop, signal: 'SIGINT' | 'SIGTERM'): string {
  const again = signal === 'SIGINT' ? 'Ctrl+C again' : 'Ctrl+C';
  const by = signal === 'SIGINT' ? '' : 'stopped by SIGTERM; ';
  if (stop === 'stopping') return `pictor: ${signal === 'SIGINT' ? 'stopping' : 'stopped by SIGTERM'}; nothing was sent (${again} to exit now).`;
  if (stop === 'cancelling') return `pictor: ${by}cancelling the request (${again} to exit now).`;
  if (stop === 'settling') return `pictor: ${by}the images are written; waiting ${describeDuration(INTERRUPT_SETTLE_MS)} at most for the ledger's answer (${again} to exit now).`;
  return `pictor: ${by}the job is done; writing its images (${again} to stop now).`;
}

/** What the command tells `noteJob` once it knows where the job goes and how its result is printed. */
export interface JobAbout {
  operation: 'generate' | 'edit';
  /** The job goes to an emulator (the connection's ledger is the emulator's). */
  emulator: boolean;
  /** With `--json`: writes one line to stdout, at once (the report is written just before the process exits). */
  json?: ((line: string) => void) | undefined;
  /** Which written files are partial images (the rest are final images). */
  isPartial(path: string): boolean;
}

/**
 * How the ledger ended the job, as its settlement came: charged `usd` (`settled`), or nothing (`released`, and why);
 * `recorded` false on a settle the ledger answered (not `deferred`): it had already ended the job, so the settle charged
 * nothing more (`chargeOfEndedJob`).
 */
export type JobSettled = Pick<JobSettlement, 'action' | 'usd' | 'recorded' | 'deferred' | 'released'>;

/** How long the first Ctrl+C waits for the cancelled request to end (settled or released) before exiting. */
export const INTERRUPT_SETTLE_MS = 2_000;

/** `--json`'s line after Ctrl+C: a failure (`ok: false`, `code: "interrupted"`) that still says what was written and charged. */
export interface InterruptJson {
  ok: false;
  code: 'interrupted';
  /** The report's first sentence. */
  message: string;
  operation: 'generate' | 'edit';
  /** Final images written (or saved to the temp directory). */
  files: string[];
  partials: string[];
  /** Whether the request had reached the service. */
  sent: boolean;
  /**
   * What the ledger charged the job (0 when released, or when it was stopped before the ledger could charge it); null
   * when no charge is known yet (no answer before the exit, or its settle or release kept for later): it may still
   * land (or its usage record, already written, be charged by a later run: the same amount), or else a later run may
   * charge its estimate, even with `sent` false (stopped while the ledger recorded that the request may be billed).
   */
  charged: number | null;
  /** The job went to an emulator: `charged` is what it would have cost; nothing was spent. */
  emulator: boolean;
}

export function interruptJson(job: ReportedJob, about: Pick<JobAbout, 'operation' | 'isPartial'>): InterruptJson {
  const { operation, files, partials, charged, emulator } = jobJson(job, about);
  return {
    ok: false,
    code: 'interrupted',
    message: firstLine(job).replace(/^pictor: /, ''),
    operation,
    files,
    partials,
    sent: wasSent(job.phase) && job.settled?.released !== 'not_sent',
    // Stopped before the ledger's mark that it may be billed: whatever the ledger did, a later run releases it.
    charged: job.phase === 'waiting' && charged === null ? 0 : charged,
    emulator,
  };
}

/** What every `--json` line of a job that did not finish says about it (the Ctrl+C line, and a failure's): what was written, and what the ledger charged. */
export interface JobJson {
  operation: 'generate' | 'edit';
  /** Final images written (or saved to the temp directory). */
  files: string[];
  partials: string[];
  /** What the ledger charged the job (0 when released); null when no charge is known yet (no answer, or kept for later). */
  charged: number | null;
  /** The job went to an emulator: `charged` is what it would have cost; nothing was spent. */
  emulator: boolean;
}

export function jobJson(job: Pick<JobWatch, 'files' | 'settled' | 'emulator'>, about: Pick<JobAbout, 'operation' | 'isPartial'>): JobJson {
  const { settled } = job;
  return {
    operation: about.operation,
    files: job.files.filter((file) => !about.isPartial(file)),
    partials: job.files.filter((file) => about.isPartial(file)),
    charged: chargedOf(settled),
    emulator: job.emulator === true,
  };
}


/** The lines Ctrl+C prints for a job in this state. */
export function interruptReport(job: ReportedJob | undefined): string[] {
  if (!job) return ['pictor: interrupted.'];
  const lines = [firstLine(job)];
  if (job.files.length) {
    lines.push(`Images written before the interruption (${job.files.length}):`);
    for (const file of job.files) lines.push(`  ${file}`);
  } else if (wasSent(job.phase)) {
    lines.push('No image had arrived yet, so none was written.');
  }
  return lines;
}

/** What the Ctrl+C report reads of a job (`written` absent: its images are not written yet). */
type ReportedJob = Pick<JobWatch, 'phase' | 'files' | 'settled' | 'kept' | 'exitedBy' | 'secondSignal' | 'emulator'> & { written?: boolean | undefined };

function firstLine(job: Omit<ReportedJob, 'files'>): string {
  if (job.phase === 'waiting') return 'pictor: interrupted before the request was sent: nothing was billed.';
  const { settled } = job;
  // Named for the signal that came (a SIGTERM after a Ctrl+C is no "second Ctrl+C").
  const second = job.secondSignal ?? 'a second signal';
  // Why no charge is known: the ledger answered that it kept the settle for later, or the exit came before it answered.
  const whyOpen = (ledger: string): string =>
    job.kept ? `${ledger} kept its ${keptWhat(job.kept)} for later` : job.exitedBy === 'second_interrupt' ? `${second} came before ${ledger} answered` : `${ledger} did not answer in time`;
  const unanswered = (emulator: boolean): string => `${whyOpen(ledgerWords(emulator).ledger)}: ${chargeLeftOpen(job.kept ? keptNoun(job.kept) : 'settle', emulator)}`;
  if (job.phase === 'marking' && !settled) {
    // Nothing left, but the ledger's "may be billed" mark may have been recorded before the exit: its job may then be
    // charged its estimate (by a later run, as a job that was sent, unless the release this run sent still lands).
    const { ledger } = ledgerWords(job.emulator === true);
    const why = job.kept
      ? `${ledger} kept its ${keptNoun(job.kept)} for later without saying whether it had recorded that it may be billed`
      : job.exitedBy === 'second_interrupt'
        ? `${second} came while ${ledger} was recording that it may be billed`
        : `${ledger} did not answer in time while recording that it may be billed`;
    return job.emulator
      ? `pictor: interrupted before the request was sent to the emulator: nothing was spent; ${why}, and if it had recorded that, the job may be recorded there at its estimate (marked uncertain when a later run records it).`
      : `pictor: interrupted before the request was sent: nothing was sent, but ${why}, and if it had recorded that, the job may be charged its estimate (marked uncertain when a later run charges it); check your usage before trying again.`;
  }
  if (job.emulator && settled?.action !== 'released') {
    // An emulator's ledger records what the job would have cost; no service bills it.
    const when = job.phase === 'done' ? `${job.written ? 'after writing' : 'while writing'} the images of a job the emulator had ended` : 'after the request was sent to the emulator';
    const what = job.phase === 'done' ? '' : ' (the images that came, plus the estimate of each that did not)';
    if (settled) return `pictor: interrupted ${when}: it would have cost ${formatUsdExact(settled.usd)} on the real service${what}; nothing was spent.`;
    return `pictor: interrupted ${when}: nothing was spent; ${unanswered(true)}.`;
  }
  if (job.phase === 'done') {
    // Once they are written, what was left was the wait for the ledger: the report does not say the writes were cut.
    const when = `${job.written ? 'after writing' : 'while writing'} the images of a job that had ended`;
    if (settled?.action === 'released') return `pictor: interrupted ${when}: nothing was charged.`;
    if (settled && !settled.recorded) return `pictor: interrupted ${when}: ${chargeOfEndedJob(settled)}.`;
    if (settled) return `pictor: interrupted ${when}: charged ${formatUsdExact(settled.usd)}.`;
    return `pictor: interrupted ${when}: ${unanswered(false)}.`;
  }
  if (settled?.action === 'released') {
    return settled.released === 'not_sent'
      ? 'pictor: interrupted before the request was sent: nothing was billed.'
      : 'pictor: interrupted after the service had refused the request, before it was sent again: nothing was charged.';
  }
  if (job.kept?.action === 'released') {
    // This run decided nothing was billed; only whether the ledger takes that is open.
    const when = job.kept.released === 'not_sent' ? 'before the request was sent' : 'after the service had refused the request, before it was sent again';
    return `pictor: interrupted ${when}: nothing was billed, and ${unanswered(false)}; check your usage before trying again.`;
  }
  if (settled && !settled.recorded) return `pictor: interrupted after the request was sent: the service may finish the job and bill it, and ${chargeOfEndedJob(settled)}; check your usage before trying again.`;
  if (settled) return `pictor: interrupted after the request was sent: charged ${formatUsdExact(settled.usd)} (the images that came, plus the estimate of each that did not), as the service may finish the job and bill it; check your usage before trying again.`;
  return `pictor: interrupted after the request was sent: the service may finish the job and bill it, and ${unanswered(false)}; check your usage before trying again.`;
}

/** How the report names a ledger and its charge: the account's ledger charges; an emulator's records what the job would have cost (nothing is spent). */
function ledgerWords(emulator: boolean) {
  return emulator
    ? { ledger: "the emulator's ledger", charged: 'recorded there at', charges: 'records it there at', chargesByRecord: 'records', chargedNothing: 'recorded there' }
    : { ledger: 'the ledger', charged: 'charged', charges: 'charges it', chargesByRecord: 'charges', chargedNothing: 'charged' };
}

/** A reconcile's charge: the estimate, marked uncertain (for a job the ledger holds as possibly billed). */
const RECONCILE_CHARGE = 'its estimate';
const UNCERTAIN = 'marked uncertain';

/**
 * What decides the charge of a job whose exit left it open in the ledger (on an emulator's ledger: is recorded at;
 * nothing is spent). Its settle or release (`open`), under way or kept for later, may still land (as the run closes its
 * ledger, or from a Redis command already sent): then the job is charged what this run decided, once (a release:
 * nothing). A settle may also have written its usage record and not yet the ledger's change (the file ledger appends the
 * record first; a write that failed after it, or an exit between the two): the next step that ends the job charges what
 * that record says — what this run decided — not its estimate (`chargedAsRecordedIn`, docs/spend-guard.md). A release
 * writes no record. If neither, a later run's reconcile ends it: at its estimate (marked uncertain) while the ledger
 * holds it as possibly billed, for nothing when the ledger had recorded that nothing was billed (a wait to retry an
 * attempt the service refused).
 */
function chargeLeftOpen(open: 'settle' | 'release', emulator: boolean): string {
  const { ledger, charged, charges, chargesByRecord, chargedNothing } = ledgerWords(emulator);
  const byReconcile = `a later run ${charges} ${RECONCILE_CHARGE} (${UNCERTAIN}), or nothing if ${ledger} had recorded that nothing was billed`;
  if (open === 'release') return `if its release still reaches ${ledger}, nothing is ${chargedNothing}; if not, ${byReconcile}`;
  return `if its settle still reaches ${ledger}, or had already written its usage record (a later run then ${chargesByRecord} what that record says), the job is ${charged} what this run decided; if neither, ${byReconcile}`;
}

/**
 * What charged a job whose settle the ledger answered without taking (`recorded` false): the job had already ended
 * there, so the settle charged nothing more; what ended it charged the job (`QuotaStore.settle`): a reconcile, once this
 * process's lease had lapsed (a Redis out of reach for longer than the lease; on the file ledger, a lease lapsed for
 * `LAPSED_LEASES_AT_MOST` leases), at the estimate, marked uncertain — or, on the file ledger, at what the job's usage
 * record says when the settle had written one before the ledger's change (`chargedAsRecordedIn`) — or an earlier try of
 * the same settle whose answer was lost (a command Redis ran and answered on a connection that then broke, sent again):
 * what this run decided. Told of the account's ledger only: an emulator's job that was settled is told as what it would
 * have cost, so this takes no emulator.
 */
function chargeOfEndedJob(settled: JobSettled): string {
  const { ledger, charged } = ledgerWords(false);
  const usd = formatUsdExact(settled.usd);
  return `${ledger} had already ended the job when this run's settle of ${usd} reached it, so the settle ${charged} nothing more: the job is ${charged} what ended it — a reconcile once this run's lease had lapsed (${RECONCILE_CHARGE}, ${UNCERTAIN}, or what its usage record says if the settle had written one), or an earlier try of the same settle whose answer was lost (${usd})`;
}

/** What the ledger kept for later: the job's settle, or its release. */
function keptNoun(kept: JobSettled): 'settle' | 'release' {
  return kept.action === 'released' ? 'release' : 'settle';
}

/** The same, with the charge this run decided: "settle of $0.00636", "release". */
function keptWhat(kept: JobSettled): string {
  return kept.action === 'released' ? 'release' : `settle of ${formatUsdExact(kept.usd)}`;
}
