import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JobRecordStore } from '../../../bots/discord/JobRecordStore.js';
import { finalShownOf } from '../../../bots/discord/job-rules.js';
import { MAX_KEPT_IMAGE_BYTES, openBotState, type BotState } from '../../../bots/state/index.js';
import { RedisLink, silentLogger } from '../../../src/internal.js';
import { makeImage } from '../../helpers/images.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';

const redis = testRedis();
const requester = { platform: 'discord' as const, userId: '1', channelId: '2', scopeId: '3' };

/** Two processes on one backend (the data folder: `b` starts after `a`; Redis: two replicas at once). */
interface Processes {
  a: JobRecordStore;
  b: JobRecordStore;
  concurrent: boolean;
  /** As kill -9: `a`'s lease is no longer renewed. */
  killA(): Promise<void>;
}

const closers: (() => Promise<void>)[] = [];

/** `take` (a Retry's) as this process's clock reads `time`. */
async function at<T>(time: number, take: () => Promise<T>): Promise<T> {
  const clock = vi.spyOn(Date, 'now').mockReturnValue(time);
  try {
    return await take();
  } finally {
    clock.mockRestore();
  }
}
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function open(backend: 'file' | 'redis', bounds: { keptImagesBytes?: number } = {}): Promise<Processes> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pictor-discord-jobs-'));
  closers.push(() => rm(dataDir, { recursive: true, force: true }));
  const prefix = uniquePrefix('discord-jobs');
  const links: RedisLink[] = [];
  const states: BotState[] = [];
  const process = async () => {
    const link = backend === 'redis' ? await RedisLink.open({ url: requireRedisUrl(redis), prefix }) : undefined;
    if (link) links.push(link);
    const state = await openBotState({ dataDir, redis: link, leaseMs: 300, logger: silentLogger(), ...bounds });
    states.push(state);
    return new JobRecordStore({ state, logger: silentLogger() });
  };
  closers.push(async () => {
    for (const state of states) await state.close();
    for (const link of links) await link.close();
    if (backend === 'redis') await deleteKeys(requireRedisUrl(redis), prefix);
  });
  const a = await process();
  const b = await process();
  return {
    a,
    b,
    concurrent: backend === 'redis',
    async killA() {
      if (backend === 'file') return states[0]!.close();
      links[0]!.commands.disconnect();
      await vi.waitFor(async () => expect(await links[1]!.commands.exists(`${prefix}:bots:lease:${states[0]!.store.owner}`)).toBe(0), { timeout: 2000, interval: 20 });
    },
  };
}

describe.each([
  { backend: 'file' as const, skip: undefined },
  { backend: 'redis' as const, skip: redis.skipReason },
])('the Discord job store on $backend', ({ backend, skip }) => {
  it.skipIf(skip)('gives the other process (a restart, a replica) the record, inputs and outputs of a job (what Reroll and Edit need)', async () => {
    const { a, b } = await open(backend);
    const png = Buffer.from(await makeImage('png', 8, 8));
    const key = a.newKey();
    await a.add({ key, kind: 'edit', prompt: 'p', options: { size: '1024x1536' }, requester, status: 'running' }, [{ data: png, filename: 'a.png' }]);
    await a.update(key, { status: 'completed', runnerJobId: 'job1' });
    await a.saveOutputs(key, [png, png], ['png']);

    expect(await b.get(key)).toMatchObject({ kind: 'edit', prompt: 'p', options: { size: '1024x1536' }, status: 'completed', runnerJobId: 'job1' });
    expect((await b.readInputs(key)).map((i) => [i.filename, i.data.equals(png)])).toEqual([['a.png', true]]);
    expect((await b.readOutput(key, 1))?.data.equals(png)).toBe(true);
    expect(await b.readOutput(key, 2)).toBeUndefined();
    await b.remove(key);
    expect(await b.get(key)).toBeUndefined();
    expect(await b.readOutput(key, 0)).toBeUndefined();
  });

  it.skipIf(skip)('reads a record being added once it is kept, its inputs with it (an edit that fails at once still offers its Retry)', async () => {
    const { a } = await open(backend);
    const png = Buffer.from(await makeImage('png', 8, 8));
    const key = a.newKey();
    const adding = a.add({ key, kind: 'edit', prompt: 'p', options: {}, requester, status: 'running' }, [{ data: png, filename: 'a.png' }]);
    const read = await a.get(key);
    await adding;

    expect(read?.inputs).toMatchObject([{ filename: 'a.png' }]);
  });

  it.skipIf(skip)('hands a running job of a process that died to one survivor, and tells the others it is not theirs while the holder lives', async () => {
    const { a, b, concurrent, killA } = await open(backend);
    const key = a.newKey();
    await a.add({ key, kind: 'generate', prompt: 'running on a', options: {}, requester, status: 'running', reply: { applicationId: 'app', token: 't', issuedAt: Date.now() } });
    expect(await b.runsElsewhere(key)).toBe(concurrent);
    if (concurrent) expect(await b.claimInterrupted()).toEqual([]);
    await killA();
    expect(await b.runsElsewhere(key)).toBe(false);
    const [claimed, ...rest] = await b.claimInterrupted();
    expect(rest).toEqual([]);
    expect(claimed).toMatchObject({ key, prompt: 'running on a', reply: { token: 't' } });
    await b.update(key, { status: 'failed' });
    expect(await b.get(key)).not.toHaveProperty('reply');
    expect(await b.claimInterrupted()).toEqual([]);
  });

  it.skipIf(skip)('gives a job’s Retry to one press of it, of any number at once (replicas too), until that press gives it back', async () => {
    const { a, b, concurrent } = await open(backend);
    const key = a.newKey();
    await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running' });
    await a.update(key, { status: 'failed' });
    const other = concurrent ? b : a;
    const taken = await Promise.all(['press1', 'press2', 'press3', 'press4'].map((press, i) => (i % 2 ? other : a).takeRetry(key, press)));
    expect(taken.filter((t) => t === 'taken')).toHaveLength(1);
    // The others are told the press that took it is still starting the job.
    expect(taken.filter((t) => t === 'starting')).toHaveLength(3);
    const winner = `press${taken.indexOf('taken') + 1}`;
    // Given back only by the press that took it.
    await other.giveBackRetry(key, 'press9');
    expect(await a.takeRetry(key, 'press5')).toBe('starting');
    await other.giveBackRetry(key, winner);
    expect(await a.takeRetry(key, 'press6')).toBe('taken');
    expect(await a.get(key)).toMatchObject({ status: 'failed', retriedBy: { press: 'press6' } });
    // Marked started only by the press that took it; then spent: never lapsing, never given back by another press.
    expect(await other.retryStarted(key, 'press5')).toBe('held');
    expect(await other.retryStarted(key, 'press6')).toBe('marked');
    await other.giveBackRetry(key, 'press5');
    expect(await at(Date.now() + 10 * JobRecordStore.RETRY_START_MS, () => a.takeRetry(key, 'press7'))).toBe('retried');
    expect(await a.takeRetry(a.newKey(), 'press8')).toBe('retried');
  });

  it.skipIf(skip)('tells a press whose take was given back (it lapsed, another press took it and was refused) that the Retry is free, not spent', async () => {
    const { a } = await open(backend);
    const key = a.newKey();
    await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'failed' });
    const pressedAt = Date.now();
    expect(await at(pressedAt, () => a.takeRetry(key, 'press1'))).toBe('taken');
    expect(await at(pressedAt + JobRecordStore.RETRY_START_MS, () => a.takeRetry(key, 'press2'))).toBe('taken');
    expect(await a.retryStarted(key, 'press1')).toBe('held');
    await a.giveBackRetry(key, 'press2');
    expect(await a.retryStarted(key, 'press1')).toBe('free');
    expect(await a.get(key)).not.toHaveProperty('retriedBy');
    expect(await a.retryStarted(a.newKey(), 'press1')).toBe('free');
  });

  it.skipIf(skip)('marks a Retry started through a few failed writes, as a job’s end is marked, and throws once they all failed', async () => {
    const { a } = await open(backend);
    const key = a.newKey();
    await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'failed' });
    expect(await a.takeRetry(key, 'press1')).toBe('taken');
    const write = vi.spyOn(a.records, 'update');
    write.mockRejectedValueOnce(new Error('state write failed')).mockRejectedValueOnce(new Error('state write failed'));
    // The pauses between tries (200 ms, then 400 ms) pass on a fake clock.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const marking = a.retryStarted(key, 'press1');
      await vi.advanceTimersByTimeAsync(200 + 400);
      expect(await marking).toBe('marked');
      write.mockRejectedValue(new Error('state write failed'));
      const failing = expect(a.retryStarted(key, 'press1')).rejects.toThrow('state write failed');
      await vi.advanceTimersByTimeAsync(200 + 400);
      await failing;
    } finally {
      vi.useRealTimers();
    }
    expect(write).toHaveBeenCalledTimes(6);
    write.mockRestore();
    expect(await a.get(key)).toMatchObject({ retriedBy: { press: 'press1', started: true } });
  });

  it.skipIf(skip)('gives a Retry back through a few failed writes, as it is marked, and throws once they all failed', async () => {
    const { a } = await open(backend);
    const key = a.newKey();
    await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'failed' });
    expect(await a.takeRetry(key, 'press1')).toBe('taken');
    expect(await a.retryStarted(key, 'press1')).toBe('marked');
    const write = vi.spyOn(a.records, 'update');
    write.mockRejectedValueOnce(new Error('state write failed')).mockRejectedValueOnce(new Error('state write failed'));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const giving = a.giveBackRetry(key, 'press1');
      await vi.advanceTimersByTimeAsync(200 + 400);
      await giving;
      expect(write).toHaveBeenCalledTimes(3);
      expect(await a.takeRetry(key, 'press2')).toBe('taken');
      write.mockRejectedValue(new Error('state write failed'));
      const failing = expect(a.giveBackRetry(key, 'press2')).rejects.toThrow('state write failed');
      await vi.advanceTimersByTimeAsync(200 + 400);
      await failing;
    } finally {
      vi.useRealTimers();
    }
    expect(write).toHaveBeenCalledTimes(7);
    write.mockRestore();
    expect(await a.get(key)).toMatchObject({ retriedBy: { press: 'press2' } });
  });

  it.skipIf(skip)('frees a job’s Retry taken by a process that died before its job started, once the take is older than a start takes', async () => {
    const { a, b, killA } = await open(backend);
    const key = a.newKey();
    await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running' });
    await a.update(key, { status: 'failed' });
    const pressedAt = Date.now();
    expect(await at(pressedAt, () => a.takeRetry(key, 'press1'))).toBe('taken');
    // Killed between its take and its job's start: the restart (or a replica) finds the take as it was left.
    await killA();
    expect(await at(pressedAt + JobRecordStore.RETRY_START_MS - 1, () => b.takeRetry(key, 'press2'))).toBe('starting');
    expect(await at(pressedAt + JobRecordStore.RETRY_START_MS, () => b.takeRetry(key, 'press3'))).toBe('taken');
    await b.retryStarted(key, 'press3');
    expect(await at(pressedAt + 2 * JobRecordStore.RETRY_START_MS, () => b.takeRetry(key, 'press4'))).toBe('retried');
  });

  it.skipIf(skip)('keeps no image over the bound, and an edit’s inputs all or none', async () => {
    const { a } = await open(backend);
    const small = Buffer.from(await makeImage('png', 4, 4));
    const huge = Buffer.alloc(MAX_KEPT_IMAGE_BYTES + 1, 1);
    const key = a.newKey();
    await a.add({ key, kind: 'edit', prompt: 'p', options: {}, requester, status: 'running' }, [{ data: small }, { data: huge }]);
    expect((await a.get(key))?.inputs).toEqual([]);
    expect(await a.readInputs(key)).toEqual([]);
    await a.saveOutputs(key, [huge, small], ['png']);
    // The output left out keeps its place: the job's second image is still its second.
    expect(await a.readOutput(key, 0)).toBeUndefined();
    expect(await a.readOutput(key, 1)).toMatchObject({ data: small });
    expect(await a.get(key)).toMatchObject({ made: 2, outputs: [{ index: 1 }] });
  });

  it.skipIf(skip)('keeps what a failed or cancelled job was charged in the final it keeps, so the next process shows its charge line again', async () => {
    const { a, b, killA } = await open(backend);
    const [failed, cancelled, released] = [a.newKey(), a.newKey(), a.newKey()];
    for (const key of [failed, cancelled, released]) await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running' });
    const words = { key: 'failure.stream_broken' as const };
    await a.markEndRecorded(failed, finalShownOf({ type: 'failed', jobId: 'j1', code: 'stream_broken', message: 'm', words, retryable: true, cost: { totalUsd: 0.011 } }));
    await a.markEndRecorded(cancelled, finalShownOf({ type: 'cancelled', jobId: 'j2', byUserId: '1', reason: 'requested', cost: { totalUsd: 0.022 } }));
    await a.markEndRecorded(released, finalShownOf({ type: 'cancelled', jobId: 'j3', byUserId: '1', reason: 'requested' }));
    await killA();

    expect((await b.get(failed))?.final).toEqual({ type: 'failed', code: 'stream_broken', words, retryable: true, cost: { totalUsd: 0.011 } });
    expect((await b.get(cancelled))?.final).toEqual({ type: 'cancelled', byUserId: '1', reason: 'requested', cost: { totalUsd: 0.022 } });
    expect((await b.get(released))?.final).toEqual({ type: 'cancelled', byUserId: '1', reason: 'requested' });
  });

  it.skipIf(skip)('marks a record’s end recorded in one update, reading it no other way: an ended one is released, a running one stays held', async () => {
    const { a, b, killA } = await open(backend);
    const [running, ended] = [a.newKey(), a.newKey()];
    await a.add({ key: running, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running' });
    await a.add({ key: ended, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running' });
    await a.markEnded(ended, 'completed', { end: { type: 'completed' } });
    const get = vi.spyOn(a.records, 'get');
    const update = vi.spyOn(a.records, 'update');

    const final = { type: 'failed' as const, code: 'moderation_blocked', words: { key: 'failure.moderation_blocked' as const }, retryable: false };
    await a.markEndRecorded(running, final);
    await a.markEndRecorded(ended, { type: 'completed' });
    expect(get).not.toHaveBeenCalled();
    expect(update).toHaveBeenCalledTimes(2);
    get.mockRestore();
    // The running one keeps the final its view could not mark (the sweep shows that end); the ended one keeps no end.
    expect(await a.get(running)).toMatchObject({ status: 'running', endRecorded: true, final });
    expect(await a.get(ended)).toMatchObject({ status: 'completed', endRecorded: true });
    expect(await a.get(ended)).not.toHaveProperty('end');
    expect(await a.get(ended)).not.toHaveProperty('final');
    await killA();
    // The running one is the sweep's to show (its end not recorded again); the ended one is nobody's.
    const claimed = await b.claimInterrupted();
    expect(claimed).toEqual([expect.objectContaining({ key: running, final })]);
    // Once the sweep marks it ended, it is released, and its final goes with its end.
    await b.markEnded(running, 'failed');
    expect(await b.get(running)).not.toHaveProperty('final');
    expect(await b.claimInterrupted()).toEqual([]);
  });

  it.skipIf(skip)('keeps a record its view marked ended held until its end is recorded, and hands it to the sweep when its process is gone', async () => {
    const { a, b, killA } = await open(backend);
    const [unrecorded, recorded, interrupted] = [a.newKey(), a.newKey(), a.newKey()];
    for (const key of [unrecorded, recorded, interrupted]) await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running' });
    // The live view's mark: its end, to be recorded by the runner.
    await a.markEnded(unrecorded, 'failed', { end: { type: 'failed', code: 'server_error' } });
    await a.markEnded(recorded, 'completed', { end: { type: 'completed' } });
    await a.markEndRecorded(recorded);
    // A mark with no end to record (a job no runner saw end: interrupted) releases it at once, as before.
    await a.markEnded(interrupted, 'failed');
    await killA();

    const claimed = await b.claimInterrupted();
    expect(claimed).toEqual([expect.objectContaining({ key: unrecorded, status: 'failed', end: { type: 'failed', code: 'server_error' } })]);
    expect(claimed[0]?.endRecorded).toBeUndefined();
    await b.markEndRecorded(unrecorded);
    expect(await b.get(unrecorded)).toMatchObject({ status: 'failed', endRecorded: true });
  });

  it.skipIf(skip)('decides whether an ended record stays held from the record as changed, as whether it keeps its reply: a mark again without its end keeps one whose end is still to be recorded held', async () => {
    const { a, b, killA } = await open(backend);
    const key = a.newKey();
    await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running', reply: { applicationId: 'app', token: 't', issuedAt: Date.now() } });
    await a.markEnded(key, 'completed', { end: { type: 'completed' } });
    // Marked ended again, without the end (the record's still is): nothing recorded it yet.
    await a.markEnded(key, 'completed');
    expect(await a.get(key)).toMatchObject({ status: 'completed', end: { type: 'completed' }, reply: { token: 't' } });
    await killA();

    expect((await b.claimInterrupted()).map((r) => r.key)).toEqual([key]);
  });

  it.skipIf(skip)('costs one write a mark, whichever of the view’s and the runner’s comes second releasing the record in its own, with its reply and its end dropped', async () => {
    const { a, b, killA } = await open(backend);
    const [viewFirst, runnerFirst, lostAnswer] = [a.newKey(), a.newKey(), a.newKey()];
    const reply = { applicationId: 'app', token: 't', issuedAt: Date.now() };
    for (const key of [viewFirst, runnerFirst, lostAnswer]) await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running', reply });
    const update = vi.spyOn(a.records, 'update');
    const put = vi.spyOn(a.records, 'put');
    await a.markEnded(viewFirst, 'completed', { end: { type: 'completed' } });
    await a.markEndRecorded(viewFirst);
    // The runner recorded the end before the view could mark it (a slow edit): the view's mark comes second.
    await a.markEndRecorded(runnerFirst);
    await a.markEnded(runnerFirst, 'completed', { end: { type: 'completed' } });
    expect([update.mock.calls.length, put.mock.calls.length]).toEqual([4, 0]);
    for (const key of [viewFirst, runnerFirst]) {
      const record = await a.get(key);
      expect(record).toMatchObject({ status: 'completed', endRecorded: true });
      expect(record).not.toHaveProperty('end');
      expect(record).not.toHaveProperty('reply');
    }
    // Marked ended by a write whose answer was lost (its view could not know): its end recorded releases it as well.
    await a.records.update(lostAnswer, (record) => record && { ...record, status: 'failed', end: { type: 'failed', code: 'server_error' } });
    await a.markEndRecorded(lostAnswer);
    await killA();
    expect(await b.claimInterrupted()).toEqual([]);
  });

  it.skipIf(skip)('releases a claimed record with nothing left to do as it is then: one its member’s forget deleted after the claim stays deleted', async () => {
    const { a, b, killA } = await open(backend);
    const key = a.newKey();
    // Held though ended with no end to record (a process stopped between its two writes): the claim releases it.
    await a.records.put(key, { key, kind: 'generate', prompt: 'a forgotten prompt', options: {}, requester, status: 'completed', createdAt: Date.now(), inputs: [], outputs: [] }, { hold: true });
    await killA();
    const claimOrphans = b.records.claimOrphans.bind(b.records);
    vi.spyOn(b.records, 'claimOrphans').mockImplementation(async () => {
      const claimed = await claimOrphans();
      // The member's forget, between the claim and the release.
      await b.records.delete(key);
      return claimed;
    });
    expect(await b.claimInterrupted()).toEqual([]);
    expect(await b.get(key)).toBeUndefined();
  });

  it.skipIf(skip)('reads the outputs of a record kept before they had their index by their position', async () => {
    const { a } = await open(backend);
    const [first, second] = [Buffer.from(await makeImage('png', 8, 8)), Buffer.from(await makeImage('png', 9, 9))];
    const key = a.newKey();
    await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running' });
    await a.saveOutputs(key, [first, second], ['png']);
    await a.records.update(key, (record) => {
      if (!record) return undefined;
      delete record.made;
      for (const output of record.outputs) delete output.index;
      return record;
    });
    expect(await a.readOutput(key, 0)).toMatchObject({ data: first });
    expect(await a.readOutput(key, 1)).toMatchObject({ data: second });
  });

  it.skipIf(skip)('tells any process which images a ledger job kept (the console’s thumbnails), until its record goes', async () => {
    const { a, b } = await open(backend);
    const [first, second] = [Buffer.from(await makeImage('png', 8, 8)), Buffer.from(await makeImage('png', 9, 9))];
    const key = a.newKey();
    await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running', runnerJobId: 'ledger-job-1' });
    expect(await a.keptOutputs('ledger-job-1')).toBeUndefined();
    await a.saveOutputs(key, [first, second], ['png']);
    // Another process (a restart, a replica) finds them.
    expect(await b.keptOutputs('ledger-job-1')).toEqual([0, 1]);
    expect(await b.readKeptOutput('ledger-job-1', 1)).toMatchObject({ data: second });
    expect(await b.readKeptOutput('ledger-job-1', 2)).toBeUndefined();
    expect(await b.keptOutputs('another-job')).toBeUndefined();
    await a.remove(key);
    expect(await a.keptOutputs('ledger-job-1')).toBeUndefined();
    expect(await a.readKeptOutput('ledger-job-1', 0)).toBeUndefined();
  });

  it.skipIf(skip)('tells which of a ledger job’s images are kept, numbered as the job does (its Edit buttons): its first one not kept is left out, not a shift', async () => {
    const { a, b } = await open(backend);
    const [tooLarge, second] = [Buffer.alloc(MAX_KEPT_IMAGE_BYTES + 1), Buffer.from(await makeImage('png', 9, 9))];
    const key = a.newKey();
    await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running', runnerJobId: 'ledger-job-2' });
    await a.saveOutputs(key, [tooLarge, second], ['png']);
    expect(await b.keptOutputs('ledger-job-2')).toEqual([1]);
    expect(await b.readKeptOutput('ledger-job-2', 0)).toBeUndefined();
    expect(await b.readKeptOutput('ledger-job-2', 1)).toMatchObject({ data: second });
    expect(await b.readOutput(key, 1)).toMatchObject({ data: second });
  });

  it.skipIf(skip)('keeps images within PICTOR_KEPT_IMAGES_MB, dropping the oldest first: their jobs then have nothing to reroll', async () => {
    const { a, b } = await open(backend, { keptImagesBytes: 3 * 1024 * 1024 });
    const image = Buffer.alloc(1024 * 1024, 7);
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) {
      const key = a.newKey();
      keys.push(key);
      await a.add({ key, kind: 'edit', prompt: `edit ${i}`, options: {}, requester, status: 'running' }, [{ data: image, filename: 'in.png' }]);
    }
    // Five images of 1 MiB in 3 MiB (kept as their bytes, no base64): the three latest stay, and a reader elsewhere sees the same.
    const kept = await Promise.all(keys.map(async (key) => (await b.readInputs(key)).length));
    expect(kept).toEqual([0, 0, 1, 1, 1]);
    expect(await b.get(keys[0]!)).toMatchObject({ prompt: 'edit 0' });
  });

  it.skipIf(skip)('lists a member’s drafts of the "Edit image" menu to any process, oldest first', async () => {
    const { a, b } = await open(backend);
    const sources = [{ url: 'https://cdn.discordapp.com/x.png', filename: 'x.png', label: 'x' }] as never;
    const first = a.newKey();
    await a.add({ key: first, kind: 'edit', prompt: '', options: {}, requester, status: 'draft', sources, createdAt: 1 });
    const second = b.newKey();
    await b.add({ key: second, kind: 'edit', prompt: '', options: {}, requester, status: 'draft', sources, createdAt: 2 });
    expect((await b.drafts('1')).map((r) => r.key)).toEqual([first, second]);
    await b.remove(first);
    expect((await b.drafts('1')).map((r) => r.key)).toEqual([second]);
    expect(await b.drafts('someone else')).toEqual([]);
  });
});

describe('marking a job ended', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A running job on the data folder, whose record writes fail `failures` times before they go through. */
  async function withFlakyWrites(failures: number) {
    const { a } = await open('file');
    const key = a.newKey();
    await a.add({ key, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running', reply: { applicationId: 'app', token: 't', issuedAt: Date.now() } });
    const write = a.update.bind(a);
    const update = vi.spyOn(a, 'update').mockImplementation(async (k, patch) => {
      if (update.mock.calls.length <= failures) throw new Error('storage unavailable');
      return write(k, patch);
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    return { store: a, key, update };
  }

  it('tries again when the write fails — a record left running has its end shown again by the next start — and releases the job', async () => {
    const { store, key, update } = await withFlakyWrites(2);
    const marking = store.markEnded(key, 'completed');
    await vi.advanceTimersByTimeAsync(200 + 400);
    await marking;
    expect(update).toHaveBeenCalledTimes(3);
    vi.useRealTimers();
    const record = await store.get(key);
    expect(record?.status).toBe('completed');
    expect(record).not.toHaveProperty('reply');
    expect(await store.claimInterrupted()).toEqual([]);
  });

  it('gives up after 3 tries, throwing the last failure for the caller to log', async () => {
    const { store, key, update } = await withFlakyWrites(Infinity);
    const marking = expect(store.markEnded(key, 'failed')).rejects.toThrow('storage unavailable');
    await vi.advanceTimersByTimeAsync(200 + 400);
    await marking;
    expect(update).toHaveBeenCalledTimes(3);
    vi.useRealTimers();
    expect((await store.get(key))?.status).toBe('running');
  });
});
