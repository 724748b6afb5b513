import type { Writable } from 'node:stream';
import { describeDuration, describeElapsed } from '../core/describe-duration.js';
import type { JobWatch } from './interrupt.js';

/**
 * What a long job is doing, on stderr, while the user waits: queued (and how
 * many are ahead), about to send (a slot given, the ledger recording it), sent,
 * partial images received, retries, elapsed time.
 *
 * On a terminal it is one live line (a spinner from `yocto-spinner`, which also
 * keeps other stderr lines from tearing it). Elsewhere (a pipe, a log file, CI)
 * it is a plain line every `everyMs`, so a job of minutes never looks hung.
 * It never writes to stdout, so `--json` output stays one clean document.
 */
export interface Progress {
  queued(ahead: number): void;
  /** The limiter gave the job a slot: the ledger records that it may be billed, then it is sent (`sending`). */
  starting(): void;
  /** The request left (the client's `onSend`): from here on a Ctrl+C cancels a sent request. */
  sending(): void;
  partialReceived(): void;
  imageDone(): void;
  retrying(detail: string): void;
  stop(): void;
}

export interface ProgressOptions {
  /** The terminal, when stderr is one; else undefined and plain lines go through `line`. */
  terminal?: (Writable & { isTTY?: boolean }) | undefined;
  /** Writes one line to stderr. */
  line(text: string): void;
  /** Images the job makes. */
  images: number;
  /** The job's Ctrl+C (see interrupt.ts): answered from here on, told when the request is sent. */
  job: JobWatch;
  /** Off a terminal: how often to print a line. */
  everyMs: number;
  now?: () => number;
}

export async function startProgress(options: ProgressOptions): Promise<Progress> {
  // What Ctrl+C will say (sent or not, files written): the progress sees every step of the job.
  const { job } = options;
  job.listen(sayInterruption(options));
  const now = options.now ?? Date.now;
  const started = now();
  let state = 'waiting for a slot';
  let partials = 0;
  let done = 0;
  const describe = () => {
    const parts = [state, describeElapsed(now() - started)];
    if (partials) parts.push(`${partials} partial image${partials === 1 ? '' : 's'} received`);
    if (options.images > 1) parts.push(`${done}/${options.images} images done`);
    return parts.join(', ');
  };

  let display: Display | undefined;
  if (options.terminal?.isTTY) {
    try {
      display = await liveLine(options.terminal, describe);
    } catch (error) {
      // A status line is a comfort: one that cannot be drawn is said once, and plain lines take over.
      options.line(`pictor: the live status line could not start (${reasonOf(error)}); printing the status every ${describeDuration(options.everyMs)} instead.`);
    }
  }
  display ??= plainLines(options.line, describe, options.everyMs);

  // The job's state is kept whatever the display does (Ctrl+C's report reads `job.phase`); a display that fails is
  // said once and turned off, never thrown into the request it follows, whose connection then could not be closed.
  let failed = false;
  const refresh = display.refreshMs ? setInterval(() => draw('update'), display.refreshMs) : undefined;
  refresh?.unref();
  const draw = (what: 'update' | 'stop') => {
    if (what === 'stop') clearInterval(refresh);
    if (failed) return;
    try {
      display[what]();
    } catch (error) {
      failed = true;
      clearInterval(refresh);
      try {
        display.stop();
      } catch {
        // It is off either way: nothing more is drawn.
      }
      options.line(`pictor: the status line failed (${reasonOf(error)}); the job goes on without it.`);
    }
  };
  return {
    queued: (ahead) => ((state = ahead > 0 ? `queued, ${ahead} ahead` : 'waiting for a slot'), draw('update')),
    // The ledger now records that the request may be billed (a retry's slot keeps the phase: that request was sent).
    starting: () => (job.phase === 'waiting' && (job.phase = 'marking'), (state = 'about to send'), draw('update')),
    sending: () => ((job.phase = 'sent'), (state = 'sent, the service is working'), draw('update')),
    partialReceived: () => (partials++, draw('update')),
    imageDone: () => (done++, draw('update')),
    retrying: (detail) => ((state = detail), draw('update')),
    stop: () => draw('stop'),
  };
}

/**
 * How the job's Ctrl+C (and SIGTERM) lines reach stderr: off the live line, and with the cursor the spinner hid shown
 * again, first. The command listens with it from before it connects (a Ctrl+C then is told too), the progress once it starts.
 */
export function sayInterruption(options: Pick<ProgressOptions, 'terminal' | 'line'>): (lines: string[]) => void {
  return (lines) => {
    if (options.terminal?.isTTY) options.terminal.write('\r\u001b[2K\u001b[?25h');
    for (const line of lines) options.line(line);
  };
}

/** Where the status is shown: `update` when it changed (and every `refreshMs`, for the elapsed time), `stop` once the job is over. */
interface Display {
  update(): void;
  stop(): void;
  refreshMs?: number;
}

/** On a terminal: one live line with a spinner, redrawn every second. */
async function liveLine(terminal: Writable, describe: () => string): Promise<Display> {
  // Loaded only for a terminal: a CLI run from a script does not pay for it.
  const { default: yoctoSpinner } = await import('yocto-spinner');
  // Ctrl+C and SIGTERM are the job's to answer (interrupt.ts: it waits for the ledger, says what was charged and shows
  // the cursor again); the spinner's own handler would exit at once, before that is known.
  const spinner = yoctoSpinner({ stream: terminal, text: describe(), handleSignals: false });
  try {
    spinner.start();
  } catch (error) {
    try {
      spinner.stop();
    } catch {
      // Already failing: the first error says why.
    }
    throw error;
  }
  return { update: () => void (spinner.text = describe()), stop: () => void spinner.stop(), refreshMs: 1000 };
}

/** Off a terminal (a pipe, a log file, CI): a plain line every `everyMs`. */
function plainLines(line: (text: string) => void, describe: () => string, everyMs: number): Display {
  const timer = setInterval(() => line(`… ${describe()}`), everyMs);
  timer.unref();
  return { update: () => undefined, stop: () => clearInterval(timer) };
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
