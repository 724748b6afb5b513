import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { REST } from 'discord.js';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startDiscordBot } from '../../../bots/discord/start-discord-bot.js';
import { closeRedis, connectRedis } from '../../../src/core/redis-connection.js';
import { withTimeout } from '../../../src/core/with-timeout.js';
import { LEDGER_FILES } from '../../../src/spend/ledger-files.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { spyOnInstance } from '../../helpers/instance-spy.js';
import { DiscordHarness, RecordingLogger } from './harness.js';
import { notesOf } from './reply-scene.js';

/** Every file of the bots' state in the data folder (its subfolders; the ledger's files are at the top, its usage records in `usage/`), with its content. */
async function stateFiles(dataDir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (path !== join(dataDir, LEDGER_FILES.usage)) await walk(path);
      }
      else if (dir !== dataDir) files[relative(dataDir, path)] = (await readFile(path)).toString('base64');
    }
  };
  await walk(dataDir);
  return files;
}

/**
 * Stops the bot again, with an until 500 ms from now, while `first` (a stop given none) runs: both end by that until
 * (a little after, for the turn of the event loop that ends the last wait and the gateway's close), the bot off the
 * gateway, stopped once.
 */
async function stopAgainByAnEarlierUntil(h: DiscordHarness, first: Promise<void>): Promise<void> {
  const until = Date.now() + 500;
  const second = h.bot.stop({ until });
  // Bounded so that a stop waiting by its first call's bounds fails with its name, not a test timeout.
  await withTimeout(Promise.all([first, second]), 10_000, 'the stop waited past the earlier until');
  expect(Date.now() - until).toBeLessThan(2_000);
  expect(h.discord.openGatewayConnections).toBe(0);
  expect(h.logger.entries.filter((e) => e.msg === 'Discord bot stopped')).toHaveLength(1);
}

describe('a stopped Discord bot', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    await h?.close();
  });

  it.each([
    ['leaves at once when stopped with no grace', () => ({ graceMs: 0 })],
    ['is done by the stop’s until when that comes first', () => ({ until: Date.now() + 500 })],
  ])('%s, its job replies still on their way, however long its stopGraceMs', async (_, stopOptions) => {
    h = await DiscordHarness.start({ partialImages: 0, bot: { stopGraceMs: 600_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a reply still on its way' });
    const release = h.discord.holdWebhookCalls(ix);
    await h.discord.waitFor(() => h.discord.webhookCallsHeld > 0, 'an update of the job on its way to Discord');

    try {
      // Bounded so that a stop waiting for the held reply fails with its name, not a test timeout.
      await withTimeout(h.bot.stop(stopOptions()), 10_000, 'stop() waited for the reply in flight');
      expect(h.discord.webhookCallsHeld).toBeGreaterThan(0);
      expect(h.discord.openGatewayConnections).toBe(0);
      expect(h.logger.entries.some((e) => e.msg === 'stopped the Discord bot with job replies still being shown')).toBe(true);
    } finally {
      // Let go whatever failed above, so the harness's close does not wait on the held reply.
      release();
    }
    await h.finalReply(ix);
  });

  it('stops once, by the earlier until of a second stop, the first one waiting for its job replies with no until', async () => {
    h = await DiscordHarness.start({ partialImages: 0, bot: { stopGraceMs: 600_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a reply still on its way' });
    const release = h.discord.holdWebhookCalls(ix);
    await h.discord.waitFor(() => h.discord.webhookCallsHeld > 0, 'an update of the job on its way to Discord');

    try {
      // The first stop alone would wait its grace (600 s) for the reply held.
      await stopAgainByAnEarlierUntil(h, h.bot.stop());
    } finally {
      release();
    }
    await h.finalReply(ix);
  });

  it.each([Infinity, NaN, -1, 2 ** 31])('refuses a stopGraceMs of %s, naming it, before it connects', async (stopGraceMs) => {
    // Refused before anything is used: setTimeout would take such a grace as 1 ms, and stop() would wait for nothing.
    const start = startDiscordBot({ token: 'unused', runner: {} as never, state: {} as never, logger: {} as never, stopGraceMs });
    await expect(start).rejects.toThrow(RangeError);
    await expect(start).rejects.toThrow(/stopGraceMs/);
  });

  it.each([Infinity, NaN, -1, 2 ** 31])('refuses a replyRetryDelaysMs holding %s, naming it, before it connects', async (delay) => {
    const start = startDiscordBot({ token: 'unused', runner: {} as never, state: {} as never, logger: {} as never, replyRetryDelaysMs: [1000, delay] });
    await expect(start).rejects.toThrow(RangeError);
    await expect(start).rejects.toThrow(/replyRetryDelaysMs\[1\]/);
  });

  it('refuses an empty replyRetryDelaysMs, naming it, before it connects', async () => {
    const start = startDiscordBot({ token: 'unused', runner: {} as never, state: {} as never, logger: {} as never, replyRetryDelaysMs: [] });
    await expect(start).rejects.toThrow(RangeError);
    await expect(start).rejects.toThrow(/replyRetryDelaysMs/);
  });

  it.each([Infinity, NaN, -1, 2 ** 31])('refuses a stop with a graceMs of %s, naming it, and goes on taking commands', async (graceMs) => {
    h = await DiscordHarness.start({ partialImages: 0 });
    await expect(h.bot.stop({ graceMs })).rejects.toThrow(RangeError);
    await expect(h.bot.stop({ graceMs })).rejects.toThrow(/graceMs/);
    const ix = h.discord.slashCommand('imagine', { prompt: 'still taken' });
    await h.finalReply(ix);
  });

  it('ends a reply’s wait before it sends a channel message again once the stop waits no longer for the replies being shown', async () => {
    // A day between two tries: only the stop can end the wait.
    h = await DiscordHarness.start({ partialImages: 0, bot: { stopGraceMs: 0, replyRetryDelaysMs: [24 * 60 * 60_000] } });
    // Discord fails on each of discord.js's tries of the job's end in the channel (its token spent): the reply waits to try again.
    h.discord.failNext({ route: 'channel-message', method: 'POST' }, { status: 500, code: 0, message: 'Internal Server Error', count: 4 });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a reply whose channel message failed' });
    h.discord.expireToken(ix.token);
    const posts = () => h.discord.requests.filter((r) => r.route === 'channel-message' && r.method === 'POST');
    await h.discord.waitFor(() => posts().length === 4, 'discord.js’s tries of the end in the channel');
    await h.bot.stop();

    // Not tried again: the member is told its image may be missing instead.
    const file = posts()[0]!.files.map((f) => f.filename).join(', ');
    const toldMissing = (content: string) => notesOf(content).at(-1) === 'discord.job.files_may_be_missing' && content.includes(file);
    await h.discord.waitFor(() => h.discord.channelMessages().some((m) => toldMissing(m.content)), 'the member told the image may be missing');
    expect(posts().filter((r) => r.body?.nonce === posts()[0]!.body?.nonce)).toHaveLength(4);
  });

  it('warns of no listener leak while more than 10 replies wait to send a channel message again (a Discord outage)', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      h = await DiscordHarness.start({ partialImages: 0, bot: { stopGraceMs: 0, replyRetryDelaysMs: [24 * 60 * 60_000] } });
      const jobs = 11;
      // Discord fails on each of discord.js's tries of every job's end in the channel (their tokens spent): each reply waits to try again.
      h.discord.failNext({ route: 'channel-message', method: 'POST' }, { status: 500, code: 0, message: 'Internal Server Error', count: 4 * jobs });
      for (let i = 0; i < jobs; i++) h.discord.expireToken(h.discord.slashCommand('imagine', { prompt: `a reply waiting ${i}` }).token);
      const posts = () => h.discord.requests.filter((r) => r.route === 'channel-message' && r.method === 'POST');
      // Each reply logs the failure of its try as it starts its wait.
      const failed = () => h.logger.entries.filter((e) => e.msg === 'Discord refused an update of a job reply' && (e.obj as { what?: string }).what === 'final' && (e.obj as { status?: number }).status === 500);
      await h.discord.waitFor(() => failed().length === jobs, 'every reply waiting to try its end again');
      await h.bot.stop();
      await h.discord.waitFor(() => posts().length === 5 * jobs, 'each member told the image may be missing');
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
  });

  it('writes nothing more into its data folder, even for a job whose reply it gave up waiting for', async () => {
    // The stop waits for no reply at all: the job below is still being shown when the bot is stopped.
    h = await DiscordHarness.start({ partialImages: 0, bot: { stopGraceMs: 0 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a reply still on its way' });
    const release = h.discord.holdWebhookCalls(ix);
    await h.discord.waitFor(() => h.discord.webhookCallsHeld > 0, 'an update of the job on its way to Discord');

    let atClose: Record<string, string>;
    try {
      await h.bot.stop();
      await h.state.close();
      atClose = await stateFiles(h.dataDir);
      expect(Object.keys(atClose).some((file) => file.startsWith(join('discord', 'jobs')))).toBe(true);
    } finally {
      // The job goes on to its end (its result, its record's status and kept images would be written now).
      release();
    }
    await h.finalReply(ix);
    expect(await h.runner.drain(15_000)).toBe(0);
    expect(await stateFiles(h.dataDir)).toEqual(atClose);
    // It tried: the record's end was refused by the closed state, and logged.
    expect(h.logger.text()).toMatch(/the bots' state is closed/);
  });
});

describe.skipIf(testRedis().skipReason)('a stopped Discord bot with a gateway lease', () => {
  let h: DiscordHarness | undefined;
  let redis: Redis | undefined;
  const prefix = uniquePrefix('discord-stop');
  afterEach(async () => {
    await h?.close();
    if (redis) await closeRedis(redis);
    await deleteKeys(requireRedisUrl(testRedis()), prefix);
    h = redis = undefined;
  });

  it('is done by the earlier until of a second stop that comes while it leaves, its waits on an unanswering Redis cut short', async () => {
    const connected = (redis = await connectRedis(requireRedisUrl(testRedis()), { name: 'discord-stop-test' }));
    // Redis answers renewals at 5 s: a leave that waits on Redis by its first stop's bounds waits 5 s, then 2 s more.
    const lease = { redis: connected, key: `${prefix}:lease`, ttlMs: 15_000, renewEveryMs: 5_000, pollEveryMs: 250 };
    h = await DiscordHarness.start({ partialImages: 0, bot: { stopGraceMs: 600_000, gatewayLease: lease } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a reply still on its way' });
    const release = h.discord.holdWebhookCalls(ix);
    await h.discord.waitFor(() => h!.discord.webhookCallsHeld > 0, 'an update of the job on its way to Discord');

    // From now on Redis takes the lease's scripts (the standby mark and the lease given back) and never answers them.
    const evaluate = connected.eval.bind(connected) as (...args: unknown[]) => Promise<unknown>;
    const unanswered: (() => void)[] = [];
    const evals = vi.spyOn(connected, 'eval').mockImplementation(((...args: unknown[]) =>
      String(args[2]).startsWith(lease.key) ? new Promise((resolve) => unanswered.push(() => resolve(evaluate(...args)))) : evaluate(...args)) as typeof connected.eval);
    try {
      const first = h.bot.stop();
      await vi.waitFor(() => expect(unanswered.length).toBeGreaterThan(0), { timeout: 15_000 });
      await stopAgainByAnEarlierUntil(h, first);
    } finally {
      evals.mockRestore();
      for (const answer of unanswered) answer();
      release();
    }
    await h.finalReply(ix);
  }, 20_000);
});

describe('a Discord bot whose start fails', () => {
  it('says it could not listen for Cancel presses from other processes when Redis refuses, and leaves no REST client sweeping', async () => {
    // The bots' state as far as the start uses it before it logs in: Redis refuses the subscription for Cancel notices.
    const records = { onNotice: () => Promise.reject(new Error('Connection is closed.')) };
    const state = { store: { space: () => records }, spaces: { discordJobs: {}, discordImages: {}, discordDrafts: {}, discordJobOutputs: {} } };
    // A Discord address of this test's own, by which its bot's REST clients are told from those of other tests.
    const api = 'http://127.0.0.1:9/a-bot-whose-start-fails';
    const retired = spyOnInstance(REST.prototype, 'clearHashSweeper', (rest) => rest.options.api === api);
    try {
      const start = startDiscordBot({ token: 'unused', apiBaseUrl: api, runner: {} as never, state: state as never, logger: new RecordingLogger() });
      await expect(start).rejects.toThrow('could not listen for Cancel presses passed on by other processes: Connection is closed.');
      // The bot's REST client and its webhooks' one.
      expect(retired).toHaveBeenCalledTimes(2);
    } finally {
      retired.mockRestore();
    }
  });
});
