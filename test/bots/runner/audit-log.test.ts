import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AUDIT_LIMITS, AuditChannelError, AuditLog, AuditPostLost, JobHistory, JobRefusedError, refusalFromPolicy, type AuditEntry, type AuditPost, type AuditPoster, type AuditRecord, type FinalUpdate, type Requester } from '../../../bots/runner/index.js';
import { openBotState, type Space } from '../../../bots/state/index.js';
import { StateRecordsUnreadableError } from '../../../bots/state/FileStateStore.js';
import { words } from '../../../bots/runner/words.js';
import { auditRetryWaitMs } from '../../../bots/runner/audit-log.js';
import { useTempDirs, withSpace } from '../../helpers/runner-harness.js';

const newDir = useTempDirs();

const member = (userId = 'U1', scopeId = 'G1'): Requester => ({ platform: 'discord', userId, channelId: 'C-art', scopeId });
const completed = { type: 'completed', jobId: 'j', images: [], formats: [], size: '1024x1024', quality: 'low', background: 'opaque', usage: undefined, cost: { totalUsd: 0.011 }, elapsedMs: 1 } as unknown as FinalUpdate;
const job = (prompt: string, isPrivate = false) => ({ kind: 'generate' as const, prompt, options: {}, private: isPrivate });

/**
 * A poster that keeps what it was asked to post and what the platform shows of each message; `failures` makes its
 * next posts throw, `editFailures` its next edits (a 429, as the platform answers a burst).
 */
/** How long the platform of a test's poster keeps a nonce (Discord's, as its poster says). */
const REPLAY_MS = 120_000;

class RecordingPoster implements AuditPoster {
  readonly posts: AuditPost[] = [];
  readonly edits: (AuditPost & { messageId: string })[] = [];
  /** The entries each message shows now, by its id. */
  readonly shown = new Map<string, AuditEntry[]>();
  failures = 0;
  editFailures = 0;
  failedEdits = 0;
  /** Messages whose edits always fail as the platform answers a burst (429), and messages deleted (their channel's posters answer `not_found`). */
  readonly dead = new Set<string>();
  readonly deleted = new Set<string>();
  #hold: { gate: Promise<void>; reached: () => void } | undefined;
  constructor(readonly maxEntries = 10) {}
  /** The next edit waits for `release` before it reaches the platform; `reached` resolves once it waits. */
  holdNextEdit() {
    let release!: () => void;
    let reached!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const waiting = new Promise<void>((resolve) => (reached = resolve));
    this.#hold = { gate, reached };
    return { release, reached: waiting };
  }
  async post(post: AuditPost) {
    if (this.failures > 0) {
      this.failures--;
      throw Object.assign(new Error('Missing Permissions'), { code: 50013 });
    }
    this.posts.push(post);
    this.shown.set(`m${this.posts.length}`, post.entries);
    return { messageId: `m${this.posts.length}` };
  }
  async edit(post: AuditPost & { messageId: string }) {
    const hold = this.#hold;
    this.#hold = undefined;
    if (hold) {
      hold.reached();
      await hold.gate;
    }
    if (this.deleted.has(post.messageId)) throw new AuditChannelError('not_found', 10008);
    if (this.dead.has(post.messageId)) {
      this.failedEdits++;
      throw Object.assign(new Error('You are being rate limited.'), { status: 429 });
    }
    if (this.editFailures > 0) {
      this.editFailures--;
      this.failedEdits++;
      throw Object.assign(new Error('You are being rate limited.'), { status: 429 });
    }
    this.edits.push(post);
    this.shown.set(post.messageId, post.entries);
  }
  async greet() {}
}

/** An `audit-posts` space in memory. */
function memorySpace(): NonNullable<ConstructorParameters<typeof AuditLog>[0]['posts']> & { records: Map<string, AuditRecord> } {
  const records = new Map<string, AuditRecord>();
  return {
    records,
    get: async (key) => records.get(key),
    put: async (key, value) => void records.set(key, value),
    update: async (key, change) => {
      const before = records.get(key);
      const after = change(before as never);
      if (after === undefined) records.delete(key);
      else records.set(key, after);
      return { before, after } as never;
    },
    delete: async (key) => void records.delete(key),
    entries: async function* () {
      for (const [key, value] of [...records]) yield { key, value };
    },
  };
}

describe('the audit log', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function logWith(poster: RecordingPoster, options: { maxQueued?: number; posts?: AuditLogOptionsPosts } = {}) {
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 2000, ...options });
    log.setPoster('discord', poster);
    return log;
  }

  it('collects the entries of a couple of seconds into one post, then paces the next one the same', async () => {
    const poster = new RecordingPoster(10);
    const log = logWith(poster);
    for (let i = 0; i < 12; i++) log.jobEnded(member(), job(`fox ${i}`), completed, 'https://discord.com/channels/G1/C-art/1');
    await vi.advanceTimersByTimeAsync(1999);
    expect(poster.posts).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(poster.posts).toHaveLength(1);
    expect(poster.posts[0]!.entries.map((e) => e.prompt)).toEqual(Array.from({ length: 10 }, (_, i) => `fox ${i}`));
    expect(poster.posts[0]).toMatchObject({ channelId: 'C-audit', scopeId: 'G1', skipped: 0 });
    // The two left wait one more interval: never a post per job.
    await vi.advanceTimersByTimeAsync(1999);
    expect(poster.posts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(poster.posts.map((p) => p.entries.length)).toEqual([10, 2]);
  });

  it('keeps at most maxQueued entries per channel: the oldest go, and the next post says how many', async () => {
    const poster = new RecordingPoster(10);
    const log = logWith(poster, { maxQueued: 5 });
    for (let i = 0; i < 8; i++) log.jobEnded(member(), job(`p${i}`), completed);
    await vi.advanceTimersByTimeAsync(2000);
    expect(poster.posts).toHaveLength(1);
    expect(poster.posts[0]!.skipped).toBe(3);
    expect(poster.posts[0]!.entries.map((e) => e.prompt)).toEqual(['p3', 'p4', 'p5', 'p6', 'p7']);
  });

  it('posts nothing more to a channel the admins turned off or replaced while its entries waited', async () => {
    const poster = new RecordingPoster(10);
    let channel: { channelId: string } | undefined = { channelId: 'C-audit' };
    const log = new AuditLog({ channelOf: async () => channel, batchMs: 2000 });
    log.setPoster('discord', poster);
    log.jobEnded(member(), job('before off'), completed);
    await vi.advanceTimersByTimeAsync(1000);
    channel = undefined;
    await vi.advanceTimersByTimeAsync(5000);
    expect(poster.posts).toHaveLength(0);
    channel = { channelId: 'C-old' };
    log.jobEnded(member(), job('before the move'), completed);
    await vi.advanceTimersByTimeAsync(0);
    channel = { channelId: 'C-new' };
    log.jobEnded(member(), job('after the move'), completed);
    await log.flush();
    expect(poster.posts.map((p) => [p.channelId, p.entries.map((e) => e.prompt)])).toEqual([['C-new', ['after the move']]]);
  });

  it('records a private job as private; a refusal by a rule or a budget, not a typo', async () => {
    const poster = new RecordingPoster();
    const log = logWith(poster);
    log.jobEnded(member(), job('a secret garden', true), completed);
    log.refused(member(), job('a gory scene'), refusalFromPolicy('blocked_word', { platform: 'discord', word: 'gory' }));
    log.refused(member(), job('a fox'), new JobRefusedError('budget_user_daily', words('refusal.other_limit', { code: 'budget_user_daily' })));
    log.refused(member(), job('a fox'), new JobRefusedError('validation_error', words('refusal.restarting')));
    log.refused(member(), job('a fox'), new JobRefusedError('queue_full', words('refusal.restarting')));
    await vi.advanceTimersByTimeAsync(2000);
    const [privateJob, blocked, budget, ...others] = poster.posts[0]!.entries;
    expect(privateJob).toMatchObject({ type: 'job', private: true, costUsd: 0.011, status: 'completed' });
    expect(privateJob!.link).toBeUndefined();
    expect(blocked).toMatchObject({ type: 'refusal', status: 'blocked_word', word: 'gory', prompt: 'a gory scene' });
    expect(budget).toMatchObject({ type: 'refusal', status: 'budget_user_daily' });
    expect(others).toEqual([]);
  });

  it('keeps a link only to a message everyone can open: none for a private job nor one only its member sees, whatever link its caller gives', async () => {
    const poster = new RecordingPoster();
    const log = logWith(poster);
    const link = 'https://slack.com/archives/D1/p1';
    log.jobEnded(member(), job('a secret garden', true), completed, link);
    log.jobEnded(member(), { ...job('asked in a DM'), seenBy: 'member' }, completed, link);
    log.jobEnded(member(), { ...job('a public kite'), seenBy: 'everyone' }, completed, link);
    await vi.advanceTimersByTimeAsync(2000);
    expect(poster.posts[0]!.entries.map((e) => [e.prompt, e.link])).toEqual([
      ['a secret garden', undefined],
      ['asked in a DM', undefined],
      ['a public kite', link],
    ]);
  });

  it('posts nothing for a person’s own scope (DMs) nor for a scope without an audit channel', async () => {
    const poster = new RecordingPoster();
    const log = new AuditLog({ channelOf: async (s) => (s.scopeId === 'G-audited' ? { channelId: 'C-audit' } : undefined), batchMs: 2000 });
    log.setPoster('discord', poster);
    log.jobEnded(member('U1', 'dm:U1'), job('mine'), completed);
    log.jobEnded(member('U1', 'G-quiet'), job('quiet'), completed);
    log.jobEnded(member('U1', 'G-audited'), job('seen'), completed);
    await vi.advanceTimersByTimeAsync(2000);
    expect(poster.posts.flatMap((p) => p.entries.map((e) => e.prompt))).toEqual(['seen']);
  });

  it('keeps the entries of a failed post for the next try, a minute later then twice as long each time, and tells the admins after three failures in a row', async () => {
    const poster = new RecordingPoster();
    const log = logWith(poster);
    poster.failures = 3;
    let posted = false;
    void log.jobEnded(member(), job('first'), completed).then(() => (posted = true));
    await vi.advanceTimersByTimeAsync(2000);
    expect(poster.posts).toHaveLength(0);
    // Failed at 2 s; tried again 1, then 2 minutes later (failing both), an entry joining meanwhile.
    log.jobEnded(member(), job('second'), completed);
    for (const [wait, failures] of [[AUDIT_LIMITS.retryMs, 2], [2 * AUDIT_LIMITS.retryMs, 3]] as const) {
      await vi.advanceTimersByTimeAsync(wait - 1);
      expect(poster.failures).toBe(4 - failures);
      await vi.advanceTimersByTimeAsync(1);
      expect(poster.failures).toBe(3 - failures);
    }
    expect(log.trouble(member())).toEqual({ channelId: 'C-audit', failures: 3, code: '50013', at: expect.any(Number) });
    expect(posted).toBe(false);
    // The next try, 4 minutes later, succeeds: both entries in one post, oldest first; then the usual pace.
    await vi.advanceTimersByTimeAsync(4 * AUDIT_LIMITS.retryMs);
    expect(poster.posts.map((p) => p.entries.map((e) => e.prompt))).toEqual([['first', 'second']]);
    expect(posted).toBe(true);
    expect(log.trouble(member())).toBeUndefined();
    log.jobEnded(member(), job('third'), completed);
    await vi.advanceTimersByTimeAsync(2000);
    expect(poster.posts.map((p) => p.entries.map((e) => e.prompt))).toEqual([['first', 'second'], ['third']]);
  });

  it('never takes as posted the end of a job whose post failed, not even when the bot stops then: the next start enters it again', async () => {
    const ended = new Map<string, true>();
    const endedSpace = { get: async (key: string) => ended.get(key), put: async (key: string) => void ended.set(key, true) };
    const poster = new RecordingPoster();
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 2000, ended: endedSpace });
    log.setPoster('discord', poster);
    poster.failures = 2;
    let settled = false;
    void log.jobEnded(member(), { key: 'job-1', ...job('a lighthouse') }, completed).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(2000);
    await log.flush();
    expect(poster.posts).toHaveLength(0);
    expect(settled).toBe(false);
    expect(ended.size).toBe(0);
    // The next start (the sweep records the end again): posted, then kept as posted.
    const next = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 2000, ended: endedSpace });
    next.setPoster('discord', poster);
    const entered = next.jobEnded(member(), { key: 'job-1', ...job('a lighthouse') }, completed);
    await vi.advanceTimersByTimeAsync(2000);
    await entered;
    expect(poster.posts.map((p) => p.entries.map((e) => e.prompt))).toEqual([['a lighthouse']]);
    expect(ended.size).toBe(1);
  });

  it('posts a failed first post once its retry succeeds, once: its job end resolves then and is kept as posted, never posted again', async () => {
    const ended = new Map<string, true>();
    const poster = new RecordingPoster();
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 2000, postRetryMs: 5000, ended: { get: async (key) => ended.get(key), put: async (key) => void ended.set(key, true) } });
    log.setPoster('discord', poster);
    poster.failures = 1;
    let posted = false;
    void log.jobEnded(member(), { key: 'job-1', ...job('a lighthouse') }, completed).then(() => (posted = true));
    await vi.advanceTimersByTimeAsync(2000);
    expect([poster.posts.length, posted, ended.size]).toEqual([0, false, 0]);
    // The retry waits the wait given (a minute when none is), then posts it.
    await vi.advanceTimersByTimeAsync(4999);
    expect(poster.posts).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(poster.posts.map((p) => p.entries.map((e) => e.prompt))).toEqual([['a lighthouse']]);
    expect([posted, ended.size]).toEqual([true, 1]);
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMaxMs);
    await log.flush();
    expect(poster.posts).toHaveLength(1);
  });

  it('drops the entries of a channel that is gone (the poster answers not_found): never tried again, counted for the admins', async () => {
    const poster = new RecordingPoster();
    let tries = 0;
    poster.post = async () => {
      tries++;
      throw new AuditChannelError('not_found', 10003);
    };
    const log = logWith(poster);
    let settled = false;
    void log.jobEnded(member(), job('a lighthouse'), completed).then(() => (settled = true));
    log.jobEnded(member(), job('a harbour'), completed);
    await vi.advanceTimersByTimeAsync(2000);
    expect([tries, settled, log.waiting]).toEqual([1, true, 0]);
    await vi.advanceTimersByTimeAsync(10 * AUDIT_LIMITS.retryMaxMs);
    await log.flush();
    expect(tries).toBe(1);
    // A later entry is tried once too (the admins may have brought the channel back), then dropped the same way.
    log.jobEnded(member(), job('a pier'), completed);
    await log.flush();
    expect(tries).toBe(2);
  });

  it('tries a failing channel once at a stop, never again in a loop: its entries, a refusal among them, stay waiting and are counted', async () => {
    const poster = new RecordingPoster();
    let tries = 0;
    poster.post = async () => {
      tries++;
      throw Object.assign(new Error('Missing Access'), { code: 50001 });
    };
    const log = logWith(poster);
    log.jobEnded(member(), job('a lighthouse'), completed);
    await log.flush();
    expect(tries).toBe(1);
    // Entries arriving after the flush (the last jobs' ends, a refusal): not tried again while the channel fails.
    log.jobEnded(member(), job('a harbour'), completed);
    log.refused(member(), job('gore'), refusalFromPolicy('blocked_word', { platform: 'discord', word: 'gore' }));
    await vi.advanceTimersByTimeAsync(5000);
    expect(tries).toBe(1);
    expect([log.waiting, log.waitingRefusals]).toEqual([3, 1]);
  });

  it('sends a post whose answer was lost again only as it was, with its nonce: the platform’s one message is kept, never a second', async () => {
    const poster = new RecordingPoster();
    const made = new Map<string, { messageId: string; entries: AuditEntry[]; skipped: number }>();
    const sent: AuditPost[] = [];
    let lose = 1;
    Object.assign(poster, { replayMs: REPLAY_MS });
    const sentAt: number[] = [];
    poster.post = async (p: AuditPost) => {
      sent.push(p);
      sentAt.push(Date.now());
      // The platform makes the message of a nonce once; the first answer is lost on its way back.
      const message = made.get(p.nonce!) ?? { messageId: `m${made.size + 1}`, entries: p.entries, skipped: p.skipped };
      made.set(p.nonce!, message);
      if (lose-- > 0) throw new AuditPostLost('timeout');
      return { messageId: message.messageId };
    };
    const space = memorySpace();
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 2000, maxQueued: 1, posts: space });
    log.setPoster('discord', poster);
    let posted = false;
    log.jobEnded(member(), job('dropped'), completed);
    void log.jobEnded(member(), job('a lighthouse'), completed).then(() => (posted = true));
    await vi.advanceTimersByTimeAsync(2000);
    log.jobEnded(member(), job('a harbour'), completed);
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMs);
    expect(made.size).toBe(1);
    // Sent as it was: the same message and nonce, with how long ago it was first sent (where the platform's window starts).
    expect(sent[1]).toEqual({ ...sent[0], sentMsAgo: sentAt[1]! - sentAt[0]! });
    expect(sent[0]).toMatchObject({ skipped: 1, nonce: expect.stringMatching(/^[0-9a-f]{24}$/) });
    expect(posted).toBe(true);
    expect([...space.records.values()].map((r) => [r.messageId, r.entries.map((e) => e.prompt)])).toEqual([['m1', ['a lighthouse']]]);
    // The entry that came meanwhile goes in a message of its own (a new nonce).
    await vi.advanceTimersByTimeAsync(2000);
    expect([...made.values()].map((m) => m.entries.map((e) => e.prompt))).toEqual([['a lighthouse'], ['a harbour']]);
    await log.flush();
  });

  it('hands a lost post’s replay how long ago it was first sent, by the audit log’s own clock, where the platform’s window for its nonce starts (no send of it starts after that window)', async () => {
    const poster = new RecordingPoster();
    Object.assign(poster, { replayMs: REPLAY_MS });
    const sent: AuditPost[] = [];
    const sentAt: number[] = [];
    // The first send is lost after 10 s (the platform failed on each of its client's tries).
    poster.post = async (p: AuditPost) => {
      sent.push(p);
      sentAt.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      throw new AuditPostLost('timeout');
    };
    // The audit log's clock is not the poster's (an hour behind): only its differences count.
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 2000, now: () => Date.now() - 3_600_000 });
    log.setPoster('discord', poster);
    void log.jobEnded(member(), job('a lighthouse'), completed);
    await vi.advanceTimersByTimeAsync(2000 + 10_000 + AUDIT_LIMITS.retryMs);
    expect(sent.map((p) => p.sentMsAgo)).toEqual([undefined, sentAt[1]! - sentAt[0]!]);
    expect(sentAt[1]! - sentAt[0]!).toBeGreaterThan(10_000);
  });

  it('counts a lost post’s replay window from its first send, not from when its failure was seen: a send the client kept trying for long is let go of', async () => {
    const poster = new RecordingPoster();
    const sent: AuditPost[] = [];
    Object.assign(poster, { replayMs: REPLAY_MS });
    // The platform's client keeps trying for 100 s (discord.js: three 15 s timeouts, and its waits), then the answer is lost.
    poster.post = async (p: AuditPost) => {
      sent.push(p);
      await new Promise((resolve) => setTimeout(resolve, 100_000));
      throw new AuditPostLost('timeout');
    };
    const said: string[] = [];
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 2000, logger: { debug() {}, info() {}, warn: (_: unknown, msg: string) => void said.push(msg), error() {} } });
    log.setPoster('discord', poster);
    let settled = false;
    void log.jobEnded(member(), job('a lighthouse'), completed).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(2000 + 100_000);
    expect(sent).toHaveLength(1);
    // The channel's next try comes a minute after the failure: 160 s after the first send, past the platform's window.
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMs);
    expect(100_000 + AUDIT_LIMITS.retryMs).toBeGreaterThan(REPLAY_MS);
    expect([sent.length, settled, log.waiting]).toEqual([1, true, 0]);
    expect(said.at(-1)).toBe('an audit post’s answer was lost: it may be in the channel; not sent again');
  });

  it('lets go of a post whose answer was lost where the platform makes a new message of each try: not sent again, logged', async () => {
    const poster = new RecordingPoster();
    let tries = 0;
    poster.post = async () => {
      tries++;
      throw new AuditPostLost('request_error');
    };
    const said: string[] = [];
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 2000, logger: { debug() {}, info() {}, warn: (_: unknown, msg: string) => void said.push(msg), error() {} } });
    log.setPoster('slack', poster);
    const slackMember: Requester = { platform: 'slack', userId: 'U1', channelId: 'C-art', scopeId: 'T1' };
    let settled = false;
    void log.jobEnded(slackMember, job('a lighthouse'), completed).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(2000);
    await vi.advanceTimersByTimeAsync(10 * AUDIT_LIMITS.retryMs);
    expect([tries, settled, log.waiting]).toEqual([1, true, 0]);
    expect(said).toEqual(['an audit post’s answer was lost: it may be in the channel; not sent again']);
  });

  it('does not say the skipped note again when the platform showed it though it refused the entries (Discord without Embed Links)', async () => {
    const poster = new RecordingPoster();
    const post = poster.post.bind(poster);
    const notes: number[] = [];
    let refuse = 1;
    poster.post = async (p: AuditPost) => {
      notes.push(p.skipped);
      if (refuse-- > 0) throw new AuditChannelError('no_permission', 'embed_links', p.skipped > 0);
      return post(p);
    };
    const log = logWith(poster, { maxQueued: 1 });
    log.jobEnded(member(), job('dropped'), completed);
    log.jobEnded(member(), job('a lighthouse'), completed);
    await vi.advanceTimersByTimeAsync(2000 + AUDIT_LIMITS.retryMs);
    expect(notes).toEqual([1, 0]);
    expect(poster.posts.map((p) => p.entries.map((e) => e.prompt))).toEqual([['a lighthouse']]);
  });

  it('posts what waits at once when flushed (the bot stops)', async () => {
    const poster = new RecordingPoster(2);
    const log = logWith(poster);
    for (let i = 0; i < 5; i++) log.jobEnded(member(), job(`last ${i}`), completed);
    await log.flush();
    expect(poster.posts.map((p) => p.entries.length)).toEqual([2, 2, 1]);
  });
});

type AuditLogOptionsPosts = ConstructorParameters<typeof AuditLog>[0]['posts'];

describe('forget in the audit channel', () => {
  it('writes the member’s posts again with the erased marker, and leaves no prompt of theirs in the audit-posts space', async () => {
    const dataDir = await newDir();
    const state = await openBotState({ dataDir, logger: { debug() {}, info() {}, warn() {}, error() {} } });
    const space = state.store.space<AuditRecord>(state.spaces.auditPosts);
    const poster = new RecordingPoster();
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, posts: space });
    log.setPoster('discord', poster);
    log.jobEnded(member('U-ada'), job('zanzibarwhisper lighthouse'), completed);
    log.jobEnded(member('U-bob'), job('a public kite'), completed);
    await log.flush();
    log.jobEnded(member('U-ada'), job('zanzibarwhisper alone'), completed);
    await log.flush();
    expect(poster.posts).toHaveLength(2);

    expect(await log.forget('discord:U-ada')).toEqual({ edited: 2, pending: 0 });
    // Each post written again: Ada's prompts replaced by the marker, Bob's kept.
    expect(poster.edits.map((e) => e.messageId).sort()).toEqual(['m1', 'm2']);
    const shared = poster.edits.find((e) => e.messageId === 'm1')!;
    expect(shared.entries.map((e) => [e.userId, e.prompt, e.erased ?? false])).toEqual([
      ['U-ada', '', true],
      ['U-bob', 'a public kite', false],
    ]);
    // Nothing of the word stays in the space: not in a value, not in a file.
    const kept: AuditRecord[] = [];
    for await (const { value } of space.entries()) kept.push(value);
    expect(JSON.stringify(kept)).not.toContain('zanzibarwhisper');
    expect(kept).toHaveLength(1);
    const { readdir, readFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const files = (await readdir(join(dataDir, 'audit'), { recursive: true, withFileTypes: true })).filter((f) => f.isFile());
    for (const file of files) expect(await readFile(join(file.parentPath, file.name), 'utf8')).not.toContain('zanzibarwhisper');
    await state.close();
  });

  it('erases the posts it found when a record of another cannot be read, then fails saying how many could not', async () => {
    const space = memorySpace();
    const poster = new RecordingPoster();
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, posts: space });
    log.setPoster('discord', poster);
    log.jobEnded(member('U-ada'), job('zanzibarwhisper lighthouse'), completed);
    await log.flush();
    log.jobEnded(member('U-ada'), job('zanzibarwhisper alone'), completed);
    await log.flush();
    // The data folder's listing: every readable record, then the error naming those it could not read.
    const listed = space.entries;
    space.entries = async function* () {
      yield* listed();
      throw new StateRecordsUnreadableError('audit-posts', '/data/audit/posts', ['/data/audit/posts/p9.json'], Object.assign(new Error('permission denied'), { code: 'EACCES' }));
    };
    await expect(log.forget('discord:U-ada')).rejects.toMatchObject({ code: 'state_records_unreadable', message: expect.stringMatching(/^1 audit-posts record\(s\) in \/data\/audit\/posts could not be read/) });
    expect(poster.edits.map((e) => e.messageId).sort()).toEqual(['m1', 'm2']);
    expect(JSON.stringify([...space.records.values()])).not.toContain('zanzibarwhisper');
  });

  it('logs why an edit failed as a lost post’s answer says it: `timeout` for an abort, the network code of a connection cut', async () => {
    const logged: unknown[] = [];
    const keep = (fields: { code?: unknown }, msg: string) => void (msg.includes('could not erase') && logged.push(fields.code));
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, posts: memorySpace(), logger: { debug: keep, info() {}, warn: keep, error() {} } });
    const poster = new RecordingPoster();
    log.setPoster('discord', poster);
    log.jobEnded(member('U-ada'), job('a lighthouse'), completed);
    await log.flush();
    const cut = new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
    // The abort discord.js's REST throws when it gives up on a request: a DOMException, whose `code` is 20.
    const failures: Error[] = [new DOMException('This operation was aborted', 'AbortError'), cut];
    poster.edit = async () => Promise.reject(failures.shift());
    expect(await log.forget('discord:U-ada')).toEqual({ edited: 0, pending: 1 });
    expect(await log.forget('discord:U-ada')).toEqual({ edited: 0, pending: 1 });
    expect(logged).toEqual(['timeout', 'ECONNRESET']);
    await log.flush();
  });

  it('erases an entry still on its way to its queue (its audit channel being read) when the member forgets', async () => {
    const poster = new RecordingPoster();
    // The first read of the audit channel waits for the test; later ones answer at once.
    let answer!: (channel: { channelId: string }) => void;
    const read = new Promise<{ channelId: string }>((resolve) => (answer = resolve));
    const log = new AuditLog({ channelOf: () => read, batchMs: 10 });
    log.setPoster('discord', poster);
    log.jobEnded(member('U-ada'), job('quillowmist harbour'), completed);
    const forgetting = log.forget('discord:U-ada');
    answer({ channelId: 'C-audit' });
    await forgetting;
    await log.flush();
    expect(poster.posts.flatMap((p) => p.entries).map((e) => [e.userId, e.prompt, e.erased])).toEqual([['U-ada', '', true]]);
  });

  it('erases a post whose member forgot on another replica after its entries were read, before it was kept (that forget listed the posts without it)', async () => {
    const dataDir = await newDir();
    const state = await openBotState({ dataDir, logger: { debug() {}, info() {}, warn() {}, error() {} } });
    const space = state.store.space<AuditRecord>(state.spaces.auditPosts);
    const elsewhere = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), posts: space });
    elsewhere.setPoster('discord', new RecordingPoster());
    const history = new JobHistory({ state, forgetAudit: (userKey) => elsewhere.forget(userKey) });
    const ada = member('U-ada');
    // The forget is asked on the other replica while this one's post is made and not yet kept.
    const posts = { get: space.get.bind(space), put: async (key: string, record: AuditRecord) => (await history.forgetEverywhere(ada), space.put(key, record)), update: space.update.bind(space), delete: space.delete.bind(space), entries: space.entries.bind(space) };
    const poster = new RecordingPoster();
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, posts, forgotten: { forgotten: (who, at) => history.forgotten(who, at) } });
    log.setPoster('discord', poster);
    log.jobEnded(ada, { ...job('zanzibarwhisper lighthouse'), acceptedAt: Date.now() }, completed);
    log.jobEnded(member('U-bob'), job('a public kite'), completed);
    await log.flush();
    expect(poster.posts.flatMap((p) => p.entries).map((e) => e.prompt)).toEqual(['zanzibarwhisper lighthouse', 'a public kite']);
    expect(poster.edits.map((e) => [e.messageId, e.entries.map((x) => [x.userId, x.prompt, x.erased ?? false])])).toEqual([
      ['m1', [['U-ada', '', true], ['U-bob', 'a public kite', false]]],
    ]);
    const kept: AuditRecord[] = [];
    for await (const { value } of space.entries()) kept.push(value);
    expect(JSON.stringify(kept)).not.toContain('zanzibarwhisper');
    expect(kept).toHaveLength(1);
    await state.close();
  });

  it('writes a post again as its record is now: another member’s entry erased on another replica since this forget listed it stays erased', async () => {
    const dataDir = await newDir();
    const state = await openBotState({ dataDir, logger: { debug() {}, info() {}, warn() {}, error() {} } });
    const space = state.store.space<AuditRecord>(state.spaces.auditPosts);
    const poster = new RecordingPoster();
    // Bob forgets on the other replica just after this replica's forget listed the posts (the one post holding both).
    const elsewhere = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), posts: space });
    elsewhere.setPoster('discord', poster);
    const posts = {
      get: space.get.bind(space),
      put: space.put.bind(space),
      update: space.update.bind(space),
      delete: space.delete.bind(space),
      entries: async function* () {
        yield* space.entries();
        await elsewhere.forget('discord:U-bob');
      },
    };
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, posts });
    log.setPoster('discord', poster);
    log.jobEnded(member('U-ada'), job('zanzibarwhisper lighthouse'), completed);
    log.jobEnded(member('U-bob'), job('quillowmist kite'), completed);
    await log.flush();

    expect(await log.forget('discord:U-ada')).toEqual({ edited: 1, pending: 0 });
    // Bob's edit, then Ada's: the last one the channel shows keeps neither prompt.
    expect(poster.edits.map((e) => e.entries.map((x) => [x.userId, x.prompt, x.erased ?? false]))).toEqual([
      [['U-ada', 'zanzibarwhisper lighthouse', false], ['U-bob', '', true]],
      [['U-ada', '', true], ['U-bob', '', true]],
    ]);
    const kept: AuditRecord[] = [];
    for await (const { value } of space.entries()) kept.push(value);
    expect(kept).toEqual([]);
    await state.close();
  });

  it('asks the member’s mark once a member for a post while nobody forgot, before and after it; each entry once the mark says erased', async () => {
    const poster = new RecordingPoster();
    const asked: string[] = [];
    const mark: { at?: number } = {};
    const forgotten = async (who: Requester, madeAt: number) => (asked.push(who.userId), mark.at !== undefined && madeAt <= mark.at);
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, forgotten: { forgotten } });
    log.setPoster('discord', poster);
    for (let i = 0; i < 5; i++) log.jobEnded(member('U-ada'), { ...job(`ada ${i}`), acceptedAt: 1000 + i }, completed);
    for (let i = 0; i < 2; i++) log.jobEnded(member('U-bob'), { ...job(`bob ${i}`), acceptedAt: 1000 + i }, completed);
    await log.flush();
    // Two members, read before the post and once it was kept: 4 reads, not one per entry (14).
    expect(asked.sort()).toEqual(['U-ada', 'U-ada', 'U-bob', 'U-bob']);

    // Ada forgot after her first three entries were made: those three are posted erased, the two later keep theirs.
    mark.at = 1002;
    asked.length = 0;
    for (let i = 0; i < 5; i++) log.jobEnded(member('U-ada'), { ...job(`ada ${i}`), acceptedAt: 1000 + i }, completed);
    await log.flush();
    expect(poster.posts[1]!.entries.map((e) => e.prompt)).toEqual(['', '', '', 'ada 3', 'ada 4']);
    // Before the post: her oldest entry says erased, so each other is asked (5); after it, her oldest left with a prompt (1).
    expect(asked).toHaveLength(5 + 1);
  });

  it('posts erased an entry whose member’s mark cannot be read (the history’s rule, logged there once)', async () => {
    const state = await openBotState({ dataDir: await newDir(), logger: { debug() {}, info() {}, warn() {}, error() {} } });
    const warned: string[] = [];
    const unreadable = withSpace(state, state.spaces.forgotten, () => ({ get: () => Promise.reject(new Error('storage unavailable')) }));
    const history = new JobHistory({ state: unreadable, logger: { debug() {}, info() {}, warn: (_: unknown, msg?: string) => void warned.push(String(msg)), error() {} } });
    const poster = new RecordingPoster();
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, forgotten: history });
    log.setPoster('discord', poster);
    log.jobEnded(member('U-ada'), { ...job('zanzibarwhisper lighthouse'), acceptedAt: Date.now() }, completed);
    await log.flush();
    expect(poster.posts.flatMap((p) => p.entries).map((e) => [e.prompt, e.erased ?? false])).toEqual([['', true]]);
    expect(warned).toEqual(['could not read whether a member erased their prompts; a job’s end is recorded without its prompt']);
    await state.close();
  });

  it('posts erased a refusal decided within a minute after its member’s forget (timed when it was decided), and with its prompt one decided later', async () => {
    const dataDir = await newDir();
    const state = await openBotState({ dataDir, logger: { debug() {}, info() {}, warn() {}, error() {} } });
    let now = 1_000_000;
    const history = new JobHistory({ state, now: () => now });
    const poster = new RecordingPoster();
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, now: () => now, forgotten: { forgotten: (who, at) => history.forgotten(who, at) } });
    log.setPoster('discord', poster);
    const ada = member('U-ada');
    await history.forgetEverywhere(ada);
    now += 59_000;
    log.refused(ada, job('a gory scene'), refusalFromPolicy('blocked_word', { platform: 'discord', word: 'gory' }));
    await log.flush();
    now += 2_000;
    log.refused(ada, job('a gory fox'), refusalFromPolicy('blocked_word', { platform: 'discord', word: 'gory' }));
    await log.flush();
    expect(poster.posts.flatMap((p) => p.entries).map((e) => [e.prompt, e.erased ?? false, e.word])).toEqual([
      ['', true, undefined],
      ['a gory fox', false, 'gory'],
    ]);
    await state.close();
  });

  /** A poster whose first post waits, once it was asked (`reached`), until `release()`. */
  function heldPoster() {
    const poster = new RecordingPoster();
    let reach!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const post = poster.post.bind(poster);
    poster.post = async (p: AuditPost) => (reach(), await released, post(p));
    return { poster, reached, release };
  }

  /** One process: its audit log, asking the member's mark of its history, whose forget reaches that log. */
  async function oneProcess(posts: (space: Space<AuditRecord>) => AuditLogOptionsPosts = (space) => space) {
    const dataDir = await newDir();
    const state = await openBotState({ dataDir, logger: { debug() {}, info() {}, warn() {}, error() {} } });
    const space = state.store.space<AuditRecord>(state.spaces.auditPosts);
    const held = heldPoster();
    const log: AuditLog = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, posts: posts(space), forgotten: { forgotten: (who, at) => history.forgotten(who, at) } });
    // The member's mark is written when the forget reaches the audit log.
    let marked!: () => void;
    const forgetting = new Promise<void>((resolve) => (marked = resolve));
    const history = new JobHistory({ state, forgetAudit: (userKey) => (marked(), log.forget(userKey)) });
    log.setPoster('discord', held.poster);
    const kept = async () => {
      const records: AuditRecord[] = [];
      for await (const { value } of space.entries()) records.push(value);
      return records;
    };
    /** The member's job ends, and they forget while its post is under way (its entry read before their mark). */
    const forgetWhilePosting = async (who: Requester) => {
      log.jobEnded(who, { ...job('zanzibarwhisper lighthouse'), acceptedAt: Date.now() }, completed);
      await held.reached;
      const forgot = history.forgetEverywhere(who);
      await forgetting;
      held.release();
      return forgot;
    };
    return { state, log, kept, forgetWhilePosting, poster: held.poster };
  }

  /** An audit-posts space kept in memory (for fake timers). */

  it('answers a member’s forget without waiting for another server’s audit post under way (hung on its platform)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const held = heldPoster();
      const log = new AuditLog({ channelOf: async (scope) => (scope.scopeId === 'G2' ? { channelId: 'C-audit' } : undefined), batchMs: 10, posts: memorySpace() });
      log.setPoster('discord', held.poster);
      log.jobEnded(member('U-bo', 'G2'), job('a zebra'), completed);
      await vi.advanceTimersByTimeAsync(10);
      await held.reached;
      let answered: unknown;
      void log.forget('discord:U-ada').then((done) => (answered = done));
      await vi.advanceTimersByTimeAsync(0);
      expect(answered).toEqual({ edited: 0, pending: 0 });
      held.release();
      await log.flush();
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers a member’s forget within a moment while a post of theirs hangs, counting it still to edit: it is edited without their prompt once it lands', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const held = heldPoster();
      const space = memorySpace();
      const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, posts: space, forgetWaitMs: 1500 });
      log.setPoster('discord', held.poster);
      log.jobEnded(member('U-ada'), job('zanzibarwhisper lighthouse'), completed);
      log.jobEnded(member('U-bo'), job('a plain tree'), completed);
      await vi.advanceTimersByTimeAsync(10);
      await held.reached;
      let answered: unknown;
      void log.forget('discord:U-ada').then((done) => (answered = done));
      await vi.advanceTimersByTimeAsync(1499);
      expect(answered).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(answered).toEqual({ edited: 0, pending: 1 });
      held.release();
      await log.flush();
      // Posted as it was sent (before the forget), then written again at once without Ada's prompt; Bo's stays.
      expect(held.poster.edits.map((e) => [e.messageId, e.entries.map((x) => [x.prompt, x.erased ?? false])])).toEqual([['m1', [['', true], ['a plain tree', false]]]]);
      expect(JSON.stringify([...space.records.values()])).not.toContain('zanzibarwhisper');
    } finally {
      vi.useRealTimers();
    }
  });

  it('counts a post handed over at the limit once: edited when it landed before the posts were listed, not at all when it failed then', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      for (const fails of [false, true]) {
        const held = heldPoster();
        if (fails) held.poster.failures = 1;
        const space = memorySpace();
        // The listing of the posts kept waits until the post handed over has landed.
        let list!: () => void;
        const listing = new Promise<void>((resolve) => (list = resolve));
        const entries = space.entries;
        space.entries = async function* () {
          await listing;
          yield* entries();
        };
        const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, posts: space, forgetWaitMs: 1500 });
        log.setPoster('discord', held.poster);
        log.jobEnded(member('U-ada'), job('zanzibarwhisper lighthouse'), completed);
        await vi.advanceTimersByTimeAsync(10);
        await held.reached;
        const answer = log.forget('discord:U-ada');
        await vi.advanceTimersByTimeAsync(1500);
        held.release();
        await vi.advanceTimersByTimeAsync(0);
        list();
        expect(await answer).toEqual(fails ? { edited: 0, pending: 0 } : { edited: 1, pending: 0 });
        await log.flush();
        expect(JSON.stringify([...space.records.values()])).not.toContain('zanzibarwhisper');
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('counts a post made while the member’s forget runs in this process: the forget waits for it, finds it kept and erases it, once', async () => {
    const { state, log, kept, forgetWhilePosting, poster } = await oneProcess();
    // The forget here must wait for the post under way and count it.
    expect((await forgetWhilePosting(member('U-ada'))).auditPosts).toBe(1);
    await log.flush();
    expect(poster.posts.flatMap((p) => p.entries).map((e) => e.prompt)).toEqual(['zanzibarwhisper lighthouse']);
    expect(poster.edits.map((e) => [e.messageId, e.entries.map((x) => [x.prompt, x.erased ?? false])])).toEqual([['m1', [['', true]]]]);
    expect(await kept()).toEqual([]);
    await state.close();
  });

  it('erases a post made while the member’s forget runs in this process when its record could not be kept (the forget cannot find it)', async () => {
    const failingPut = (space: Space<AuditRecord>) => ({
      get: space.get.bind(space),
      put: async () => Promise.reject(Object.assign(new Error('disk full'), { code: 'ENOSPC' })),
      update: space.update.bind(space),
      delete: space.delete.bind(space),
      entries: space.entries.bind(space),
    });
    const { state, log, forgetWhilePosting, poster } = await oneProcess(failingPut);
    await forgetWhilePosting(member('U-ada'));
    await log.flush();
    expect(poster.edits.map((e) => [e.messageId, e.entries.map((x) => [x.prompt, x.erased ?? false])])).toEqual([['m1', [['', true]]]]);
    await state.close();
  });

  it('keeps the largest post a surface makes (20 entries of the longest prompts, all escaped in JSON) for forget', async () => {
    const dataDir = await newDir();
    const state = await openBotState({ dataDir, logger: { debug() {}, info() {}, warn() {}, error() {} } });
    const space = state.store.space<AuditRecord>(state.spaces.auditPosts);
    const poster = new RecordingPoster(20);
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, posts: space });
    log.setPoster('discord', poster);
    const prompt = '\u0001'.repeat(5000);
    for (let i = 0; i < 20; i++) log.jobEnded(member('U-ada'), job(prompt), completed, `https://discord.com/channels/${'1'.repeat(19)}/${'2'.repeat(19)}/${'3'.repeat(19)}`);
    await log.flush();
    expect(poster.posts[0]!.entries).toHaveLength(20);
    expect(await log.forget('discord:U-ada')).toEqual({ edited: 1, pending: 0 });
    await state.close();
  });
});

describe('a job’s end in the audit channel', () => {
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };

  it('is entered once by the job’s key: its end recorded again, by this process or the next one (a sweep after a crash between the record and its mark), is not posted again', async () => {
    const dataDir = await newDir();
    let state = await openBotState({ dataDir, logger: quiet });
    const poster = new RecordingPoster();
    const logOf = () => {
      const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, ended: state.store.space(state.spaces.auditEnded) });
      log.setPoster('discord', poster);
      return log;
    };
    let log = logOf();
    log.jobEnded(member('U-ada'), { key: 'job-1', ...job('a lighthouse recorded twice') }, completed);
    log.jobEnded(member('U-ada'), { key: 'job-1', ...job('a lighthouse recorded twice') }, completed);
    await log.flush();
    await state.close();
    state = await openBotState({ dataDir, logger: quiet });
    log = logOf();
    log.jobEnded(member('U-ada'), { key: 'job-1', ...job('a lighthouse recorded twice') }, completed);
    // Another job, and the same key in another server: each its own entry.
    log.jobEnded(member('U-ada'), { key: 'job-2', ...job('a second lighthouse') }, completed);
    log.jobEnded(member('U-ada', 'G2'), { key: 'job-1', ...job('a lighthouse elsewhere') }, completed);
    await log.flush();
    // Two servers' posts: in whichever order their checks answered.
    expect(poster.posts.flatMap((p) => p.entries).map((e) => e.prompt).sort()).toEqual(['a lighthouse elsewhere', 'a lighthouse recorded twice', 'a second lighthouse']);
    await state.close();
  });

  it('is entered again after a stop or a crash that dropped it before its post (its key is kept once posted, not when queued), and the record of its end waits for that post', async () => {
    const dataDir = await newDir();
    let state = await openBotState({ dataDir, logger: quiet });
    const poster = new RecordingPoster();
    const logOf = () => {
      const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 2000, ended: state.store.space(state.spaces.auditEnded) });
      log.setPoster('discord', poster);
      return log;
    };
    vi.useFakeTimers();
    try {
      let posted = false;
      void logOf()
        .jobEnded(member('U-ada'), { key: 'job-1', ...job('a lighthouse before a crash') }, completed)
        .then(() => (posted = true));
      // Queued, waiting for its batch: the process stops here, its queue lost.
      await vi.advanceTimersByTimeAsync(1000);
      expect(posted).toBe(false);
      expect(poster.posts).toHaveLength(0);
      await state.close();
    } finally {
      vi.useRealTimers();
    }
    // The next start's sweep records that end again: it is posted, once.
    state = await openBotState({ dataDir, logger: quiet });
    const log = logOf();
    const entered = log.jobEnded(member('U-ada'), { key: 'job-1', ...job('a lighthouse before a crash') }, completed);
    await log.flush();
    await entered;
    log.jobEnded(member('U-ada'), { key: 'job-1', ...job('a lighthouse before a crash') }, completed);
    await log.flush();
    expect(poster.posts.flatMap((p) => p.entries).map((e) => e.prompt)).toEqual(['a lighthouse before a crash']);
    await state.close();
  });

  it('answers a repeat while the first entry waits here as that entry is answered — once it was posted, never before', async () => {
    const kept = new Map<string, true>();
    const ended = { get: async (key: string) => kept.get(key), put: async (key: string) => void kept.set(key, true) };
    const poster = new RecordingPoster();
    const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 2000, ended });
    log.setPoster('discord', poster);
    vi.useFakeTimers();
    try {
      const answered: string[] = [];
      void log.jobEnded(member('U-ada'), { key: 'job-1', ...job('a lighthouse recorded twice at once') }, completed).then(() => answered.push('first'));
      void log.jobEnded(member('U-ada'), { key: 'job-1', ...job('a lighthouse recorded twice at once') }, completed).then(() => answered.push('repeat'));
      // Both wait for the batch: a stop now would drop the one entry, and neither end may be marked recorded.
      await vi.advanceTimersByTimeAsync(1000);
      expect(answered).toEqual([]);
      await vi.advanceTimersByTimeAsync(1500);
      expect(poster.posts.flatMap((p) => p.entries).map((e) => e.prompt)).toEqual(['a lighthouse recorded twice at once']);
      expect(answered.sort()).toEqual(['first', 'repeat']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('is posted by each of two replicas recording the same end at the same moment (both find it absent): twice, never lost — one after the other, once', async () => {
    const dataDir = await newDir();
    const state = await openBotState({ dataDir, logger: quiet });
    const poster = new RecordingPoster();
    const replica = () => {
      const log = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, ended: state.store.space(state.spaces.auditEnded) });
      log.setPoster('discord', poster);
      return log;
    };
    const [one, two] = [replica(), replica()];
    await Promise.all([one, two].map((log) => log.jobEnded(member('U-ada'), { key: 'job-1', ...job('a lighthouse on two replicas') }, completed)));
    await two.jobEnded(member('U-ada'), { key: 'job-2', ...job('a lighthouse recorded after') }, completed);
    await one.jobEnded(member('U-ada'), { key: 'job-2', ...job('a lighthouse recorded after') }, completed);
    await Promise.all([one.flush(), two.flush()]);
    expect(poster.posts.flatMap((p) => p.entries).map((e) => e.prompt)).toEqual(['a lighthouse on two replicas', 'a lighthouse on two replicas', 'a lighthouse recorded after']);
    await state.close();
  });

  it('is entered when the state cannot tell whether it was before (an end is never lost), and takes nothing for a server without an audit channel', async () => {
    const poster = new RecordingPoster();
    const claims: string[] = [];
    const ended = {
      get: async (key: string): Promise<true | undefined> => {
        claims.push(key);
        throw new Error('storage unavailable');
      },
      put: async () => {
        throw new Error('storage unavailable');
      },
    };
    const log = new AuditLog({ channelOf: async (s) => (s.scopeId === 'G1' ? { channelId: 'C-audit' } : undefined), batchMs: 10, ended });
    log.setPoster('discord', poster);
    log.jobEnded(member('U-ada'), { key: 'job-1', ...job('a lighthouse in a storm') }, completed);
    log.jobEnded(member('U-ada', 'G-unaudited'), { key: 'job-2', ...job('a lighthouse nobody audits') }, completed);
    await log.flush();
    expect(poster.posts.flatMap((p) => p.entries).map((e) => e.prompt)).toEqual(['a lighthouse in a storm']);
    expect(claims).toHaveLength(1);
  });
});

describe('an audit post whose edit failed at a forget', () => {
  it('is tried again after the wait the audit log exports for others to share: a minute, then twice the last wait, up to an hour', () => {
    const waits = [auditRetryWaitMs(undefined)];
    for (let i = 0; i < 7; i++) waits.push(auditRetryWaitMs(waits.at(-1)));
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 60, 60].map((minutes) => minutes * 60_000));
    expect(auditRetryWaitMs(undefined, 5_000)).toBe(5_000);
  });

  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    for (const close of closing.splice(0)) await close();
  });

  /**
   * One process on fake timers: its audit log keeping posts in the data folder's `audit-posts`, its history's forget
   * reaching it. Every write to the space is kept as written (`written`); `settle` waits for the storage calls under way.
   */
  async function oneRun() {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const dataDir = await newDir();
    const state = await openBotState({ dataDir, logger: quiet });
    closing.push(() => state.close());
    const space = state.store.space<AuditRecord>(state.spaces.auditPosts);
    const underWay = new Set<Promise<unknown>>();
    const track = <T>(call: Promise<T>): Promise<T> => {
      underWay.add(call);
      void call.then(
        () => underWay.delete(call),
        () => underWay.delete(call),
      );
      return call;
    };
    const written: string[] = [];
    /** Full scans of the space that ended (each forget makes one), and who waits for their count. */
    let scans = 0;
    const scanWaits: { count: number; resolve: () => void }[] = [];
    const scanned = (count: number) => new Promise<void>((resolve) => (scans >= count ? resolve() : scanWaits.push({ count, resolve })));
    const posts: AuditLogOptionsPosts = {
      get: (key) => track(space.get(key)),
      put: (key, record) => (written.push(JSON.stringify(record)), track(space.put(key, record))),
      update: (key, change) => track(space.update(key, change).then((changed) => (written.push(JSON.stringify(changed.after ?? null)), changed))),
      delete: (key) => track(space.delete(key)),
      entries: async function* () {
        let done!: () => void;
        track(new Promise<void>((resolve) => (done = resolve)));
        try {
          yield* space.entries();
        } finally {
          done();
          scans++;
          for (const wait of scanWaits) if (scans >= wait.count) wait.resolve();
        }
      },
    };
    const poster = new RecordingPoster();
    const warned: string[] = [];
    const logger = { ...quiet, warn: (_: unknown, msg?: string) => void warned.push(String(msg)) };
    const log: AuditLog = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, posts, logger, forgotten: { forgotten: (who, at) => history.forgotten(who, at) } });
    const history = new JobHistory({ state, forgetAudit: (userKey) => log.forget(userKey) });
    log.setPoster('discord', poster);
    const settle = async () => {
      do {
        await Promise.allSettled([...underWay]);
        await vi.advanceTimersByTimeAsync(0);
      } while (underWay.size > 0);
    };
    const kept = async () => {
      const records: AuditRecord[] = [];
      for await (const { value } of space.entries()) records.push(value);
      return records;
    };
    /** Every file of the audit spaces, as stored. */
    const stored = async () => {
      const { readdir, readFile } = await import('node:fs/promises');
      const { join } = await import('node:path');
      const files = (await readdir(join(dataDir, 'audit'), { recursive: true, withFileTypes: true })).filter((f) => f.isFile());
      return (await Promise.all(files.map((f) => readFile(join(f.parentPath, f.name), 'utf8')))).join('\n');
    };
    const post = async (who: Requester, prompt: string, isPrivate = false) => {
      const ended = log.jobEnded(who, { ...job(prompt, isPrivate), acceptedAt: Date.now() }, completed);
      await vi.advanceTimersByTimeAsync(10);
      await ended;
      await settle();
    };
    /** Several members' ends at once, past this process's scan at its start (nothing to edit then): one post holding them all. */
    const postTogether = async (ends: readonly (readonly [Requester, string])[]) => {
      await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMs);
      await settle();
      const ended = ends.map(([who, prompt]) => log.jobEnded(who, { ...job(prompt), acceptedAt: Date.now() }, completed));
      await vi.advanceTimersByTimeAsync(10);
      await Promise.all(ended);
      await settle();
    };
    /** Another replica's audit log on the same store and platform, told of forgets as `options` says. */
    const replica = (options: Pick<ConstructorParameters<typeof AuditLog>[0], 'forgotten'> = {}) => {
      const other = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, posts, logger: quiet, ...options });
      other.setPoster('discord', poster);
      return other;
    };
    const prompts = (messageId: string) => poster.shown.get(messageId)!.map((e) => [e.userId, e.prompt, e.erased ?? false]);
    return { log, history, poster, posts, written, settle, kept, stored, post, postTogether, replica, prompts, scanned, warned };
  }

  /**
   * The opening of most cases here: Ada's post, then her forget, whose edit of it fails (a 429): the post is still to
   * edit. Answers her and how many writes the space had before the forget.
   */
  /** The retry's time: nothing edited a moment before it; at it, the post edited without the prompt and its record gone. */
  async function editedAtTheRetry(p: Awaited<ReturnType<typeof oneRun>>) {
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMs - 100);
    await p.settle();
    expect(p.poster.edits).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(100);
    await p.settle();
    expect(p.prompts('m1')).toEqual([['U-ada', '', true]]);
    expect(await p.kept()).toEqual([]);
  }

  async function postThenFailTheForget(p: Awaited<ReturnType<typeof oneRun>>, isPrivate = false) {
    const ada = member('U-ada');
    await p.post(ada, 'zanzibarwhisper lighthouse', isPrivate);
    p.poster.editFailures = 1;
    const writes = p.written.length;
    expect(await p.history.forgetEverywhere(ada)).toMatchObject({ auditPosts: 0, auditPending: 1 });
    return { ada, writes };
  }

  it('keeps it as still to edit without the prompt, tells the member, and edits it at the retry; the marker word in no stored record after the forget', async () => {
    const p = await oneRun();
    const { writes } = await postThenFailTheForget(p, true);
    // The platform shows the prompt still: the record says so, without it.
    expect(p.poster.failedEdits).toBe(1);
    expect(p.prompts('m1')).toEqual([['U-ada', 'zanzibarwhisper lighthouse', false]]);
    expect(await p.kept()).toEqual([expect.objectContaining({ messageId: 'm1', pending: true, entries: [expect.objectContaining({ prompt: '', erased: true })] })]);
    expect(await p.stored()).not.toContain('zanzibarwhisper');

    // Not tried again at once; once the retry's time came, edited, and its record goes (no prompt left).
    await editedAtTheRetry(p);
    expect(p.written.slice(writes).join('\n')).not.toContain('zanzibarwhisper');
    expect(await p.stored()).not.toContain('zanzibarwhisper');
  });

  it('is edited by the member’s next forget, which counts it as edited', async () => {
    const p = await oneRun();
    const { ada, writes } = await postThenFailTheForget(p, true);
    expect(await p.history.forgetEverywhere(ada)).toMatchObject({ auditPosts: 1, auditPending: 0 });
    expect(p.prompts('m1')).toEqual([['U-ada', '', true]]);
    expect(await p.kept()).toEqual([]);
    expect(p.written.slice(writes).join('\n')).not.toContain('zanzibarwhisper');
    // Nothing left to edit: a third forget edits nothing.
    expect(await p.history.forgetEverywhere(ada)).toMatchObject({ auditPosts: 0, auditPending: 0 });
    expect(p.poster.edits).toHaveLength(1);
  });

  it('is left by another member’s forget to the retries (not edited before that member’s answer), and edited at its retry; the other member’s prompts stay', async () => {
    const p = await oneRun();
    const [ada, bob] = [member('U-ada'), member('U-bob')];
    await p.post(ada, 'zanzibarwhisper lighthouse');
    await p.post(bob, 'a public kite');
    p.poster.editFailures = 1;
    expect(await p.history.forgetEverywhere(ada)).toMatchObject({ auditPosts: 0, auditPending: 1 });
    expect(await p.history.forgetEverywhere(member('U-cy'))).toMatchObject({ auditPosts: 0, auditPending: 0 });
    expect(p.poster.edits).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMs);
    await p.settle();
    expect(p.prompts('m1')).toEqual([['U-ada', '', true]]);
    expect(p.prompts('m2')).toEqual([['U-bob', 'a public kite', false]]);
    expect(await p.kept()).toEqual([expect.objectContaining({ messageId: 'm2' })]);
    expect((await p.kept())[0]!.pending).toBeUndefined();
  });

  it('waits its own time between tries: a post that cannot be edited for hours does not delay the retry of a new one', async () => {
    const p = await oneRun();
    const [ada, bob] = [member('U-ada'), member('U-bob')];
    await p.post(ada, 'zanzibarwhisper lighthouse');
    p.poster.dead.add('m1');
    await p.history.forgetEverywhere(ada);
    for (let minute = 0; minute < 3 * 60; minute++) await vi.advanceTimersByTimeAsync(60_000);
    await p.settle();
    // Bob's post fails once at his forget: tried again a minute later, as docs promise, not after Ada's hour.
    await p.post(bob, 'quillowmist kite');
    p.poster.editFailures = 1;
    expect(await p.history.forgetEverywhere(bob)).toMatchObject({ auditPosts: 0, auditPending: 1 });
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMs);
    await p.settle();
    expect(p.prompts('m2')).toEqual([['U-bob', '', true]]);
  });

  it('is dropped once the platform says its message is gone (deleted, or its channel): never tried again, not counted as still to edit', async () => {
    const p = await oneRun();
    const ada = member('U-ada');
    await p.post(ada, 'zanzibarwhisper lighthouse');
    p.poster.deleted.add('m1');
    expect(await p.history.forgetEverywhere(ada)).toMatchObject({ auditPosts: 0, auditPending: 0 });
    expect(await p.kept()).toEqual([]);
    expect(p.warned).toEqual([]);
  });

  it('is read once at its retry: the edit reads its record, nothing reads it before', async () => {
    const p = await oneRun();
    await postThenFailTheForget(p);
    const get = p.posts!.get;
    let reads = 0;
    p.posts!.get = (key) => (reads++, get(key));
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMs);
    await p.settle();
    expect(p.prompts('m1')).toEqual([['U-ada', '', true]]);
    expect(reads).toBe(1);
  });

  it('is finished before the stop ends when a retry is under way (its edit and its write)', async () => {
    const p = await oneRun();
    await postThenFailTheForget(p);
    const held = p.poster.holdNextEdit();
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMs);
    await held.reached;
    let stopped = false;
    const flushed = p.log.flush().then(() => (stopped = true));
    await p.settle();
    expect(stopped).toBe(false);
    held.release();
    await flushed;
    expect(p.prompts('m1')).toEqual([['U-ada', '', true]]);
    expect(await p.kept()).toEqual([]);
  });

  it('is edited again when another process’s newer edit landed before this one’s older edit (two replicas on one store): the member’s erased prompt never stays shown', async () => {
    const p = await oneRun();
    const [ada, bob, cy] = [member('U-ada'), member('U-bob'), member('U-cy')];
    await p.postTogether([
      [ada, 'zanzibarwhisper'],
      [bob, 'quillowmist'],
      [cy, 'a public kite'],
    ]);
    // Another replica on the same store: Ada's forget there fails to edit; its retry comes a minute later.
    const replica = p.replica();
    p.poster.editFailures = 1;
    expect(await replica.forget('discord:U-ada')).toEqual({ edited: 0, pending: 1 });
    // The replica's retry has read the record (Ada's entry erased) and its edit is slow; Bob forgets here meanwhile.
    const held = p.poster.holdNextEdit();
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMs);
    await held.reached;
    expect(await p.history.forgetEverywhere(bob)).toMatchObject({ auditPosts: 1 });
    expect(p.prompts('m1')).toEqual([['U-ada', '', true], ['U-bob', '', true], ['U-cy', 'a public kite', false]]);
    // The replica's older edit lands (Bob's prompt back on the platform): it is written again from the record as it is now.
    held.release();
    await p.settle();
    await vi.advanceTimersByTimeAsync(0);
    await p.settle();
    expect(p.prompts('m1')).toEqual([['U-ada', '', true], ['U-bob', '', true], ['U-cy', 'a public kite', false]]);
    expect(await p.kept()).toEqual([expect.objectContaining({ messageId: 'm1' })]);
    expect((await p.kept())[0]!.pending).toBeUndefined();
    await replica.flush();
  });

  it('is edited again when another process’s forget erased its last prompt and released its record while this older edit was under way', async () => {
    const p = await oneRun();
    const [ada, bob] = [member('U-ada'), member('U-bob')];
    await p.postTogether([
      [ada, 'zanzibarwhisper'],
      [bob, 'quillowmist'],
    ]);
    await vi.advanceTimersByTimeAsync(1000);
    const replica = p.replica({ forgotten: p.history });
    p.poster.editFailures = 1;
    expect(await replica.forget('discord:U-ada')).toEqual({ edited: 0, pending: 1 });
    const held = p.poster.holdNextEdit();
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMs);
    await held.reached;
    // Bob's forget here erases the last prompt, edits and releases: the record goes.
    expect(await p.history.forgetEverywhere(bob)).toMatchObject({ auditPosts: 1 });
    expect(await p.kept()).toEqual([]);
    // The replica's older edit lands, showing Bob's prompt: it finds the record gone, Bob's mark, and edits it again.
    held.release();
    await vi.waitFor(async () => {
      await vi.advanceTimersByTimeAsync(0);
      await p.settle();
      expect(p.prompts('m1')).toEqual([['U-ada', '', true], ['U-bob', '', true]]);
    });
    expect(p.prompts('m1')).toEqual([['U-ada', '', true], ['U-bob', '', true]]);
    expect(await p.kept()).toEqual([]);
    await replica.flush();
  });

  it('stays still to edit while its edits keep failing, tried less and less often (at most once an hour), its prompt never stored again', async () => {
    const p = await oneRun();
    const ada = member('U-ada');
    await p.post(ada, 'zanzibarwhisper lighthouse');
    p.poster.editFailures = Number.POSITIVE_INFINITY;
    const writes = p.written.length;
    expect(await p.history.forgetEverywhere(ada)).toMatchObject({ auditPosts: 0, auditPending: 1 });
    const triedBy: number[] = [];
    for (let minute = 1; minute <= 6 * 60; minute++) {
      await vi.advanceTimersByTimeAsync(60_000);
      await p.settle();
      triedBy.push(p.poster.failedEdits);
    }
    // The forget's try, then 1, 3, 7, 15, 31, 63 minutes after, then once an hour.
    const triedAt = triedBy.flatMap((tries, i) => (tries > (triedBy[i - 1] ?? 1) ? [i + 1] : []));
    expect(triedAt).toEqual([1, 3, 7, 15, 31, 63, 123, 183, 243, 303]);
    expect(await p.kept()).toEqual([expect.objectContaining({ messageId: 'm1', pending: true })]);
    // Retries write nothing (the record's TTL runs from the forget): the forget's one write, no prompt in it.
    expect(p.written.slice(writes)).toHaveLength(1);
    // Said when it first failed and when its tries came once an hour; the tries between for the debug log only.
    expect(p.warned.filter((m) => m.includes('audit post'))).toEqual(['could not erase a member’s prompt from an audit post; it is edited again later', 'an audit post still cannot be edited; tried again once an hour until its record expires']);
    expect(p.written.slice(writes).join('\n')).not.toContain('zanzibarwhisper');
    expect(await p.stored()).not.toContain('zanzibarwhisper');

    // The platform takes edits again: the next try (within the hour) edits it.
    p.poster.editFailures = 0;
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMaxMs);
    await p.settle();
    expect(p.prompts('m1')).toEqual([['U-ada', '', true]]);
    expect(await p.kept()).toEqual([]);
  });

  it('waits its own time between tries while the state cannot be read (Redis down), as after a failed edit: never a tight loop; edited once the state is back', async () => {
    const p = await oneRun();
    await postThenFailTheForget(p);
    // The state goes down: every call to the audit-posts space fails, and is counted.
    const working = { ...p.posts };
    let calls = 0;
    const down = () => {
      calls++;
      return Promise.reject(Object.assign(new Error('Connection is closed.'), { code: 'ECONNREFUSED' }));
    };
    Object.assign(p.posts, {
      get: down,
      put: down,
      update: down,
      delete: down,
      entries: async function* () {
        await down();
        yield* [];
      },
    });
    const calledBy: number[] = [];
    for (let minute = 1; minute <= 40; minute++) {
      await vi.advanceTimersByTimeAsync(60_000);
      await p.settle();
      calledBy.push(calls);
    }
    // The start's scan (a minute after the poster came, with the first retry), then the post's own 1, 3, 7, 15, 31 minutes.
    const triedAt = calledBy.flatMap((n, i) => (n > (calledBy[i - 1] ?? 0) ? [i + 1] : []));
    expect(triedAt).toEqual([1, 3, 7, 15, 31]);
    expect(calls).toBe(6);
    // One line a round that failed, not one a turn.
    expect(p.warned.filter((m) => m.includes('still to edit'))).toHaveLength(5);
    // The state is back: the post's next try (63 minutes after the forget) edits it.
    Object.assign(p.posts, working);
    for (let minute = 41; minute <= 63; minute++) await vi.advanceTimersByTimeAsync(60_000);
    await p.settle();
    expect(p.prompts('m1')).toEqual([['U-ada', '', true]]);
    expect(await p.kept()).toEqual([]);
  });

  it('is no longer kept here once its platform’s poster went (never tried, nothing held for it); a poster that comes back has it looked for again and edited a retry later', async () => {
    const p = await oneRun();
    // Past the start's scan: the post is known here from its failed edit alone.
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMs);
    await p.settle();
    await postThenFailTheForget(p);
    p.log.setPoster('discord', undefined);
    await vi.advanceTimersByTimeAsync(3 * AUDIT_LIMITS.retryMs);
    await p.settle();
    expect(p.poster.failedEdits).toBe(1);
    expect(p.poster.edits).toHaveLength(0);
    // Back: not tried from what was known before it went, but found by the scan a retry after, and edited.
    p.log.setPoster('discord', p.poster);
    await editedAtTheRetry(p);
  });

  it('is written one edit at a time here: a forget that erased another entry of the post since never has its edit undone by an older one', async () => {
    const p = await oneRun();
    const [ada, bob] = [member('U-ada'), member('U-bob')];
    // One post holding both.
    const ended = [p.log.jobEnded(ada, { ...job('zanzibarwhisper lighthouse'), acceptedAt: Date.now() }, completed), p.log.jobEnded(bob, { ...job('quillowmist kite'), acceptedAt: Date.now() }, completed)];
    await vi.advanceTimersByTimeAsync(10);
    await Promise.all(ended);
    await p.settle();
    // Ada's edit is slow to reach the platform; Bob forgets meanwhile.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const edit = p.poster.edit.bind(p.poster);
    let first = true;
    p.poster.edit = async (post) => {
      if (first) {
        first = false;
        await released;
      }
      return edit(post);
    };
    const adaForgot = p.history.forgetEverywhere(ada);
    await p.scanned(1);
    const bobForgot = p.history.forgetEverywhere(bob);
    await p.scanned(2);
    await p.settle();
    release();
    expect(await adaForgot).toMatchObject({ auditPosts: 1, auditPending: 0 });
    expect(await bobForgot).toMatchObject({ auditPosts: 1, auditPending: 0 });
    expect(p.prompts('m1')).toEqual([
      ['U-ada', '', true],
      ['U-bob', '', true],
    ]);
    expect(await p.kept()).toEqual([]);
  });

  it('is edited by the next process once its poster is there, when the stop came before the retry', async () => {
    const p = await oneRun();
    await postThenFailTheForget(p);
    await p.log.flush();
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMaxMs);
    await p.settle();
    expect(p.poster.edits).toHaveLength(0);

    // The next start: a new audit log on the same space and the same platform's messages.
    const next = new AuditLog({ channelOf: async () => ({ channelId: 'C-audit' }), batchMs: 10, posts: p.posts });
    next.setPoster('discord', p.poster);
    await vi.advanceTimersByTimeAsync(AUDIT_LIMITS.retryMs);
    await p.settle();
    expect(p.prompts('m1')).toEqual([['U-ada', '', true]]);
    expect(await p.kept()).toEqual([]);
  });
});
