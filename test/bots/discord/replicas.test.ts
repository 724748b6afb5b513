import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startDiscordBot, type DiscordBot } from '../../../bots/discord/index.js';
import { JobRecordStore, type JobRecord } from '../../../bots/discord/JobRecordStore.js';
import { say, usd } from '../../../bots/runner/index.js';
import { FileQuotaStore, JobRunner, RedisQuotaStore, type QuotaStore } from '../../../bots/runner/index.js';
import { openBotState, type BotState } from '../../../bots/state/index.js';
import { createEmulator, DEV_API_KEY } from '../../../src/emulator/index.js';
import { PictorClient } from '../../../src/index.js';
import { RedisLink, silentLogger } from '../../../src/internal.js';
import { FakeDiscord, buttonsOf } from '../../fakes/discord/FakeDiscord.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { deliveringToBoth, deliveringToBothAtOnce } from '../../helpers/delivering-to-both.js';
import { buttonId, drawingReply } from './harness.js';
import { keyOf } from './reply-scene.js';
import { jobStoreOf, spyOnInstance } from '../../helpers/instance-spy.js';

const redis = testRedis();
const LEASE_MS = 600;

/** One replica: its own runner, ledger, data folder, Redis link and lease; the shared Redis prefix. */
interface Replica {
  bot: DiscordBot;
  /** Sends the next interactions to this replica. */
  use(): void;
  runner: JobRunner;
  /** Its own ledger, or with `sharedLedger` the account's on the shared Redis (which the bot reads what it charged from). */
  quota: QuotaStore;
  state: BotState;
  link: RedisLink;
  /** As kill -9: the gateway connection and Redis drop, nothing is stopped politely. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

describe.skipIf(redis.skipReason)(`Discord replicas on one Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  async function setUp(latencyMs: number) {
    const url = requireRedisUrl(redis);
    const prefix = uniquePrefix('discord-replicas');
    const discord = await FakeDiscord.start({ messageRateLimit: { limit: 30, windowMs: 5000 }, heartbeatIntervalMs: 1000 });
    const emulator = createEmulator({ latencyMs, recordImageBytes: true });
    const server = await emulator.listen({ port: 0 });
    cleanups.push(async () => {
      await discord.close();
      await server.close();
      await emulator.close();
      await deleteKeys(url, prefix);
    });
    /** `leaseMs`: its own lease (a third of it paces its sweeps after the first). */
    const replica = async ({ leaseMs = LEASE_MS, sharedLedger = false }: { leaseMs?: number; sharedLedger?: boolean } = {}): Promise<Replica> => {
      const dataDir = await mkdtemp(join(tmpdir(), 'pictor-discord-replica-'));
      const link = await RedisLink.open({ url, prefix });
      const quota = sharedLedger ? new RedisQuotaStore({ redis: link.commands, prefix }) : new FileQuotaStore({ dir: dataDir });
      const runner = new JobRunner({ client: new PictorClient({ baseURL: server.url, apiKey: DEV_API_KEY, maxRetries: 0 }), store: quota, limits: sharedLedger ? { userConcurrentJobs: 1 } : {}, minUpdateIntervalMs: 5, partialImages: 0 });
      const state = await openBotState({ dataDir, redis: link, leaseMs, logger: silentLogger() });
      const bot = await startDiscordBot({
        token: discord.botToken,
        applicationId: discord.applicationId,
        apiBaseUrl: discord.apiBaseUrl,
        runner,
        ...(sharedLedger && { ledger: quota }),
        state,
        allowedAttachmentHosts: [discord.cdnHost],
        // Over HTTP, the test picks which replica an interaction reaches (`discord.interactionsEndpoint`).
        interactions: { publicKey: discord.publicKeyHex, port: 0, host: '127.0.0.1' },
        logger: silentLogger(),
        stopGraceMs: 2000,
      });
      let stopped = false;
      const stop = async () => {
        if (stopped) return;
        stopped = true;
        await runner.shutdown({ graceMs: 500 });
        await bot.stop();
        await state.close();
        await link.close();
        await quota.close();
        await rm(dataDir, { recursive: true, force: true });
      };
      cleanups.push(stop);
      return {
        bot,
        use: () => (discord.interactionsEndpoint = bot.interactionsUrl),
        runner,
        quota,
        state,
        link,
        stop,
        async kill() {
          stopped = true;
          link.commands.disconnect();
          link.subscriber().disconnect();
          await bot.client?.destroy();
          cleanups.push(async () => {
            await bot.stop();
            await runner.shutdown({ graceMs: 0 });
            await quota.close();
            await rm(dataDir, { recursive: true, force: true });
          });
        },
      };
    };
    return { discord, emulator, replica, url, prefix };
  }

  it('a Reroll pressed on replica B runs the job replica A made (its spec from Redis)', async () => {
    const { discord, emulator, replica } = await setUp(100);
    const a = await replica();
    const b = await replica();
    a.use();
    const first = discord.slashCommand('imagine', { prompt: 'a red kite', size: '1536x1024', quality: 'low' });
    const result = await discord.waitFor(() => {
      const m = discord.original(first);
      return m && buttonsOf(m).some((b) => /^pictor:reroll:/.test(b.custom_id)) ? m : undefined;
    }, 'the job on A');
    b.use();
    const click = discord.clickButton(result, buttonId(result, 'Reroll'));
    await discord.waitFor(() => {
      const m = discord.original(click);
      return m && buttonsOf(m).some((b) => /^pictor:reroll:/.test(b.custom_id)) ? m : undefined;
    }, 'the reroll on B');
    const sent = emulator.requests.filter((r) => r.route === 'generations');
    expect(sent).toHaveLength(2);
    expect(sent[1]!.fields).toMatchObject({ prompt: 'a red kite', size: '1536x1024', quality: 'low' });
  });

  it('when replica A dies mid-job, replica B marks its job interrupted within the lease, with Retry', async () => {
    const { discord, replica } = await setUp(30_000);
    const a = await replica();
    await replica();
    a.use();
    const ix = discord.slashCommand('imagine', { prompt: 'a job the crash ate' });
    const running = await drawingReply({ discord }, ix, 'the job to start on A');
    await a.kill();
    const killedAt = Date.now();
    const swept = await discord.waitFor(() => {
      const m = discord.messages.get(running.id)!;
      return m.content.includes('restarted') ? m : undefined;
    }, 'replica B to sweep A’s job');
    expect(Date.now() - killedAt).toBeLessThan(LEASE_MS * (1 + 1 / 3) + 1500);
    expect(keyOf(swept.content.split('\n')[1]!)).toBe('discord.job.interrupted');
    expect(buttonsOf(swept).map((b) => b.label)).toEqual(['Retry']);
    // Swept once: one replica claimed it.
    expect(discord.channelMessages().filter((m) => m.content.includes('restarted'))).toHaveLength(1);
  });

  it('when replica A dies mid-job, its request sent, replica B’s “stopped” says what the account’s ledger charged it once A’s ledger lease is gone, and frees the member’s one job at once', async () => {
    const { discord, replica, url, prefix } = await setUp(30_000);
    const a = await replica({ sharedLedger: true });
    const b = await replica({ sharedLedger: true });
    a.use();
    const ix = discord.slashCommand('imagine', { prompt: 'a job the crash ate, charged' });
    const running = await drawingReply({ discord }, ix, 'the job to start on A');
    const [reserved] = await b.quota.activeJobs();
    expect(reserved).toMatchObject({ sent: true });
    await a.kill();
    // A's ledger lease (60 s) would outlive its lease on the job (600 ms here): gone now, as once it lapsed.
    const admin = await RedisLink.open({ url, prefix });
    await admin.commands.del(`${prefix}:quota:owner:${reserved!.owner}`);
    await admin.close();
    const swept = await discord.waitFor(() => {
      const m = discord.messages.get(running.id)!;
      return m.content.includes('restarted') ? m : undefined;
    }, 'replica B to sweep A’s job');
    expect(swept.content.split('\n').slice(1)).toEqual([say('en-US', 'discord.job.interrupted'), say('en-US', 'discord.job.charged', { usd: usd(reserved!.usd) })]);
    expect(await b.quota.activeJobs()).toEqual([]);
    expect(await b.quota.usage({})).toEqual([expect.objectContaining({ jobId: reserved!.jobId, basis: 'uncertain', costUsd: reserved!.usd })]);
    // One job at once: the member's next one is taken, the dead job's reservation ended.
    b.use();
    await drawingReply({ discord }, discord.slashCommand('imagine', { prompt: 'the next job' }), 'the member’s next job on B');
  });

  it('a Cancel pressed on replica B stops the job running on replica A: its request is aborted, it is charged once, its reply says who cancelled', async () => {
    const { discord, emulator, replica } = await setUp(30_000);
    const a = await replica();
    const b = await replica();
    a.use();
    const ix = discord.slashCommand('imagine', { prompt: 'a job running on a' });
    const running = await discord.waitFor(() => {
      const m = discord.original(ix);
      return m?.content.includes('Drawing') && emulator.stats().openStreams === 1 ? m : undefined;
    }, 'the job to reach the service from A');
    b.use();

    // B checks who may cancel, from the job's record: a stranger is refused there and A's job goes on.
    const stranger = discord.newUser('mallory');
    const denied = discord.clickButton(running, buttonId(running, 'Cancel'), { user: stranger });
    const note = await discord.waitFor(() => discord.original(denied), 'B’s refusal');
    expect(note.flags & 64).toBe(64);
    expect(note.content).toBe(`✋ Only <@${discord.user.id}> or an admin can cancel this job.`);
    const [job] = a.runner.activeJobs();
    expect(job).toBeDefined();

    const click = discord.clickButton(running, buttonId(running, 'Cancel'));
    const cancelled = await discord.waitFor(() => {
      const m = discord.messages.get(running.id)!;
      return m.content.includes('Cancelled') ? m : undefined;
    }, 'A to cancel its job');
    expect(click.ack?.type).toBe(6);
    expect(cancelled.content.split('\n')[1]).toBe(`✖️ Cancelled by <@${discord.user.id}>.`);
    expect(buttonsOf(cancelled).map((b) => b.label)).toEqual(['Retry']);
    await discord.waitFor(() => emulator.stats().openStreams === 0 || undefined, 'the service request to be aborted');
    const info = a.runner.get(job!.id);
    expect(info?.status).toBe('cancelled');
    // Sent, then cut off: charged its estimate once, on A's ledger only.
    expect(await a.quota.spentToday(`discord:${discord.user.id}`, Date.now())).toBeCloseTo(info!.estimate.totalUsd, 9);
    expect(await b.quota.spentToday(`discord:${discord.user.id}`, Date.now())).toBe(0);
  });

  /** The Discord job records of a third process on the same Redis (no bot): the test does its sweep's claim. */
  async function recordsOfThirdProcess(url: string, prefix: string): Promise<JobRecordStore> {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-discord-replica-'));
    const link = await RedisLink.open({ url, prefix });
    const state = await openBotState({ dataDir: dir, redis: link, leaseMs: LEASE_MS, logger: silentLogger() });
    cleanups.push(async () => {
      await state.close();
      await link.close();
      await rm(dir, { recursive: true, force: true });
    });
    return new JobRecordStore({ state, logger: silentLogger() });
  }

  it('shows a dead replica’s job once when a Cancel on replica B meets the sweep of replica C: C claimed it, B tells the member privately that its end is being shown', async () => {
    const { discord, replica, url, prefix } = await setUp(30_000);
    const a = await replica();
    // B sweeps at its start only (its next sweep is a minute away): C's sweep is the one that takes A's job.
    const b = await replica({ leaseMs: 180_000 });
    // C: a third process on the same Redis, its sweep's claim done by the test.
    const c = await recordsOfThirdProcess(url, prefix);
    a.use();
    const ix = discord.slashCommand('imagine', { prompt: 'a job the crash ate' });
    const running = await drawingReply({ discord }, ix, 'the job to start on A');
    await a.kill();
    await vi.waitFor(async () => expect(await b.link.commands.exists(`${prefix}:bots:lease:${a.state.store.owner}`)).toBe(0), { timeout: 15_000, interval: 20 });

    // B finds A's job held by nobody alive; C's sweep claims it right then, before B shows anything.
    const claimedByC: JobRecord[] = [];
    const runsElsewhere = JobRecordStore.prototype.runsElsewhere;
    spyOnInstance(JobRecordStore.prototype, 'runsElsewhere', jobStoreOf(b)).mockImplementationOnce(async function (this: JobRecordStore, key: string) {
      const elsewhere = await runsElsewhere.call(this, key);
      claimedByC.push(...(await c.claimInterrupted()));
      return elsewhere;
    });
    b.use();
    const click = discord.clickButton(running, buttonId(running, 'Cancel'));
    const note = await discord.waitFor(() => [...discord.messages.values()].find((m) => m.interactionId === click.id && (m.flags & 64) === 64), 'B’s private answer');
    expect(click.ack?.type).toBe(6);
    expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.being_shown')}`);
    expect(claimedByC.map((r) => r.key)).toEqual([buttonId(running, 'Cancel').split(':')[2]]);
    // Left to C's sweep: B changed nothing of it.
    expect(discord.messages.get(running.id)!.content).toContain('Drawing');
    expect(discord.channelMessages().filter((m) => m.content.includes('restarted'))).toHaveLength(0);
  });

  it('leaves a dead replica’s job to a sweep when a Cancel on replica B cannot claim what gone processes left: B holds it not, so it tells the member privately to press again and shows nothing', async () => {
    const { discord, replica, url, prefix } = await setUp(30_000);
    const a = await replica();
    // B sweeps at its start only (its next sweep is a minute away).
    const b = await replica({ leaseMs: 180_000 });
    a.use();
    const ix = discord.slashCommand('imagine', { prompt: 'a job whose claim failed' });
    const running = await drawingReply({ discord }, ix, 'the job to start on A');
    const key = buttonId(running, 'Cancel').split(':')[2]!;
    await a.kill();
    await vi.waitFor(async () => expect(await b.link.commands.exists(`${prefix}:bots:lease:${a.state.store.owner}`)).toBe(0), { timeout: 15_000, interval: 20 });

    // Every claim of A's or B's fails while B answers the Cancel (a sweep timer of A's, killed, may claim too).
    const claim = spyOnInstance(JobRecordStore.prototype, 'claimInterrupted', (store) => jobStoreOf(a)(store) || jobStoreOf(b)(store)).mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    b.use();
    const click = discord.clickButton(running, buttonId(running, 'Cancel'));
    const note = await discord.waitFor(() => [...discord.messages.values()].find((m) => m.interactionId === click.id && (m.flags & 64) === 64), 'B’s private answer');
    expect(claim).toHaveBeenCalled();
    expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.not_updated')}`);
    expect(discord.messages.get(running.id)!.content).toContain('Drawing');
    expect(discord.channelMessages().filter((m) => m.content.includes('restarted'))).toHaveLength(0);
    claim.mockRestore();
    // Still left for a sweep to claim (a third process's here): shown by one process only.
    const c = await recordsOfThirdProcess(url, prefix);
    expect((await c.claimInterrupted()).map((r) => r.key)).toEqual([key]);
  });

  /** Two replicas behind a load balancer that delivers each POST to both (`balance`), Discord POSTing to it. */
  async function behindBalancer<P extends { url: string; close(): Promise<void> }>(balance: (first: string, second: string) => Promise<P>) {
    const { discord, emulator, replica } = await setUp(50);
    const a = await replica();
    const b = await replica();
    const proxy = await balance(a.bot.interactionsUrl!, b.bot.interactionsUrl!);
    cleanups.push(proxy.close);
    discord.interactionsEndpoint = proxy.url;
    return { discord, emulator, proxy };
  }

  it('runs a signed interaction POSTed to two replicas (a replay through the load balancer) once, and answers the second POST 409', async () => {
    const { discord, emulator, proxy } = await behindBalancer(deliveringToBoth);
    const ix = discord.slashCommand('imagine', { prompt: 'a pear', quality: 'low' });
    await discord.waitFor(() => {
      const m = discord.original(ix);
      return m && buttonsOf(m).some((b) => /^pictor:reroll:/.test(b.custom_id)) ? m : undefined;
    }, 'the job');
    expect(ix.httpStatus).toBe(200);
    expect(await proxy.secondStatus).toBe(409);
    expect(emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(1);
  });

  it('takes a signed interaction POSTed to two replicas at once (a retry while the first is in flight) once: one 200, one 409, one image request', async () => {
    const { discord, emulator, proxy } = await behindBalancer(deliveringToBothAtOnce);
    discord.slashCommand('imagine', { prompt: 'a pear', quality: 'low' });
    // Either replica may take it; the answer Discord gets may be the refused one, so the job's messages are not awaited.
    expect((await proxy.statuses).toSorted()).toEqual([200, 409]);
    await discord.waitFor(() => emulator.requests.some((r) => r.route === 'generations'), 'the image request');
    expect(emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(1);
  });
});
