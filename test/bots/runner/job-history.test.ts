import { afterAll, describe, expect, it } from 'vitest';
import { JobHistory, type HistoryEntry } from '../../../bots/runner/index.js';
import { FORGET_CLOCK_MARGIN_MS, jobEndOf } from '../../../bots/runner/job-history.js';
import type { FinalUpdate, Requester } from '../../../bots/runner/types.js';
import { words } from '../../../bots/runner/words.js';
import type { Usage } from '../../../src/index.js';
import { HISTORY_BOUNDS, historyOf, historyOfScope, openBotState, stateKeyOf, type BotState } from '../../../bots/state/index.js';
import { RecordingLogger } from '../discord/harness.js';
import { RedisLink, silentLogger } from '../../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { requester, useTempDirs, withSpace } from '../../helpers/runner-harness.js';

const newDir = useTempDirs();
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A job that ended, as the runner records it (`recordEnded`): its `i` in its key and prompt, completed at $0.01,
 * accepted at `acceptedAt` — the history's now (a time before any forget would count it as running at one).
 */
function ended(history: JobHistory, who: Requester, i: number, acceptedAt = Date.now()): Promise<void> {
  const job = { key: `job-${i}`, kind: 'generate' as const, prompt: `prompt ${i}`, options: { n: 1, quality: 'low' as const }, acceptedAt };
  return history.recordEnd(who, job, { type: 'completed', size: '1024x1024', quality: 'low', cost: { totalUsd: 0.01 } });
}

/** The same story on both backends: bounded, newest first, kept only for the retention, erased by forget. */
function historyBehaviour(name: string, open: (historyRetentionDays?: number) => Promise<BotState>) {
  describe(`the job history (${name})`, () => {
    it('shows a member their last 10 jobs, newest first, and keeps at most 20', async () => {
      const state = await open();
      let now = Date.now();
      const history = new JobHistory({ state, now: () => now });
      const alice = requester({ scopeId: 'guild-h' });
      for (let i = 0; i < 25; i++) {
        now += 1000;
        await ended(history, alice, i, now);
      }
      const mine = await history.mine(alice);
      expect(mine.map((e) => e.prompt)).toEqual(Array.from({ length: 10 }, (_, i) => `prompt ${24 - i}`));
      expect(mine[0]).toStrictEqual({
        key: 'job-24', scopeKey: 'discord:guild-h', userId: alice.userId, channelId: alice.channelId, kind: 'generate', prompt: 'prompt 24',
        n: 1, size: '1024x1024', quality: 'low', status: 'completed', costUsd: 0.01, at: now,
      });
      expect(await historyOf<HistoryEntry>(state, `discord:${alice.userId}`)).toHaveLength(HISTORY_BOUNDS.perMember);
    });

    it('lets only admins see the server’s jobs, and forgets a member’s jobs there too', async () => {
      const state = await open();
      const history = new JobHistory({ state });
      const scopeId = `guild-${Math.random()}`;
      const alice = requester({ scopeId });
      const bob = requester({ scopeId });
      await ended(history, alice, 1);
      await ended(history, bob, 2);
      expect(await history.ofScope(alice)).toBeUndefined();
      expect((await history.ofScope({ ...alice, isAdmin: true }))!.map((e) => e.userId).sort()).toEqual([alice.userId, bob.userId].sort());

      expect((await history.forgetEverywhere(alice)).entries).toBe(1);
      expect(await history.mine(alice)).toEqual([]);
      expect((await history.ofScope({ ...bob, isAdmin: true }))!.map((e) => e.userId)).toEqual([bob.userId]);
    });

    it('shows an admin the other members’ jobs while one member’s list or the server’s list of members is damaged (no list), logs it, and writes it anew with the next job', async () => {
      const state = await open();
      const logger = new RecordingLogger();
      const history = new JobHistory({ state, logger });
      const scopeId = `guild-${Math.random()}`;
      const [alice, bob, admin] = [requester({ scopeId }), requester({ scopeId }), requester({ scopeId, isAdmin: true })];
      await ended(history, alice, 1);
      await ended(history, bob, 2);
      const damaged = () => logger.entries.filter((e) => e.msg?.startsWith('a kept history list is damaged')).map((e) => (e.obj as { key: string }).key);
      // A hand edit: bob's list an object, then the server's list of members one with a number among them.
      await state.store.space(state.spaces.history).put(stateKeyOf(`discord:${bob.userId}`), { key: 'job-2' });
      expect((await history.ofScope(admin))!.map((e) => e.userId)).toEqual([alice.userId]);
      expect(await history.mine(bob)).toEqual([]);
      await state.store.space(state.spaces.historyScopes).put(stateKeyOf(`discord:${scopeId}`), [7, `discord:${alice.userId}`]);
      expect((await history.ofScope(admin))!.map((e) => e.userId)).toEqual([alice.userId]);
      expect(damaged()).toEqual([`discord:${bob.userId}`, `discord:${bob.userId}`, `discord:${scopeId}`]);
      await ended(history, bob, 3);
      expect((await history.ofScope(admin))!.map((e) => e.key)).toEqual(['job-3', 'job-1']);
      expect(await historyOf(state, `discord:${bob.userId}`)).toHaveLength(1);
    });

    it('forgets every job of a member in the server’s list, also those past the 20 their own list keeps', async () => {
      const state = await open();
      const history = new JobHistory({ state });
      const scopeId = `guild-${Math.random()}`;
      const alice = requester({ scopeId });
      const bob = requester({ scopeId });
      await ended(history, bob, 0);
      for (let i = 1; i <= HISTORY_BOUNDS.perMember + 5; i++) await ended(history, alice, i);

      expect((await history.forgetEverywhere(alice)).entries).toBe(HISTORY_BOUNDS.perMember);
      expect((await historyOfScope<HistoryEntry>(state, `discord:${scopeId}`)).map((e) => e.userId)).toEqual([bob.userId]);
    });

    it('keeps nothing older than the retention once a newer job is kept', async () => {
      const state = await open(1);
      let now = Date.now();
      const history = new JobHistory({ state, now: () => now });
      const scopeId = `guild-${Math.random()}`;
      const alice = requester({ scopeId });
      await ended(history, alice, 1, now);
      now += 2 * DAY_MS;
      await ended(history, alice, 2, now);
      expect((await historyOf<HistoryEntry>(state, `discord:${alice.userId}`)).map((e) => e.key)).toEqual(['job-2']);
      expect((await historyOfScope<HistoryEntry>(state, `discord:${scopeId}`)).map((e) => e.key)).toEqual(['job-2']);
    });

    it('writes an end again without its prompt when its member’s forget (on another replica) came after its mark was read and before it was written', async () => {
      const state = await open();
      const alice = requester({ scopeId: 'guild-h' });
      // The forget lands once the end read no mark, before its entry is written.
      let forgot = false;
      const history: JobHistory = new JobHistory({
        state: withSpace(state, state.spaces.forgotten, (marks) => ({
          get: async (key) => {
            const at = await marks.get(key);
            if (!forgot) {
              forgot = true;
              await history.forgetEverywhere(alice);
            }
            return at;
          },
        })),
      });
      await history.recordEnd(alice, { key: 'job-1', kind: 'generate', prompt: 'zanzibarwhisper', options: {}, acceptedAt: Date.now() }, { type: 'completed' });
      expect(await history.mine(alice)).toMatchObject([{ key: 'job-1', prompt: '' }]);
      expect(JSON.stringify(await historyOf(state, `discord:${alice.userId}`))).not.toContain('zanzibarwhisper');
    });

    it('never writes the prompt of an end whose member erased their prompts before it was recorded (its link still asked)', async () => {
      const state = await open();
      const alice = requester({ scopeId: 'guild-h' });
      const acceptedAt = Date.now();
      await new JobHistory({ state }).forgetEverywhere(alice);
      const written: string[] = [];
      const history = new JobHistory({
        state: withSpace(state, state.spaces.history, (space) => ({
          update: (key, change) =>
            space.update(key, (current) => {
              const next = change(current);
              written.push(JSON.stringify(next));
              return next;
            }),
        })),
      });
      await history.recordEnd(alice, { key: 'job-1', kind: 'generate', prompt: 'zanzibarwhisper', options: {}, acceptedAt }, { type: 'completed' }, Promise.resolve('https://discord.com/channels/1/2/3'));
      expect(await history.mine(alice)).toMatchObject([{ key: 'job-1', prompt: '', link: 'https://discord.com/channels/1/2/3' }]);
      expect(written.length).toBeGreaterThan(0);
      expect(written.join()).not.toContain('zanzibarwhisper');
    });

    it('shows nothing older than the retention', async () => {
      const state = await open(1);
      let now = Date.now();
      const history = new JobHistory({ state, now: () => now });
      const alice = requester();
      await ended(history, alice, 1, now);
      now += 2 * DAY_MS;
      expect(await history.mine(alice)).toEqual([]);
    });
  });
}

const redis = testRedis();
const prefix = uniquePrefix('history');
const opened: (BotState | RedisLink)[] = [];
afterAll(async () => {
  for (const open of opened.reverse()) await open.close();
  if (redis.url) await deleteKeys(redis.url, prefix);
});

/** The history in the bots' state of a process: the data folder, or Redis. */
async function inState(dataDir: string, link?: RedisLink, historyRetentionDays?: number): Promise<BotState> {
  const state = await openBotState({ dataDir, redis: link, historyRetentionDays, logger: silentLogger() });
  opened.push(state);
  return state;
}

historyBehaviour('data folder', async (days) => inState(await newDir(), undefined, days));
if (!redis.skipReason) {
  historyBehaviour('Redis', async (days) => {
    const link = await RedisLink.open({ url: requireRedisUrl(redis), prefix });
    opened.push(link);
    return inState(await newDir(), link, days);
  });
}

describe('the history in the data folder', () => {
  it('keeps a member’s history across a restart of the bot (a new state on the same folder)', async () => {
    const dir = await newDir();
    const alice = requester();
    await ended(new JobHistory({ state: await inState(dir) }), alice, 7);
    expect((await new JobHistory({ state: await inState(dir) }).mine(alice)).map((e) => e.key)).toEqual(['job-7']);
  });
});

describe('recording a job’s end in the history', () => {
  it('keeps the first time and link of an end recorded again (a sweep after a crash between the record and its mark), whose repeat has no link', async () => {
    const state = await inState(await newDir());
    let now = 1_000_000;
    const history = new JobHistory({ state, now: () => Date.now() - now });
    const alice = requester();
    const job = { key: 'job-1', kind: 'generate' as const, prompt: 'a lighthouse recorded twice', options: {}, acceptedAt: 0 };
    await history.recordEnd(alice, job, { type: 'completed' }, 'https://discord.com/channels/1/2/3');
    const [first] = await history.mine(alice);
    now = 0;
    await history.recordEnd(alice, job, { type: 'completed', cost: { totalUsd: 0.02 } });
    const entries = await history.mine(alice);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ at: first!.at, link: 'https://discord.com/channels/1/2/3', costUsd: 0.02 });
  });

  it('keeps a private job’s link as its member’s alone even when its surface said everyone can open it, and a public job’s its surface said only its member can open: in their own history, never in the admins’ view', async () => {
    const history = new JobHistory({ state: await inState(await newDir()) });
    const alice = requester({ scopeId: 'guild-p' });
    const admin = requester({ scopeId: 'guild-p', userId: 'admin-1', isAdmin: true });
    const link = 'https://slack.com/archives/C1/p1';
    await history.recordEnd(alice, { key: 'job-p', kind: 'generate', prompt: 'a private lighthouse', options: {}, private: true, seenBy: 'everyone', acceptedAt: 0 }, { type: 'completed' }, link);
    await history.recordEnd(alice, { key: 'job-q', kind: 'generate', prompt: 'a public kite', options: {}, seenBy: 'everyone', acceptedAt: 0 }, { type: 'completed' }, link);
    // Shown in a direct message with the app: its link opens for its member alone, though the job is not private.
    await history.recordEnd(alice, { key: 'job-r', kind: 'generate', prompt: 'a kite in a DM', options: {}, seenBy: 'member', acceptedAt: 0 }, { type: 'completed' }, link);
    expect((await history.mine(alice)).map((e) => [e.key, e.link, e.memberLink])).toEqual([
      ['job-r', link, true],
      ['job-q', link, undefined],
      ['job-p', link, true],
    ]);
    expect((await history.ofScope(admin))!.map((e) => [e.key, e.link])).toEqual([
      ['job-r', undefined],
      ['job-q', link],
    ]);
  });

  it('rejects when its entry could not be written, so the end is not taken as recorded (and says so in the log)', async () => {
    const state = await inState(await newDir());
    const failing = withSpace(state, state.spaces.history, () => ({ update: () => Promise.reject(new Error('storage unavailable')) }));
    const warned: string[] = [];
    const logger = { ...silentLogger(), warn: (_: unknown, msg?: string) => void warned.push(String(msg)) };
    const history = new JobHistory({ state: failing, logger });
    const alice = requester();

    await expect(history.recordEnd(alice, { key: 'job-1', kind: 'generate', prompt: 'p', options: {}, acceptedAt: Date.now() }, { type: 'completed' })).rejects.toThrow('storage unavailable');
    await history.settled();
    expect(warned).toEqual(['could not keep a job in the history']);
  });
});

describe('whether a job’s end is recorded without its prompt, its member having asked forget', () => {
  it('is so for a job accepted before their forget (or within the replicas’ clock margin after it); not for a later one, nor another member’s', async () => {
    const state = await inState(await newDir());
    let now = 1_000_000;
    const history = new JobHistory({ state, now: () => now });
    const [alice, bob] = [requester(), requester()];
    expect(await history.forgotten(alice, now - 1)).toBe(false);
    await history.forgetEverywhere(alice);
    const forgotAt = now;
    now += 10 * FORGET_CLOCK_MARGIN_MS;
    expect(await history.forgotten(alice, forgotAt - 1)).toBe(true);
    expect(await history.forgotten(alice, forgotAt + FORGET_CLOCK_MARGIN_MS)).toBe(true);
    expect(await history.forgotten(alice, forgotAt + FORGET_CLOCK_MARGIN_MS + 1)).toBe(false);
    expect(await history.forgotten(bob, forgotAt - 1)).toBe(false);
  });

  it('is so when the mark cannot be read (and says so in the log)', async () => {
    const state = await inState(await newDir());
    const marks = state.store.space(state.spaces.forgotten);
    marks.get = () => Promise.reject(new Error('storage unavailable'));
    const warned: string[] = [];
    const history = new JobHistory({ state, logger: { ...silentLogger(), warn: (_: unknown, msg?: string) => void warned.push(String(msg)) } });
    expect(await history.forgotten(requester(), Date.now())).toBe(true);
    expect(warned).toEqual(['could not read whether a member erased their prompts; a job’s end is recorded without its prompt']);
  });
});

describe('the end to record of a final update', () => {
  it('keeps only the facts the history and the audit channel record: never the images, the usage nor the cost’s details', () => {
    const image = Buffer.alloc(1024);
    const finals: FinalUpdate[] = [
      {
        type: 'completed',
        jobId: 'j',
        images: [image],
        formats: ['png'],
        size: '1024x1024',
        quality: 'low',
        background: 'opaque',
        usage: { input_tokens: 10, output_tokens: 200, total_tokens: 210 } as Usage,
        cost: { perImageUsd: 0.011, totalUsd: 0.011, n: 1, basis: 'table' },
        elapsedMs: 1,
      },
      { type: 'failed', jobId: 'j', code: 'server_error', message: 'm', words: words('error.on_my_side'), retryable: true, images: [image], formats: ['png'] },
      { type: 'cancelled', jobId: 'j', byUserId: 'U1', reason: 'requested', images: [image], formats: ['png'] },
    ];
    expect(finals.map(jobEndOf)).toStrictEqual([
      { type: 'completed', size: '1024x1024', quality: 'low', cost: { totalUsd: 0.011 } },
      { type: 'failed', code: 'server_error' },
      { type: 'cancelled' },
    ]);
  });
});
