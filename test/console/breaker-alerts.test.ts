import { describe, expect, it } from 'vitest';
import { startService, type Service } from '../../bots/main.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { estimatePrice } from '../../src/core/pricing.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import type { QuotaStore } from '../../src/spend/types.js';
import { buttonsOf, type FakeDiscord, type FakeInteraction } from '../fakes/discord/FakeDiscord.js';
import type { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { startChatFakes, startUpstream, surfaceEnv, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

/**
 * The breaker and the alerts end to end: `npm start` with the stand-in
 * Discord and Slack and an upstream whose requests are counted. A server with
 * a week of modest spend bursts: the breaker pauses it, its next job is
 * refused privately with nothing sent, one alert goes to the Discord channel
 * and one to the Slack channel, and the owner's resume in the console lets its
 * jobs through again. A restart, or a second replica, does not send the alert again.
 */
const defer = useCleanup();
const redis = testRedis();
const DAY = 24 * 60 * 60_000;
const TOKEN = 'breaker-test-console-token-42';
const DISCORD_ALERTS = '333333333333333333';
const SLACK_ALERTS = 'C0ALERTS';
/** What one job of the burst reserves: a high-quality square image. */
const JOB_USD = estimatePrice({ operation: 'generate', size: '1024x1024', quality: 'high', n: 1 }).totalUsd;

function serviceEnv(fakes: { discord: FakeDiscord; slack: FakeSlack }, upstreamUrl: string, more: Record<string, string>): Record<string, string> {
  return {
    PICTOR_LOG_LEVEL: 'silent',
    PICTOR_BASE_URL: upstreamUrl,
    PICTOR_API_KEY: DEV_API_KEY,
    PICTOR_UPDATE_INTERVAL_MS: '20',
    PICTOR_PARTIAL_IMAGES: '0',
    PICTOR_USER_CONCURRENT_JOBS: '10',
    // Its usual hour is a few cents: the floor (one and a half jobs an hour) is the limit.
    PICTOR_BREAKER_FACTOR: '10',
    PICTOR_BREAKER_FLOOR_USD: String(JOB_USD * 1.5),
    PICTOR_ALERT_DISCORD_CHANNEL: DISCORD_ALERTS,
    PICTOR_ALERT_SLACK_CHANNEL: SLACK_ALERTS,
    // Looked at when a job is refused by the breaker (and at start); not by the clock during the test.
    PICTOR_ALERT_CHECK_SECONDS: '3600',
    PICTOR_CONSOLE_PORT: '0',
    PICTOR_CONSOLE_TOKEN: TOKEN,
    PICTOR_CONSOLE_ALLOW_CHANGES: '1',
    ...surfaceEnv(fakes),
    ...more,
  };
}

/** A week of modest spend in the server: $0.05, settled two days ago. */
async function seedHistory(store: QuotaStore & { close(): Promise<void> }, scopeKey: string): Promise<void> {
  const reserved = await store.reserve({ jobId: 'history', userKey: 'discord:100000000000000001', scopeKey, estimateUsd: 0.05, limits: {}, now: Date.now() - 2 * DAY });
  expect(reserved).toEqual({ ok: true });
  await store.markSent('history');
  await store.settle('history', 0.05);
  await store.close();
}

/** How a job's interaction ended: its result (with Reroll), or a refusal (`private`: only the requester saw it). */
async function finalOrRefusal(discord: FakeDiscord, ix: FakeInteraction) {
  return discord.waitFor(() => {
    const message = discord.original(ix);
    if (!message) return undefined;
    if (message.flags & 64 || /is paused/.test(message.content)) return { refused: true as const, private: (message.flags & 64) === 64, message };
    return buttonsOf(message).some((b) => /^pictor:reroll:/.test(b.custom_id)) ? { refused: false as const, private: false, message } : undefined;
  }, 'the job’s end or its refusal');
}

/** Logs in to the console and resumes a scope with the form's CSRF token, as the owner's browser does. */
async function resumeInConsole(service: Service, scopeKey: string): Promise<void> {
  const url = service.console!.url!;
  const login = await fetch(`${url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN, next: '/settings' }), redirect: 'manual', headers: { origin: url } });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const page = await (await fetch(`${url}/settings`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
  expect(page).toContain(`data-paused="${scopeKey}"`);
  const resumed = await fetch(`${url}/breaker/resume`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf, scope: scopeKey }), redirect: 'manual', headers: { cookie, origin: url } });
  expect(resumed.status).toBe(303);
  expect(resumed.headers.get('location')).toBe('/settings');
}

describe('the breaker and the alerts through the stand-in Discord and Slack', () => {
  it('pauses a bursting server, refuses its next job privately with nothing sent, alerts once, and lets it through once resumed; a restart does not alert again', async () => {
    const fakes = await startChatFakes(defer);
    const { discord, slack } = fakes;
    const { emulator, url: upstreamUrl } = await startUpstream(defer, 0, { identifyAsEmulator: false }); // the real service: the account's ledger
    const dataDir = await tempDataDir(defer);
    const scopeKey = `discord:${discord.guildId}`;
    const history = new FileQuotaStore({ dir: dataDir, clock: () => Date.now() - 2 * DAY });
    await history.open();
    await seedHistory(history, scopeKey);
    const env = serviceEnv(fakes, upstreamUrl, { PICTOR_DATA_DIR: dataDir });
    let service = await startService(env, () => {});
    let running = true;
    defer(async () => {
      if (running) await service.stop();
    });
    const sent = () => emulator.requests.filter((r) => r.route === 'generations').length;

    // The burst: three high-quality jobs at once from one server. The first fits; the second would take the last hour
    // past the limit and trips the breaker; the third finds the server paused.
    const burst = [1, 2, 3].map((i) => discord.slashCommand('imagine', { prompt: `burst ${i}`, quality: 'high' }));
    const ends = await Promise.all(burst.map((ix) => finalOrRefusal(discord, ix)));
    expect(ends.filter((e) => !e.refused)).toHaveLength(1);
    const refusals = ends.filter((e) => e.refused);
    expect(refusals).toHaveLength(2);
    for (const { message } of refusals) expect(message.content).toMatch(/This server is paused: it spent \$[\d.]+ in the last hour, more than the \$[\d.]+ an hour its usual use allows\./);
    expect(sent()).toBe(1);

    // Its next job: refused privately, nothing sent upstream.
    const next = discord.slashCommand('imagine', { prompt: 'one more', quality: 'low' });
    const refused = await finalOrRefusal(discord, next);
    expect(refused).toMatchObject({ refused: true, private: true });
    expect(refused.message.content).toContain('resumes it from the Pictor console');
    expect(sent()).toBe(1);

    // One alert in the Discord channel and one in the Slack channel.
    const discordAlert = await discord.waitFor(() => discord.channelMessages(DISCORD_ALERTS)[0], 'the Discord alert');
    expect(discordAlert.content).toMatch(new RegExp(`^Pictor paused ${scopeKey}: it spent \\$`));
    const slackAlert = await slack.waitFor(() => slack.messagesIn(SLACK_ALERTS)[0], 'the Slack alert');
    expect(slackAlert.text).toContain(`Pictor paused ${scopeKey}`);

    // The owner resumes it in the console: its jobs go through again.
    await resumeInConsole(service, scopeKey);
    const after = discord.slashCommand('imagine', { prompt: 'after the resume', quality: 'low' });
    expect((await finalOrRefusal(discord, after)).refused).toBe(false);
    expect(sent()).toBe(2);

    // A restart looks at the alerts again (at start): nothing new goes out.
    await service.stop();
    running = false;
    service = await startService(env, () => {});
    running = true;
    expect(await service.console!.watcher!.check()).toEqual([]);
    expect(discord.channelMessages(DISCORD_ALERTS)).toHaveLength(1);
    expect(slack.messagesIn(SLACK_ALERTS)).toHaveLength(1);
  }, 90_000);

  it.skipIf(redis.skipReason !== undefined)('sends the alert once when two replicas share Redis', async () => {
    const url = requireRedisUrl(redis);
    const prefix = uniquePrefix('breaker');
    defer(() => deleteKeys(url, prefix));
    const fakes = await startChatFakes(defer);
    const { discord, slack } = fakes;
    const { url: upstreamUrl } = await startUpstream(defer, 0, { identifyAsEmulator: false }); // the real service: the account's ledger
    const scopeKey = `discord:${discord.guildId}`;
    await seedHistory(await RedisQuotaStore.connect({ url, prefix }, { clock: () => Date.now() - 2 * DAY }), scopeKey);
    const replicas: Service[] = [];
    for (const name of ['a', 'b']) {
      const dataDir = await tempDataDir(defer, `pictor-replica-${name}-`);
      const service = await startService(serviceEnv(fakes, upstreamUrl, { PICTOR_DATA_DIR: dataDir, REDIS_URL: url, PICTOR_REDIS_PREFIX: prefix }), () => {});
      defer(() => service.stop());
      replicas.push(service);
    }
    const burst = [1, 2].map((i) => discord.slashCommand('imagine', { prompt: `burst ${i}`, quality: 'high' }));
    const ends = await Promise.all(burst.map((ix) => finalOrRefusal(discord, ix)));
    expect(ends.filter((e) => e.refused)).toHaveLength(1);
    await discord.waitFor(() => discord.channelMessages(DISCORD_ALERTS)[0], 'the Discord alert');
    await slack.waitFor(() => slack.messagesIn(SLACK_ALERTS)[0], 'the Slack alert');
    // Both replicas look again: the alert stays sent once.
    const again = await Promise.all(replicas.map((r) => r.console!.watcher!.check()));
    expect(again.flat()).toEqual([]);
    expect(discord.channelMessages(DISCORD_ALERTS)).toHaveLength(1);
    expect(slack.messagesIn(SLACK_ALERTS)).toHaveLength(1);
  }, 90_000);
});
