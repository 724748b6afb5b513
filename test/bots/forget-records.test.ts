import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PermissionFlagsBits } from 'discord.js';
import { JobRecordStore } from '../../bots/discord/JobRecordStore.js';
import { RequestStore } from '../../bots/slack/RequestStore.js';
import type { SlackActor } from '../../bots/slack/SlackJobs.js';
import { sweepInterrupted } from '../../bots/slack/sweep-interrupted.js';
import type { Requester } from '../../bots/runner/index.js';
import { openBotState, UNREADABLE, type BotState, type SpaceDefinition, type StateEntry } from '../../bots/state/index.js';
import { FileQuotaStore, RedisLink, silentLogger } from '../../src/internal.js';
import { recordingPoster, useRunnerKit } from '../helpers/runner-harness.js';
import { snowflake } from '../fakes/discord/snowflake.js';
import { answerOf, DiscordHarness } from './discord/harness.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const redis = testRedis();
const kit = useRunnerKit();
const MARKER = 'QUIXOTIC';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const close of closers.splice(0).reverse()) await close();
});

/**
 * Makes the state's scans of `space` yield its records as they are now (`entries`), whatever they become before the
 * scan's reader writes them: a job that ends, or whose end is recorded, between forget's scan and its write.
 */
async function scansSeeNow(state: BotState, space: SpaceDefinition): Promise<void> {
  const now: StateEntry<unknown>[] = [];
  for await (const entry of state.store.space(space).entries()) now.push(entry);
  const real = state.store.space.bind(state.store);
  vi.spyOn(state.store, 'space').mockImplementation(((definition: SpaceDefinition) => {
    const actual = real(definition);
    if (definition !== space) return actual;
    return new Proxy(actual, {
      get: (target, name) => {
        if (name === 'entries') return async function* () { yield* now; };
        const member: unknown = Reflect.get(target, name, target);
        return typeof member === 'function' ? member.bind(target) : member;
      },
    });
  }) as typeof state.store.space);
}

/** An audit poster keeping what it was asked to post. */
/** One backend; each `open()` is a process on it (the next one's sweep takes what the last one left); `keep` changes a kept record's value text behind the store (a hand edit). */
async function backendOf(backend: 'file' | 'redis'): Promise<{ open(): Promise<BotState>; keep(state: BotState, space: SpaceDefinition, key: string, text: string): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pictor-forget-records-'));
  closers.push(() => rm(dataDir, { recursive: true, force: true }));
  const prefix = uniquePrefix('forget-records');
  if (backend === 'redis') closers.push(() => deleteKeys(requireRedisUrl(redis), prefix));
  return {
    async open() {
      const link = backend === 'redis' ? await RedisLink.open({ url: requireRedisUrl(redis), prefix }) : undefined;
      const state = await openBotState({ dataDir, redis: link, leaseMs: 300, logger: silentLogger() });
      closers.push(async () => {
        await state.close().catch(() => undefined);
        await link?.close();
      });
      return state;
    },
    keep: async (state, space, key, text) => {
      if (state.redis) await state.redis.commands.set(`${prefix}:bots:${space.name}:r:${key}`, text, 'KEEPTTL');
      else await writeFile(join(dataDir, space.dir, `${key}.json`), `{"pictorState":1,"holder":null,"value":${text}}`);
    },
  };
}

/** What a member's forget is asked to erase: an ended Discord job of theirs (nothing left to record), with the marker word. */
const endedJob = (key: string, userId: string) => ({ key, kind: 'generate', prompt: `a ${MARKER} cat`, options: {}, status: 'completed', requester: { userId }, inputs: [], outputs: [] });

describe.each([
  { backend: 'file' as const, skip: undefined },
  { backend: 'redis' as const, skip: redis.skipReason },
])('forget, on the $backend backend’s records', ({ backend, skip }) => {
  it.skipIf(skip)('keeps a Slack request whose end is still to be recorded, without its prompt, for the next sweep to record that end (its history and audit entries with no prompt); one recorded goes', async () => {
    const processes = await backendOf(backend);
    const state = await processes.open();
    const store = new RequestStore(state);
    const request = { kind: 'generate' as const, prompt: `a ${MARKER} fox`, options: {}, teamId: 'T1', userId: 'U1', channelId: 'C1', status: 'active' as const };
    const [running, unrecorded, recorded] = [await store.create(request), await store.create(request), await store.create(request)];
    const end = { type: 'failed' as const, code: 'server_error' };
    await store.update(unrecorded.id, { status: 'ended', end });
    await store.update(recorded.id, { status: 'ended', end });
    await store.update(recorded.id, { endRecorded: true });

    await state.forget('slack:U1');
    expect(await store.get(running.id)).toMatchObject({ prompt: '', status: 'active' });
    expect(await store.get(unrecorded.id)).toMatchObject({ prompt: '', status: 'ended', end });
    expect(await store.get(recorded.id)).toBeUndefined();
    // Its process stops before the runner recorded the end: the next one's sweep is handed it.
    await state.close();
    const next = await processes.open();
    const nextStore = new RequestStore(next);
    const claimed = await nextStore.claimInterrupted();
    expect(claimed.map((r) => [r.id, r.prompt, r.end]).sort()).toEqual([[running.id, '', undefined], [unrecorded.id, '', end]].sort());

    // That sweep records the end, in the member's history and the audit channel, with the prompt the request has: none.
    const { runner } = await kit.runner({ history: next, auditBatchMs: 60_000 });
    const poster = recordingPoster();
    runner.audit.setPoster('slack', poster);
    const requesterOf = (actor: SlackActor): Requester => ({ platform: 'slack', userId: actor.userId, channelId: actor.channelId, scopeId: actor.teamId });
    await runner.policy.set({ ...requesterOf({ userId: 'U0ADMIN', teamId: 'T1', channelId: 'C1' }), isAdmin: true }, 'auditChannel', { channelId: 'C-audit' });
    const recordings: Promise<void>[] = [];
    const swept = claimed.find((r) => r.id === unrecorded.id)!;
    const noClient = async () => undefined;
    await sweepInterrupted({ clientFor: noClient, writer: {} as never, store: nextStore, logger: silentLogger(), request: swept, runner, requester: requesterOf, track: (recording) => void recordings.push(recording) });
    // The stop posts what waits for the audit channel; the recording resolves once it was posted.
    await runner.shutdown({ graceMs: 0 });
    await Promise.all(recordings);
    const history: unknown[] = [];
    for await (const { value } of next.store.space(next.spaces.history).entries()) history.push(value);
    expect(history).toMatchObject([[{ key: unrecorded.id, status: 'failed' }]]);
    expect(poster.posts.flatMap((post) => post.entries)).toMatchObject([{ type: 'job', userId: 'U1', status: 'failed:server_error', prompt: '' }]);
    expect(JSON.stringify([history, poster.posts])).not.toContain(MARKER);
    expect(await nextStore.get(unrecorded.id)).toMatchObject({ status: 'ended', endRecorded: true });
  });

  it.skipIf(skip)('keeps a Discord record whose end is still to be recorded, without its prompt nor its images, for the next sweep to record that end; one recorded goes', async () => {
    const processes = await backendOf(backend);
    const state = await processes.open();
    const store = new JobRecordStore({ state, logger: silentLogger() });
    const requester = { platform: 'discord' as const, userId: '1', channelId: '2', scopeId: '3' };
    const [running, unrecorded, recorded] = [store.newKey(), store.newKey(), store.newKey()];
    const image = Buffer.from(`${MARKER} pixels`);
    for (const key of [running, unrecorded, recorded]) {
      await store.add({ key, kind: 'edit', prompt: `make it ${MARKER}`, options: {}, requester, status: 'running', runnerJobId: `job-${key}` }, [{ data: image }]);
      await store.saveOutputs(key, [image], ['png']);
    }
    const end = { type: 'completed' as const };
    await store.markEnded(unrecorded, 'completed', { end });
    await store.markEnded(recorded, 'completed', { end });
    await store.markEndRecorded(recorded);

    await state.forget('discord:1');
    expect(await store.get(running)).toMatchObject({ prompt: '', status: 'running' });
    // A running job's images are its Retry's; an ended one's go, and the console's link to them.
    expect(await store.readInputs(running)).toHaveLength(1);
    expect(await store.get(unrecorded)).toMatchObject({ prompt: '', status: 'completed', end, inputs: [], outputs: [] });
    expect(await store.keptOutputs(`job-${unrecorded}`)).toBeUndefined();
    const images = state.store.space<Buffer>(state.spaces.discordImages);
    expect([await images.get(`${unrecorded}-in-0`), await images.get(`${unrecorded}-out-0`), await images.get(`${running}-in-0`)]).toEqual([undefined, undefined, image]);
    expect(await store.get(recorded)).toBeUndefined();
    expect(await store.keptOutputs(`job-${recorded}`)).toBeUndefined();
    await state.close();
    const claimed = await new JobRecordStore({ state: await processes.open(), logger: silentLogger() }).claimInterrupted();
    expect(claimed.map((r) => [r.key, r.prompt, r.end]).sort()).toEqual([[running, '', undefined], [unrecorded, '', end]].sort());
  });

  it.skipIf(skip)('decides what a record keeps from the record as it is when written, not as the scan read it: a job that ended meanwhile loses its images, one whose end was recorded meanwhile goes', async () => {
    const state = await (await backendOf(backend)).open();
    const store = new JobRecordStore({ state, logger: silentLogger() });
    const requester = { platform: 'discord' as const, userId: '1', channelId: '2', scopeId: '3' };
    const [ending, recording] = [store.newKey(), store.newKey()];
    const image = Buffer.from(`${MARKER} pixels`);
    for (const key of [ending, recording]) {
      await store.add({ key, kind: 'edit', prompt: `make it ${MARKER}`, options: {}, requester, status: 'running', runnerJobId: `job-${key}` }, [{ data: image }]);
      await store.saveOutputs(key, [image], ['png']);
    }
    const end = { type: 'completed' as const };
    await store.markEnded(recording, 'completed', { end });
    // Forget's scan reads them so: one running, one whose end is still to be recorded.
    await scansSeeNow(state, state.spaces.discordJobs);
    // Before it writes them, the one job ends (its end still to be recorded), the other's end is recorded.
    await store.markEnded(ending, 'completed', { end });
    await store.markEndRecorded(recording);

    await state.forget('discord:1');
    expect(await store.get(ending)).toMatchObject({ prompt: '', status: 'completed', end, inputs: [], outputs: [] });
    const images = state.store.space<Buffer>(state.spaces.discordImages);
    expect([await images.get(`${ending}-in-0`), await images.get(`${ending}-out-0`)]).toEqual([undefined, undefined]);
    expect(await store.keptOutputs(`job-${ending}`)).toBeUndefined();
    expect(await store.get(recording)).toBeUndefined();
  });

  it.skipIf(skip)('erases a record that neither runs nor ended whatever end it carries: only an ended one has an end to record, the one a sweep takes', async () => {
    const state = await (await backendOf(backend)).open();
    const store = new JobRecordStore({ state, logger: silentLogger() });
    const requester = { platform: 'discord' as const, userId: '1', channelId: '2', scopeId: '3' };
    const key = store.newKey();
    await store.add({ key, kind: 'edit', prompt: `make it ${MARKER}`, options: {}, requester, status: 'draft', end: { type: 'cancelled' } });

    await state.forget('discord:1');
    expect(await store.get(key)).toBeUndefined();
    expect(await store.claimInterrupted()).toEqual([]);
  });
});

describe.each([
  { backend: 'file' as const, skip: undefined },
  { backend: 'redis' as const, skip: redis.skipReason },
])('forget, on the $backend backend, past records it cannot read', ({ backend, skip }) => {
  it.skipIf(skip)('skips a record a hand edit left null and deletes a damaged one naming the member (its prompt with it), erasing all the rest', async () => {
    const processes = await backendOf(backend);
    const state = await processes.open();
    const jobs = state.store.space(state.spaces.discordJobs);
    for (const [key, userId] of [['mine', '42'], ['blanked', '7'], ['damaged', '42'], ['damagedOther', '7']] as const) await jobs.put(key, endedJob(key, userId));
    await state.store.space(state.spaces.history).put('discord-42', [{ key: 'mine', prompt: `a ${MARKER} cat` }]);
    await processes.keep(state, state.spaces.discordJobs, 'blanked', 'null');
    // A trailing comma a hand edit left: no longer JSON, so it reads as none, but it still holds the member's prompt.
    for (const [key, userId] of [['damaged', '42'], ['damagedOther', '7']] as const) await processes.keep(state, state.spaces.discordJobs, key, JSON.stringify(endedJob(key, userId)).replace(/}$/, ',}'));

    await state.forget('discord:42');
    expect([await jobs.has('mine'), await jobs.has('damaged'), await state.store.space(state.spaces.history).has('discord-42')]).toEqual([false, false, false]);
    // Another member's records stay, as they are.
    expect([await jobs.has('blanked'), await jobs.read('damagedOther')]).toEqual([true, UNREADABLE]);
  });

  it.skipIf(skip)('erases all the rest when erasing one record fails, then fails itself', async () => {
    const state = await (await backendOf(backend)).open();
    const jobs = state.store.space(state.spaces.discordJobs);
    for (const key of ['failing', 'mine']) await jobs.put(key, endedJob(key, '42'));
    await state.store.space(state.spaces.history).put('discord-42', [{ key: 'mine', prompt: `a ${MARKER} cat` }]);
    const real = state.store.space.bind(state.store);
    vi.spyOn(state.store, 'space').mockImplementation(((definition: SpaceDefinition) => {
      const actual = real(definition);
      if (definition !== state.spaces.discordJobs) return actual;
      return new Proxy(actual, {
        get: (target, name) => {
          const member: unknown = Reflect.get(target, name, target);
          if (name === 'update') return (key: string, ...rest: unknown[]) => (key === 'failing' ? Promise.reject(new Error('disk error')) : target.update(key, ...(rest as [never])));
          return typeof member === 'function' ? member.bind(target) : member;
        },
      });
    }) as typeof state.store.space);

    await expect(state.forget('discord:42')).rejects.toThrow(/1 part\(s\) failed/);
    vi.restoreAllMocks();
    expect([await jobs.has('failing'), await jobs.has('mine'), await state.store.space(state.spaces.history).has('discord-42')]).toEqual([true, false, false]);
  });
});

describe('forget on the data folder, after a crash in the middle of a write', () => {
  it('removes the temporary files the write left (each a whole version holding the prompt): the bots’ records and history, and the ledger’s', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-forget-leftovers-'));
    closers.push(() => rm(dataDir, { recursive: true, force: true }));
    const ledger = new FileQuotaStore({ dir: dataDir });
    closers.push(() => ledger.close());
    const state = await openBotState({ dataDir, ledger, logger: silentLogger() });
    closers.push(() => state.close());
    await state.store.space(state.spaces.discordJobs).put('mine', endedJob('mine', '42'));
    await state.store.space(state.spaces.history).put('discord-42', [{ key: 'mine', prompt: `a ${MARKER} cat` }]);
    // A process killed between a write's temporary file and its rename (its pid now another's, or alive again).
    const left = `.${process.pid + 1}.0a1b2c3d.tmp`;
    for (const file of ['discord/jobs/mine.json', 'history/members/discord-42.json', 'quota-ledger.json']) await writeFile(join(dataDir, `${file}${left}`), `{"prompt":"a ${MARKER} cat"}`);

    await state.forget('discord:42');
    const files = (await readdir(dataDir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
    const holding = [];
    for (const file of files) if ((await readFile(file, 'utf8')).includes(MARKER)) holding.push(file);
    expect(holding).toEqual([]);
  });
});

describe('forget, then a crash before a Discord job’s shown end was recorded', () => {
  let h: DiscordHarness | undefined;
  let unhang: (() => void) | undefined;
  afterEach(async () => {
    unhang?.();
    await h?.close();
    h = undefined;
  });

  it('has the next start’s sweep record that end, in the member’s history and the audit channel, with no prompt', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const harness = h;
    const audit = snowflake();
    const permissions = String(PermissionFlagsBits.ManageGuild);
    await answerOf(harness, harness.discord.slashCommand('imagine-admin audit', { channel: { channel: { id: audit, name: 'audit' } } }, { permissions }));
    // The process dies while its runner records the job's end: that record never resolves. This runner's own, not the
    // class's: the files of a test worker share their modules, and a runner another file left could take that hang.
    const recordEnded = vi.spyOn(harness.runner, 'recordEnded').mockImplementationOnce(() => new Promise<void>((resolve) => (unhang = resolve)));
    const ix = harness.discord.slashCommand('imagine', { prompt: `a ${MARKER} lighthouse` });
    await harness.finalReply(ix);
    await harness.discord.waitFor(() => recordEnded.mock.calls.length > 0 || undefined, 'the runner recording the job’s end');
    await harness.state.forget(`discord:${ix.user.id}`);
    await harness.restart({ crash: true });

    await harness.discord.waitFor(() => harness.logger.entries.find((e) => e.msg === 'recorded the end of a job the last stop left unrecorded'), 'the sweep');
    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: harness.discord.guildId };
    const history = await harness.runner.history!.mine(requester);
    expect(history).toMatchObject([{ status: 'completed' }]);
    // The stop posts what waits for the audit channel.
    await harness.runner.shutdown({ graceMs: 0 });
    const posted = harness.discord.channelMessages(audit).flatMap((m) => m.embeds.map((e) => String(e.description)));
    expect(posted.filter((text) => text.includes(`<@${ix.user.id}>`))).toHaveLength(1);
    expect(JSON.stringify([history, posted])).not.toContain(MARKER);
  });
});
