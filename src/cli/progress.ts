import type { Writable } from 'node:stream';
import type { JobWatch } from './interrupt.js';

/**
 * What a long job is doing, on stderr, while the user waits: queued (and how
 * many are ahead), sending, partial images received, retries, elapsed time.
 *
 * On a terminal it is one live line (a spinner from `yocto-spinner`, which also
 * keeps other stderr lines from tearing it). Elsewhere (a pipe, a log file, CI)
 * it is a plain line every `everyMs`, so a job of minutes never looks hung.
 * It never writes to stdout, so `--json` output stays one clean document.
 */
export interface Progress {
  queued(ahead: number): void;
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
  job.listen((lines) => {
    // Off the live line, and the cursor the spinner hid shown again, before saying what was interrupted.
    if (options.terminal?.isTTY) options.terminal.write('\r\u001b[2K\u001b[?25h');
    for (const line of lines) options.line(line);
  });
  const now = options.now ?? Date.now;
  const started = now();
  let state = 'waiting for a slot';
  let partials = 0;
  let done = 0;
  const describe = () => {
    const seconds = Math.round((now() - started) / 1000);
    const parts = [state, `${seconds} s`];
    if (partials) parts.push(`${partials} partial image${partials === 1 ? '' : 's'} received`);
    if (options.images > 1) parts.push(`${done}/${options.images} images done`);
    return parts.join(', ');
  };

  if (options.terminal?.isTTY) {
    // Loaded only for a terminal: a CLI run from a script does not pay for it.
    const { default: yoctoSpinner } = await import('yocto-spinner');
    // Ctrl+C is the job's to answer (interrupt.ts: it waits for the ledger and says what was charged); the spinner's
    // own handler would exit at once, before that is known.
    const spinner = yoctoSpinner({ stream: options.terminal, text: describe(), handleSignals: false }).start();
    const timer = setInterval(() => (spinner.text = describe()), 1000);
    timer.unref();
    const update = () => (spinner.text = describe());
    return {
      queued: (ahead) => ((state = ahead > 0 ? `queued, ${ahead} ahead` : 'waiting for a slot'), update()),
      sending: () => ((job.phase = 'sent'), (state = 'sent, the service is working'), update()),
      partialReceived: () => (partials++, update()),
      imageDone: () => (done++, update()),
      retrying: (detail) => ((state = detail), update()),
      stop: () => {
        clearInterval(timer);
        spinner.stop();
      },
    };
  }

  const timer = setInterval(() => options.line(`… ${describe()}`), options.everyMs);
  timer.unref();
  return {
    queued: (ahead) => {
      state = ahead > 0 ? `queued, ${ahead} ahead` : 'waiting for a slot';
    },
    sending: () => {
      job.phase = 'sent';
      state = 'sent, the service is working';
    },
    partialReceived: () => {
      partials++;
    },
    imageDone: () => {
      done++;
    },
    retrying: (detail) => {
      state = detail;
    },
    stop: () => clearInterval(timer),
  };
}
