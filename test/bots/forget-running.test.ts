import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileQuotaStore, type AuditPoster, type JobRunner, type Requester } from '../../bots/runner/index.js';
import { openBotState, type BotState } from '../../bots/state/index.js';
import { RedisLink, RedisQuotaStore, silentLogger, type QuotaStore } from '../../src/internal.js';
import { everythingKept } from '../helpers/everything-kept.js';
import { recordingPoster, recordingSink, useRunnerKit, withSpace } from '../helpers/runner-harness.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const redis = testRedis();
const kit = useRunnerKit();
const MARKER = 'QUIXOTIC';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** An audit poster keeping what it was asked to post. */
/** A gate every request of a client waits at once it is sent for, until `open()`: a job held mid-flight. */
function heldService() {
  let reached!: () => void;
  const sent = new Promise<void>((resolve) => (reached = resolve));
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { sent, open, clientOptions: { onRequest: () => ({ beforeSend: async () => (reached(), await opened) }) } };
}

/**
 * A process of the bots on one backend: its ledger (usage records with their prompts), its bots' state and a runner
 * keeping the history and the audit channels' posts there.
 */
async function processOn(backend: { dataDir: string; url: string | undefined; prefix: string }, clientOptions = {}, auditBatchMs = 10): Promise<{ runner: JobRunner; state: BotState; ledger: QuotaStore }> {
  const link = backend.url ? await RedisLink.open({ url: backend.url, prefix: backend.prefix }) : undefined;
  const ledger: QuotaStore = link ? new RedisQuotaStore({ redis: link.commands, prefix: backend.prefix }) : new FileQuotaStore({ dir: join(backend.dataDir, 'ledger') });
  const state = await openBotState({ dataDir: backend.dataDir, redis: link, leaseMs: 1000, ledger, logger: silentLogger() });
  closers.push(async () => {
    await state.close().catch(() => undefined);
    await ledger.close();
    await link?.close();
  });
  const { runner } = await kit.runner({
    store: ledger,
    clientOptions,
    partialImages: 0,
    recordPrompts: true,
    history: state,
    auditPosts: state.store.space(state.spaces.auditPosts),
    auditEnded: state.store.space(state.spaces.auditEnded),
    auditBatchMs,
  });
  return { runner, state, ledger };
}

const alice: Requester = { platform: 'discord', userId: 'alice', channelId: 'C1', scopeId: 'G1' };

/** Alice's job with the marker in its prompt, on a runner posting to its server's audit channel with `poster`. */
async function auditedJob(runner: JobRunner, poster: AuditPoster) {
  runner.audit.setPoster('discord', poster);
  await runner.policy.set({ ...alice, userId: 'admin', isAdmin: true }, 'auditChannel', { channelId: 'C-audit' });
  const sink = recordingSink();
  return runner.request(
    { kind: 'generate', prompt: `a ${MARKER} lighthouse`, options: { quality: 'low' }, requester: alice },
    { refuse: async () => undefined, accept: async () => ({ sink: sink.sink, historyKey: 'job-1' }), fail: async () => undefined },
  );
}

describe.each([
  { backend: 'file' as const, skip: undefined },
  { backend: 'redis' as const, skip: redis.skipReason },
])('forget while a job of the member runs, on the $backend backend', ({ backend, skip }) => {
  it.skipIf(skip)('records the job’s end with no prompt (its history entry, its audit post, its usage record): not a trace in any file or key', async () => {
    const dataDir = await kit.newDir();
    const prefix = uniquePrefix('forget-running');
    const url = backend === 'redis' ? requireRedisUrl(redis) : undefined;
    if (url) closers.push(() => deleteKeys(url, prefix));
    const held = heldService();
    const running = await processOn({ dataDir, url, prefix }, held.clientOptions);
    // With Redis, the member asks on another replica than the one running their job; the data folder has one process.
    const asked = url ? await processOn({ dataDir, url, prefix }) : running;
    const poster = recordingPoster();
    const handle = await auditedJob(running.runner, poster);
    await held.sent;
    // The job holds its prompt, and so does its reservation in the ledger.
    expect(await everythingKept(dataDir, url, prefix)).toContain(MARKER);

    await asked.runner.history!.forgetEverywhere(alice);
    held.open();
    expect((await handle!.done).type).toBe('completed');
    // The stop waits for the end being recorded, and posts what waits for the audit channel.
    await running.runner.shutdown({ graceMs: 0 });

    expect(await asked.runner.history!.mine(alice)).toMatchObject([{ key: 'job-1', status: 'completed', prompt: '' }]);
    expect(poster.posts.flatMap((post) => post.entries)).toMatchObject([{ type: 'job', userId: 'alice', status: 'completed', prompt: '', erased: true }]);
    // Its reservation, taken with the prompt before the forget, was settled after it: its usage record has none.
    const [usage, ...more] = await running.ledger.usage({ userKey: 'discord:alice' });
    expect([usage?.jobId, usage?.prompt, more]).toEqual([handle!.id, undefined, []]);
    expect(await everythingKept(dataDir, url, prefix)).not.toContain(MARKER);
  });
});

describe('forget on one replica while another replica’s audit entry of the member waits for its post', () => {
  it.skipIf(redis.skipReason)('posts that entry erased: the prompt reaches no audit post, history entry, file or key', async () => {
    const dataDir = await kit.newDir();
    const prefix = uniquePrefix('forget-waiting');
    const url = requireRedisUrl(redis);
    closers.push(() => deleteKeys(url, prefix));
    // Replica B's batch waits far longer than the test: its entry is posted by its stop's flush, after the forget.
    const b = await processOn({ dataDir, url, prefix }, {}, 3_600_000);
    const a = await processOn({ dataDir: await kit.newDir(), url, prefix });
    a.runner.audit.setPoster('discord', recordingPoster());
    const poster = recordingPoster();
    const handle = await auditedJob(b.runner, poster);
    expect((await handle!.done).type).toBe('completed');
    // B read no mark as the job ended: its history entry keeps the prompt, and its audit entry waits with it.
    await b.runner.history!.settled();
    await vi.waitFor(() => expect(b.runner.audit.waiting).toBe(1), { timeout: 15_000 });
    expect(await b.runner.history!.mine(alice)).toMatchObject([{ key: 'job-1', prompt: `a ${MARKER} lighthouse` }]);

    await a.runner.history!.forgetEverywhere(alice);
    await b.runner.shutdown({ graceMs: 0 });

    expect(poster.posts.flatMap((post) => post.entries)).toMatchObject([{ type: 'job', userId: 'alice', status: 'completed', prompt: '', erased: true }]);
    expect(await a.runner.history!.mine(alice)).toEqual([]);
    expect(await everythingKept(dataDir, url, prefix)).not.toContain(MARKER);
  });
});

describe('the member’s mark as a job ends', () => {
  it('is read four times where its prompt is written — once before and once after its history entry is kept, just before and just after its audit post — when nobody forgot; twice without an audit channel; never for an end with no prompt', async () => {
    const dataDir = await kit.newDir();
    const ledger = new FileQuotaStore({ dir: join(dataDir, 'ledger') });
    const state = await openBotState({ dataDir, ledger, logger: silentLogger() });
    closers.push(async () => (await state.close(), await ledger.close()));
    // The bots' state, counting the reads of the forgotten space.
    let reads = 0;
    const history = withSpace(state, state.spaces.forgotten, (marks) => ({ get: (key) => (reads++, marks.get(key)) }));
    const { runner } = await kit.runner({ store: ledger, partialImages: 0, history, auditPosts: state.store.space(state.spaces.auditPosts), auditBatchMs: 10 });
    // An end in a server without an audit channel: its history entry's two.
    await runner.recordEnded({ ...alice, scopeId: 'G2' }, { key: 'job-3', kind: 'generate', prompt: 'a quiet harbour', options: {}, private: false, acceptedAt: Date.now() }, { type: 'completed' });
    expect(reads).toBe(2);
    const poster = recordingPoster();
    const handle = await auditedJob(runner, poster);
    expect((await handle!.done).type).toBe('completed');
    // Then a swept end of a job that was running at its member's forget, which erased its stored prompt: nothing to read.
    const swept = runner.recordEnded(alice, { key: 'job-2', kind: 'generate', prompt: '', options: {}, private: false, acceptedAt: Date.now() }, { type: 'cancelled' });
    await runner.shutdown({ graceMs: 0 });
    await swept;
    expect(poster.posts.flatMap((post) => post.entries)).toEqual(expect.arrayContaining([expect.objectContaining({ prompt: `a ${MARKER} lighthouse` }), expect.objectContaining({ status: 'cancelled', prompt: '' })]));
    const mine = (await runner.history!.mine(alice)).map((e) => [e.key, e.prompt]).sort();
    expect(mine).toEqual([['job-1', `a ${MARKER} lighthouse`], ['job-2', ''], ['job-3', 'a quiet harbour']]);
    // Once everything settled: the audited job's four (the swept end's none).
    expect(reads).toBe(2 + 4);
  });
});
