import { getEventListeners } from 'node:events';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { ValidationError } from 'pictor';
import { MAX_TIMER_MS } from 'pictor/internal';
import { ChannelWriter, SKIP } from '../../../bots/slack/ChannelWriter.js';
import { stopOnce } from '../../../bots/runner/stop-once.js';

describe('ChannelWriter', () => {
  it('runs the writes of one channel one at a time, in the order they came', async () => {
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1 });
    const log: string[] = [];
    let inFlight = 0;
    let most = 0;
    const task = (name: string) => ({
      run: async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 2));
        log.push(name);
        inFlight--;
        return name;
      },
    });
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((n) => writer.write('C1', task(n))));
    expect(results).toEqual(['a', 'b', 'c', 'd']);
    expect(log).toEqual(['a', 'b', 'c', 'd']);
    expect(most).toBe(1);
  });

  it('coalesces a waiting write with the same key into one run that sees the latest state', async () => {
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1 });
    let state = 0;
    const shown: number[] = [];
    const progress = { key: 'progress:job', run: async () => void shown.push(state) };
    const first = writer.write('C1', { run: () => new Promise<void>((r) => setTimeout(r, 5)) });
    const waits = [1, 2, 3].map((n) => {
      state = n;
      return writer.write('C1', progress);
    });
    await Promise.all([first, ...waits]);
    expect(shown).toEqual([3]);
    expect(writer.stats()).toMatchObject({ writes: 2, coalesced: 2 });
  });

  it('keeps channels apart, counts skipped writes and passes failures to their caller only', async () => {
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1 });
    const failed = writer.write('C1', { run: async () => Promise.reject(new Error('not_in_channel')) });
    const skipped = writer.write('C1', { run: async () => SKIP });
    const other = writer.write('C2', { run: async () => 'ok' });
    await expect(failed).rejects.toThrow('not_in_channel');
    await expect(skipped).resolves.toBeUndefined();
    await expect(other).resolves.toBe('ok');
    await writer.idle();
    expect(writer.pending).toBe(0);
    expect(writer.stats()).toEqual({ writes: 1, skipped: 1, coalesced: 0, failed: 1 });
  });

  it('keeps the pace of a channel for the longest pace a timer can wait: the next write waits it whole', async () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const writer = new ChannelWriter({ channelWriteIntervalMs: MAX_TIMER_MS });
    const written: string[] = [];
    await writer.write('C1', { run: async () => void written.push('first') });
    await vi.advanceTimersByTimeAsync(60_000);
    const second = writer.write('C1', { run: async () => void written.push('second') });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(written).toEqual(['first']);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS);
    await second;
    expect(written).toEqual(['first', 'second']);
  });
});

describe('a ChannelWriter given a bad option', () => {
  it.each([
    // setTimeout would take such a pace as 1 ms, and every write would go unpaced.
    ...[Infinity, NaN, -1, MAX_TIMER_MS + 1].map((value) => [{ channelWriteIntervalMs: value }, 'channelWriteIntervalMs'] as const),
    // A budget of no writes would hold every budgeted write, one not finite would budget none.
    ...[0, -1, NaN, Infinity].map((value) => [{ channelWriteIntervalMs: 1, progressWritesPerMinute: value }, 'progressWritesPerMinute'] as const),
    // A burst of none would hold every budgeted write for ever; one not a whole number of writes became the budget's capacity.
    ...[0, 1.5, NaN, Infinity].map((value) => [{ channelWriteIntervalMs: 1, progressWritesPerMinute: 60, progressWritesBurst: value }, 'progressWritesBurst'] as const),
    // A headroom not a whole number of writes: NaN reached the shared bucket as it was (Math.max(0, NaN) is NaN).
    ...[-1, 1.5, NaN, Infinity].map((value) => [{ channelWriteIntervalMs: 1, progressWritesPerMinute: 60, sharedHeadroom: value }, 'sharedHeadroom'] as const),
  ])('is not made with %o: a validation_error naming %s', (options, option) => {
    const made = () => new ChannelWriter(options);
    expect(made).toThrow(ValidationError);
    expect(made).toThrow(expect.objectContaining({ code: 'validation_error', param: option }));
  });

  it('checks a burst given without a budget too', () => {
    expect(() => new ChannelWriter({ channelWriteIntervalMs: 1, progressWritesBurst: 0 })).toThrow(expect.objectContaining({ param: 'progressWritesBurst' }));
  });
});

describe('ChannelWriter’s workspace budgets', () => {
  it('holds every budgeted write beyond the budget, never unbudgeted ones, and gives the next token to a final update before progress', async () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1, progressWritesPerMinute: 600, progressWritesBurst: 1 });
    const done: string[] = [];
    const write = (channel: string, name: string, task: { urgent?: boolean; budgeted?: boolean }) =>
      writer.write(channel, task.budgeted ? { ...task, budgeted: true, workspace: 'T1', run: async () => void done.push(name) } : { urgent: task.urgent, run: async () => void done.push(name) });
    const all = [
      write('C1', 'progress-1', { budgeted: true }),
      write('C2', 'progress-2', { budgeted: true }),
      write('C2', 'preview-2', {}),
      write('C3', 'final-3', { urgent: true, budgeted: true }),
      write('C4', 'note-4', { urgent: true }),
    ];
    await vi.advanceTimersByTimeAsync(30);
    expect(done.sort()).toEqual(['note-4', 'preview-2', 'progress-1']);
    await vi.advanceTimersByTimeAsync(200);
    await Promise.all(all);
    // One token every 100 ms: the final update, though it came after progress-2, had the first.
    expect(done.slice(3)).toEqual(['final-3', 'progress-2']);
  });

  it('gives each workspace a budget of its own: a busy one does not hold back the updates of another', async () => {
    // One token a minute, two saved up: in each workspace two updates go now and the rest wait.
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1, progressWritesPerMinute: 1, progressWritesBurst: 2 });
    const done: string[] = [];
    const update = (workspace: string, channel: string, urgent = false) =>
      void writer.write(channel, { budgeted: true, workspace, urgent, run: async () => void done.push(`${workspace}/${channel}`) });
    for (const channel of ['C1', 'C2', 'C3', 'C4']) update('T1', channel);
    update('T2', 'C5');
    update('T2', 'C6', true);
    update('T2', 'C7');
    await vi.waitFor(() => expect(done).toHaveLength(4));
    expect(done.filter((d) => d.startsWith('T1/'))).toEqual(['T1/C1', 'T1/C2']);
    // T2's waiting final update keeps T2's last token from its progress, not T1's.
    expect(done.filter((d) => d.startsWith('T2/')).sort()).toEqual(['T2/C5', 'T2/C6']);
    expect(writer.pending).toBe(3);
  });

  it('keeps a workspace to 50 updates in its busiest 60 s by default (40 a minute, 10 saved up), as Slack’s Tier 3 allows', async () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const writer = new ChannelWriter({ channelWriteIntervalMs: 0 });
    let done = 0;
    for (let i = 0; i < 60; i++) void writer.write(`C${i}`, { budgeted: true, workspace: 'T1', run: async () => void done++ });
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(10);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(done).toBe(50);
  });

  it('refuses a budgeted write that does not say its workspace', async () => {
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1, progressWritesPerMinute: 60 });
    const task = { budgeted: true, run: async () => 'written' } as unknown as Parameters<typeof writer.write<string>>[1];
    await expect(writer.write('C1', task)).rejects.toThrow(TypeError);
  });

  it('drops the progress writes waiting for a token when told to shed them, and still makes the final updates', async () => {
    // One token a minute, one saved up: the first update goes, the rest wait for a token.
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1, progressWritesPerMinute: 1, progressWritesBurst: 1 });
    const done: string[] = [];
    const first = writer.write('C1', { budgeted: true, workspace: 'T1', run: async () => void done.push('progress-1') });
    await first;
    const progress = writer.write('C2', { budgeted: true, workspace: 'T1', run: async () => 'progress-2' });
    const note = writer.write('C2', { urgent: true, run: async () => 'note-2' });
    const final = writer.write('C3', { budgeted: true, urgent: true, workspace: 'T1', run: async () => 'final-3' });
    await expect(note).resolves.toBe('note-2');
    expect(writer.pending).toBe(2);

    let finalSettled = false;
    void final.finally(() => (finalSettled = true));
    // The shed is at once: the progress write is dropped, the final update is not and still waits for its token.
    writer.shedProgress();
    expect(writer.pending).toBe(1);
    await expect(progress).resolves.toBeUndefined();
    expect(writer.stats().skipped).toBe(1);
    expect(writer.pending).toBe(1);
    expect(finalSettled).toBe(false);
  });

  it('keeps the stop’s until as its deadline when the stop gives no drain bound, and the earlier of the two when it gives one', async () => {
    const until = Date.now() + 5_000;
    const alone = new ChannelWriter({ channelWriteIntervalMs: 1 });
    await stopOnce()(until, async (budget) => alone.shedProgress({ budget }));
    expect(alone.stopDeadline).toBe(until);
    const bounded = new ChannelWriter({ channelWriteIntervalMs: 1 });
    await stopOnce()(until, async (budget) => bounded.shedProgress({ budget, drainUntil: until - 1_000 }));
    expect(bounded.stopDeadline).toBe(until - 1_000);
  });

  it('reads the stop’s deadline from the stop itself: a later call bringing it forward moves it, and the waits on it are told; a later one does not', async () => {
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1 });
    const stop = stopOnce();
    const until = Date.now() + 60_000;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const stopped = stop(until, async (budget) => {
      writer.shedProgress({ budget });
      await held;
    });
    let moved = 0;
    writer.onStopDeadlineMoved(() => moved++);
    expect(writer.stopDeadline).toBe(until);
    void stop(until - 30_000, () => Promise.resolve());
    expect(writer.stopDeadline).toBe(until - 30_000);
    expect(moved).toBe(1);
    void stop(until, () => Promise.resolve());
    expect(writer.stopDeadline).toBe(until - 30_000);
    expect(moved).toBe(1);
    release();
    await stopped;
  });

  it('puts a deferrable final update after the channel’s other urgent writes, and before its progress', async () => {
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1, progressWritesPerMinute: 600 });
    const done: string[] = [];
    const note = (name: string, urgent = true) => ({ urgent, run: async () => void done.push(name) });
    const busy = writer.write('C1', { run: () => new Promise<void>((r) => setTimeout(r, 5)) });
    const writes = [
      writer.write('C1', note('preview', false)),
      writer.write('C1', { budgeted: true, urgent: true, deferrable: true, workspace: 'T1', run: async () => void done.push('done of job 1') }),
      writer.write('C1', note('images of job 2')),
      writer.write('C1', note('buttons of job 2')),
    ];
    await Promise.all([busy, ...writes]);
    expect(done).toEqual(['images of job 2', 'buttons of job 2', 'done of job 1', 'preview']);
  });

  it('sheds a deferrable final update waiting for its token when the bot stops, and every progress or deferrable write that comes after', async () => {
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1, progressWritesPerMinute: 1, progressWritesBurst: 1 });
    await writer.write('C1', { budgeted: true, workspace: 'T1', run: async () => 'progress-1' });
    const ran: string[] = [];
    const deferred = writer.write('C1', { budgeted: true, urgent: true, deferrable: true, workspace: 'T1', run: async () => void ran.push('deferred') });
    const final = writer.write('C2', { budgeted: true, urgent: true, workspace: 'T1', run: async () => void ran.push('final') });
    expect(writer.pending).toBe(2);

    // The shed is at once: the deferrable one is dropped, the other final update still waits for its token.
    writer.shedProgress();
    expect(writer.pending).toBe(1);
    await expect(deferred).resolves.toBeUndefined();
    // Later ones are shed at once; a message, and a final update that is not deferrable, still go.
    await expect(writer.write('C3', { budgeted: true, urgent: true, deferrable: true, workspace: 'T1', run: async () => void ran.push('late deferred') })).resolves.toBeUndefined();
    await expect(writer.write('C3', { budgeted: true, workspace: 'T1', run: async () => void ran.push('late progress') })).resolves.toBeUndefined();
    await expect(writer.write('C3', { urgent: true, run: async () => 'message' })).resolves.toBe('message');
    expect(writer.pending).toBe(1);
    expect(ran).toEqual([]);
    void final;
  });

  it('still makes a final update that came while a shed progress write was having its shared token looked up', async () => {
    // A shared budget whose answers take a Redis round trip: the drain loop is awaiting one when the writes below come.
    const taken: string[] = [];
    const asked: string[] = [];
    const shared = {
      take: (name: string) => (asked.push(name), new Promise<number>((resolve) => setTimeout(() => resolve(taken.push(name) && 0), 30))),
      giveBack: async () => undefined,
    } as unknown as ConstructorParameters<typeof ChannelWriter>[0]['shared'];
    const writer = new ChannelWriter({ channelWriteIntervalMs: 0, progressWritesPerMinute: 40, shared });
    const ran: string[] = [];
    const progress = writer.write('C1', { budgeted: true, workspace: 'T1', key: 'progress', run: async () => void ran.push('progress') });
    await vi.waitFor(() => expect(asked).toHaveLength(1));
    const final = writer.write('C1', { budgeted: true, workspace: 'T1', urgent: true, run: async () => void ran.push('final') });
    writer.shedProgress();
    await expect(progress).resolves.toBeUndefined();
    await final;
    expect(ran).toEqual(['final']);
    expect(writer.pending).toBe(0);
  });

  it('gives the token back when a progress write has nothing to write', async () => {
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1, progressWritesPerMinute: 1, progressWritesBurst: 1 });
    await writer.write('C1', { budgeted: true, workspace: 'T1', run: async () => SKIP });
    await expect(writer.write('C2', { budgeted: true, workspace: 'T1', run: async () => 'written' })).resolves.toBe('written');
  });
});

describe('ChannelWriter.idle', () => {
  it('stops waiting when its signal aborts, a write still running (a stop given up at its deadline)', async () => {
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1 });
    let finish!: () => void;
    const running = writer.write('C1', { run: () => new Promise<void>((r) => (finish = r)) });
    const stopWaiting = new AbortController();
    const gaveUp = writer.idle(stopWaiting.signal);
    stopWaiting.abort();
    await gaveUp;
    expect(writer.pending).toBe(1);
    // An aborted signal waits for nothing.
    await writer.idle(stopWaiting.signal);
    finish();
    await running;
    await writer.idle();
  });

  it('lets go of its signal once idle: a signal aborted later does nothing', async () => {
    const writer = new ChannelWriter({ channelWriteIntervalMs: 1 });
    let finish!: () => void;
    const running = writer.write('C1', { run: () => new Promise<void>((r) => (finish = r)) });
    const signal = new AbortController().signal;
    const idle = writer.idle(signal);
    expect(getEventListeners(signal, 'abort')).toHaveLength(1);
    await vi.waitFor(() => expect(finish).toBeDefined());
    finish();
    await running;
    await idle;
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });
});
