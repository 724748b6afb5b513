import { Writable } from 'node:stream';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { firstStopLine, JobWatch } from '../../src/cli/interrupt.js';
import { startProgress } from '../../src/cli/progress.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { useEmulator } from '../helpers/emulator.js';
import { run, tempDir } from './run-cli.js';

const env = useEmulator();
const service = () => ({ PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY });

describe('pictor progress on long work', () => {
  it('prints a status line every few seconds on stderr when stderr is not a terminal', async () => {
    env.emulator.configure({ latencyMs: 600 });
    const { code, stderr } = await run(['generate', '--prompt', 'x', '--n', '2', '--out', `${await tempDir()}/`], service(), { progressEveryMs: 100 });
    expect(code).toBe(0);
    expect(stderr).toMatch(/… sent, the service is working, (\d+ ms|\d+(\.\d)? s)/);
  });

  it('keeps stdout to the one JSON result with --json', async () => {
    env.emulator.configure({ latencyMs: 400 });
    const { code, stdout, stderr } = await run(['generate', '--prompt', 'x', '--json', '--out', `${await tempDir()}/`], service(), { progressEveryMs: 100 });
    expect(code).toBe(0);
    expect(stdout.split('\n')).toHaveLength(1);
    expect(JSON.parse(stdout)).toMatchObject({ ok: true });
    expect(stderr).toContain('…');
  });

  it('counts partial images and finished images in the status', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    onTestFinished(() => void vi.useRealTimers());
    const lines: string[] = [];
    const progress = await startProgress({ line: (l) => lines.push(l), images: 2, everyMs: 20, now: later(7_000), job: watchedJob() });
    progress.sending();
    progress.partialReceived();
    progress.imageDone();
    vi.advanceTimersByTime(20);
    expect(lines).toHaveLength(1);
    progress.stop();
    expect(lines[0]).toBe('… sent, the service is working, 7 s, 1 partial image received, 1/2 images done');
  });

  it('says how long the job has taken as the bots say how long one took: under a second in milliseconds, never "0 s"', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    onTestFinished(() => void vi.useRealTimers());
    const lines: string[] = [];
    const progress = await startProgress({ line: (l) => lines.push(l), images: 1, everyMs: 20, now: later(250), job: watchedJob() });
    vi.advanceTimersByTime(20);
    progress.stop();
    expect(lines).toEqual(['… waiting for a slot, 250 ms']);
  });

  it('says "about to send" once a slot is given, and counts the request sent only once it left', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    onTestFinished(() => void vi.useRealTimers());
    const lines: string[] = [];
    const job = watchedJob();
    const progress = await startProgress({ line: (l) => lines.push(l), images: 1, everyMs: 20, job });
    try {
      progress.starting();
      vi.advanceTimersByTime(20);
      expect(lines).toHaveLength(1);
      expect(lines.at(-1)).toMatch(/^… about to send, /);
      // Not sent yet: the ledger is recording that it may be billed.
      expect(job.phase).toBe('marking');
      progress.sending();
      expect(job.phase).toBe('sent');
    } finally {
      progress.stop();
    }
  });

  it('draws a live line with a spinner on a terminal, and leaves it clean when done', async () => {
    let written = '';
    const terminal = Object.assign(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          written += chunk.toString();
          done();
        },
      }),
      { isTTY: true, columns: 80, cursorTo: () => true, moveCursor: () => true, clearLine: () => true },
    );
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const progress = await startProgress({ terminal, line: () => {}, images: 1, everyMs: 5000, job: watchedJob() });
    progress.queued(2);
    // The spinner's frames and the line's refresh, on the fake clock.
    vi.advanceTimersByTime(1100);
    progress.stop();
    expect(written).toContain('queued, 2 ahead');
  });
});

describe('pictor progress and Ctrl+C on a terminal', () => {
  it('leaves Ctrl+C to the job (which waits for the ledger and says what was charged): the spinner adds no handler that exits at once', async () => {
    const terminal = Object.assign(new Writable({ write: (_chunk, _encoding, done) => done() }), { isTTY: true, columns: 80, cursorTo: () => true, moveCursor: () => true, clearLine: () => true });
    const before = process.listeners('SIGINT').length;
    const progress = await startProgress({ terminal, line: () => {}, images: 1, everyMs: 5000, job: watchedJob() });
    try {
      expect(process.listeners('SIGINT')).toHaveLength(before + 1);
      expect(process.listeners('SIGTERM').some((listener) => listener.name.includes('exitHandler'))).toBe(false);
    } finally {
      progress.stop();
    }
  });
});

describe('pictor progress and SIGTERM on a terminal', () => {
  it('answers SIGTERM as Ctrl+C: the request is cancelled, and the cursor the spinner hid is shown again before it says so', async () => {
    let written = '';
    const terminal = Object.assign(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          written += chunk.toString();
          done();
        },
      }),
      { isTTY: true, columns: 80, cursorTo: () => true, moveCursor: () => true, clearLine: () => true },
    );
    const said: string[] = [];
    const before = process.listeners('SIGTERM');
    const job = watchedJob();
    const progress = await startProgress({ terminal, line: (text) => said.push(text), images: 1, everyMs: 5000, job });
    try {
      progress.sending();
      // The job's own handler, called as the signal would (emitting SIGTERM here would reach the test runner's too).
      const added = process.listeners('SIGTERM').filter((listener) => !before.includes(listener));
      expect(added).toHaveLength(1);
      (added[0] as () => void)();
      expect(job.signal.aborted).toBe(true);
      expect(written.endsWith('\u001b[?25h')).toBe(true);
      expect(said).toEqual([firstStopLine('cancelling', 'SIGTERM')]);
      job.jobEnded();
      expect(job.interruptedExit()).toBe(143);
    } finally {
      progress.stop();
    }
    job.close();
    expect(process.listeners('SIGTERM')).toEqual(before);
  });
});

/** A clock that reads 0 when the progress starts, and `ms` every time after. */
function later(ms: number): () => number {
  let now = 0;
  return () => {
    const read = now;
    now = ms;
    return read;
  };
}

/** A job whose Ctrl+C the progress answers during the test, and no longer after it. */
function watchedJob(): JobWatch {
  const job = new JobWatch();
  onTestFinished(() => job.close());
  return job;
}
