import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startService, type Service } from '../../bots/main.js';
import { RedisQuotaStore } from '../../bots/runner/index.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { estimatePrice } from '../../src/index.js';
import { FakeDiscord, buttonsOf as discordButtonsOf, type FakeInteraction } from '../fakes/discord/FakeDiscord.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { buttonsOf } from '../fakes/slack/slack-objects.js';
import { useEmulator } from '../helpers/emulator.js';
import { killedAtTestEnd } from '../helpers/killed-at-test-end.js';
import { startRoundRobinProxy } from '../helpers/round-robin-proxy.js';
import { waitUntil } from '../helpers/runner-harness.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { untilPrinted } from '../helpers/until-printed.js';
import { slackEventsUrl, surfaceEnv, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { describeFinishedJob, readCancelValue } from '../../bots/slack/render-job.js';
import { SavedRequestSchema, type SavedRequest } from '../../bots/slack/RequestStore.js';
import { closeRedis, connectRedis } from '../../src/internal.js';
import { finishedActions, finishedJob, hasButton, jobMessages, statusOf } from './slack/harness.js';

const MAIN = fileURLToPath(new URL('../../bots/main.ts', import.meta.url));
const redis = testRedis();
// Posing as the real service: its jobs are the account's.
const emu = useEmulator({ identifyAsEmulator: false });
const defer = useCleanup();
const LEASE_SECONDS = 1;
const generations = () => emu.emulator.requests.filter((r) => r.path === '/v1/images/generations').length;

interface Replica {
  process: ChildProcess;
  /** Its Slack events URL (HTTP mode). */
  url: string;
  exited: Promise<number | null>;
}

describe.skipIf(redis.skipReason)(`npm start replicas on one Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  const prefixes: string[] = [];
  afterAll(async () => {
    if (redis.url) for (const prefix of prefixes) await deleteKeys(redis.url, prefix);
  });

  /** Settings every replica shares (its data folder is its own: what they share goes through Redis only). */
  async function sharedEnv(fakes: { slack?: FakeSlack; discord?: FakeDiscord }, mode: 'http' | 'socket' = 'http'): Promise<NodeJS.ProcessEnv> {
    const prefix = uniquePrefix('replicas');
    prefixes.push(prefix);
    return {
      PATH: process.env.PATH,
      PICTOR_LOG_LEVEL: 'silent',
      PICTOR_BASE_URL: emu.url,
      PICTOR_API_KEY: DEV_API_KEY,
      PICTOR_PARTIAL_IMAGES: '0',
      REDIS_URL: requireRedisUrl(redis),
      PICTOR_REDIS_PREFIX: prefix,
      PICTOR_REPLICA_LEASE_SECONDS: String(LEASE_SECONDS),
      ...surfaceEnv(fakes),
      ...(mode === 'socket' && fakes.slack ? { SLACK_MODE: 'socket', SLACK_APP_TOKEN: fakes.slack.appToken } : {}),
    };
  }

  /**
   * A replica in a process of its own (to be stopped with a signal), killed when the test ends and waited for until it
   * has closed (`killedAtTestEnd`); its data folder is removed after that.
   */
  async function spawnReplica(env: NodeJS.ProcessEnv): Promise<Replica> {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { env: { ...env, PICTOR_DATA_DIR: await testTempDir('pictor-replica-') }, stdio: ['ignore', 'pipe', 'inherit'] });
    killedAtTestEnd(child, 'the replica in a process of its own');
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let printed = '';
    child.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    await untilPrinted(child, () => slackEventsUrl(printed) !== undefined || /Socket Mode/.test(printed), 'a replica is online');
    return { process: child, url: slackEventsUrl(printed) ?? '', exited };
  }

  /** A Slack request as the replicas share it in Redis (`<prefix>:bots:slack-requests:r:<id>`, docs/shared-limits.md). */
  async function savedRequest(env: NodeJS.ProcessEnv, requestId: string): Promise<SavedRequest | undefined> {
    const connection = await connectRedis(requireRedisUrl(redis));
    try {
      const text = await connection.get(`${env.PICTOR_REDIS_PREFIX!}:bots:slack-requests:r:${requestId}`);
      return text === null ? undefined : SavedRequestSchema.parse(JSON.parse(text));
    } finally {
      await closeRedis(connection);
    }
  }

  /** A replica in this process. */
  async function startReplica(env: NodeJS.ProcessEnv): Promise<{ service: Service; url: string }> {
    const printed: string[] = [];
    const service = await startService({ ...env, PICTOR_DATA_DIR: await tempDataDir(defer, 'pictor-replica-') }, (line) => printed.push(line));
    defer(() => service.stop());
    return { service, url: slackEventsUrl(printed.join('\n')) ?? '' };
  }

  it('in HTTP mode behind a round-robin proxy: 20 jobs over both finish, a button on A’s message works on B, a replay to either is dropped, SIGTERM on A mid-job loses nothing', async () => {
    // Each replica paces its own writes (per channel, and 40 chat.update a minute): one channel per job, and Slack's
    // workspace-wide Tier 3 limit is not what is tested here (see docs: Replicas).
    const slack = await new FakeSlack({ channelWriteIntervalMs: 5, tier3PerMinute: 0 }).start();
    defer(() => slack.close());
    const env = await sharedEnv({ slack }, 'http');
    const a = await spawnReplica(env);
    const b = await startReplica(env);
    const proxy = await startRoundRobinProxy([a.url, b.url]);
    defer(() => proxy.close());
    slack.deliverOverHttp(proxy.url);

    emu.emulator.configure({ latencyMs: 50 });
    for (let i = 0; i < 20; i++) {
      expect((await slack.command({ command: '/imagine', text: `lighthouse ${i} --quality low`, user: `U0USER${i}`, channel: `C0MANY${i}` })).status).toBe(200);
    }
    // Finished for their members: images and buttons out (each job message's "Done" follows at the shared budget's pace).
    for (let i = 0; i < 20; i++) await finishedActions(slack, `C0MANY${i}`);
    expect(proxy.sent).toEqual([10, 10]);
    expect(generations()).toBe(20);

    // The last command went to B; its replay reaches A, then B: neither runs it again.
    for (let i = 0; i < 2; i++) expect((await slack.replayLastDelivery()).status).toBe(200);
    expect(proxy.sent).toEqual([11, 11]);
    // (Counted below, once each replica has run a job since: the replays ran nothing.)

    // A job made on A; its Reroll pressed on B.
    slack.deliverOverHttp(a.url);
    await slack.command({ command: '/imagine', text: 'a paper boat --quality low', user: 'U0ANN', channel: 'C0BUTTON' });
    const actions = await finishedActions(slack, 'C0BUTTON', 0);
    slack.deliverOverHttp(b.url);
    // Its Cancel, as a member still saw it running, pressed on B: B has never run it, and answers that it is done, and where.
    const posted = slack.callsOf('chat.postMessage').find((c) => c.args.channel === 'C0BUTTON')!;
    const running = { ...jobMessages(slack, 'C0BUTTON')[0]!, blocks: posted.args.blocks as unknown[] };
    expect(hasButton(running, 'pictor_cancel')).toBe(true);
    // A saves where the buttons are once Slack has answered their post: until then B rightly says they are being posted.
    const { requestId } = readCancelValue(buttonsOf(running).find((button) => button.actionId === 'pictor_cancel')!.value!);
    await vi.waitFor(async () => expect((await savedRequest(env, requestId!))?.actionsMessage).toEqual({ channelId: 'C0BUTTON', ts: actions.ts }), { timeout: 10_000 });
    const cancel = await slack.clickButton(running, 'pictor_cancel', 'U0ANN');
    const answer = await slack.waitFor(() => slack.responses.find((r) => cancel.responseUrl.endsWith(r.id)), 'B’s answer to the Cancel');
    expect(answer.body.text).toBe(describeFinishedJob({ actionsAt: `https://pictor-test.slack.com/archives/C0BUTTON/p${actions.ts.replace('.', '')}` }));
    expect((await slack.clickButton(actions, 'pictor_reroll', 'U0BOB')).status).toBe(200);
    await finishedActions(slack, 'C0BUTTON', 1);
    expect(JSON.stringify(jobMessages(slack, 'C0BUTTON')[1]!.blocks)).toContain('<@U0BOB> asked for: “a paper boat”');
    // The job on A and its Reroll on B, and nothing of the replays.
    expect(generations()).toBe(22);

    // A rolling deploy: A gets SIGTERM while drawing; it finishes and shows that job, while B takes a new one.
    emu.emulator.configure({ latencyMs: 1500 });
    slack.deliverOverHttp(a.url);
    await slack.command({ command: '/imagine', text: 'a slow boat --quality low', user: 'U0CAT', channel: 'C0TERM' });
    await waitUntil(() => emu.emulator.stats().openStreams === 1, 'the job reached the service', 10_000);
    a.process.kill('SIGTERM');
    slack.deliverOverHttp(b.url);
    await slack.command({ command: '/imagine', text: 'a new boat --quality low', user: 'U0DAN', channel: 'C0NEW' });
    await finishedActions(slack, 'C0TERM');
    await finishedActions(slack, 'C0NEW');
    expect(await a.exited).toBe(0);
    emu.emulator.configure({ latencyMs: 0 });
  }, 90_000);

  it('when A is killed (-9) mid-job, B marks A’s job interrupted within the lease, with Reroll', async () => {
    const slack = await new FakeSlack({ channelWriteIntervalMs: 10 }).start();
    defer(() => slack.close());
    const env = await sharedEnv({ slack }, 'http');
    const a = await spawnReplica(env);
    await startReplica(env);

    emu.emulator.configure({ latencyMs: 60_000 });
    slack.deliverOverHttp(a.url);
    await slack.command({ command: '/imagine', text: 'a slow lighthouse --quality low', user: 'U0CAT', channel: 'C0KILL' });
    await waitUntil(() => emu.emulator.stats().openStreams === 1, 'the job reached the service', 30_000);
    await slack.waitFor(() => jobMessages(slack, 'C0KILL')[0], 'the job’s message');
    a.process.kill('SIGKILL');
    const killedAt = Date.now();
    await a.exited;

    // The lease, then at most a third of it for B's next sweep (and a margin for a loaded machine).
    const stopped = await slack.waitFor(() => {
      const message = jobMessages(slack, 'C0KILL')[0];
      return message && statusOf(message).includes('Stopped because the bot restarted') ? message : undefined;
    }, 'replica B to mark A’s job interrupted');
    expect(Date.now() - killedAt).toBeLessThan(LEASE_SECONDS * 1000 * (1 + 1 / 3) + 1500);
    expect(buttonsOf(stopped).map((button) => button.actionId)).toEqual(['pictor_reroll']);
    emu.emulator.configure({ latencyMs: 0 });
  }, 90_000);

  it('a Cancel pressed on B stops the job running on A: B checks who may, A cancels it, its request is aborted and charged once', async () => {
    const slack = await new FakeSlack({ channelWriteIntervalMs: 10 }).start();
    defer(() => slack.close());
    const env = await sharedEnv({ slack }, 'http');
    const a = await startReplica(env);
    const b = await startReplica(env);

    emu.emulator.configure({ latencyMs: 60_000 });
    slack.deliverOverHttp(a.url);
    await slack.command({ command: '/imagine', text: 'a slow kite --size 1024x1024 --quality low', user: 'U0ANN', channel: 'C0CANCEL' });
    await waitUntil(() => emu.emulator.stats().openStreams === 1, 'the job reached the service from A', 10_000);
    const running = await slack.waitFor(() => {
      const message = jobMessages(slack, 'C0CANCEL')[0];
      return message && buttonsOf(message).some((button) => button.actionId === 'pictor_cancel') ? message : undefined;
    }, 'the job’s message with Cancel');

    slack.deliverOverHttp(b.url);
    const denied = await slack.clickButton(running, 'pictor_cancel', 'U0BOB');
    const refusal = await slack.waitFor(() => slack.responses.find((r) => denied.responseUrl.endsWith(r.id)), 'B’s refusal');
    expect(refusal.body.text).toBe('Only the person who started this job, or an admin, can cancel it.');
    expect(emu.emulator.stats().openStreams).toBe(1);

    const clicked = await slack.clickButton(running, 'pictor_cancel', 'U0ANN');
    expect(clicked.status).toBe(200);
    const cancelled = await slack.waitFor(() => {
      const message = jobMessages(slack, 'C0CANCEL')[0];
      return message && statusOf(message).includes('Cancelled by <@U0ANN>') ? message : undefined;
    }, 'A to show its job cancelled');
    expect(buttonsOf(cancelled).map((button) => button.actionId)).toEqual(['pictor_reroll']);
    await waitUntil(() => emu.emulator.stats().openStreams === 0, 'the service request aborted', 5_000);
    // Nothing said to the canceller: the job's message says it.
    expect(slack.responses.filter((r) => clicked.responseUrl.endsWith(r.id))).toEqual([]);
    // Sent, then cut off: charged its estimate, once, on the account's shared ledger.
    const ledger = await RedisQuotaStore.connect({ url: requireRedisUrl(redis), prefix: env.PICTOR_REDIS_PREFIX! });
    defer(() => ledger.close());
    const estimate = estimatePrice({ size: '1024x1024', quality: 'low' }).totalUsd;
    await vi.waitFor(async () => expect(await ledger.spentToday('slack:U0ANN', Date.now())).toBeCloseTo(estimate, 9), { timeout: 15_000 });
    emu.emulator.configure({ latencyMs: 0 });
  }, 30_000);

  it('in Socket Mode: jobs spread over both connections finish, and a button on A’s message works on B', async () => {
    // Each replica paces its own writes (per channel, and 40 chat.update a minute): one channel per job, and Slack's
    // workspace-wide Tier 3 limit is not what is tested here (see docs: Replicas).
    const slack = await new FakeSlack({ channelWriteIntervalMs: 5, tier3PerMinute: 0 }).start();
    defer(() => slack.close());
    const env = await sharedEnv({ slack }, 'socket');
    const a = await startReplica(env);
    await startReplica(env);
    await slack.waitFor(() => slack.socketCount === 2 || undefined, 'both replicas’ Socket Mode connections');

    emu.emulator.configure({ latencyMs: 50 });
    for (let i = 0; i < 20; i++) await slack.command({ command: '/imagine', text: `kite ${i} --quality low`, user: `U0KITE${i}`, channel: `C0KITE${i}` });
    for (let i = 0; i < 20; i++) await finishedActions(slack, `C0KITE${i}`);
    // The fake hands envelopes to the connections in turn: the click goes to the other replica than the job did.
    const first = await finishedActions(slack, 'C0KITE0');
    await slack.clickButton(first, 'pictor_reroll', 'U0BOB');
    await finishedActions(slack, 'C0KITE0', 1);
    expect(generations()).toBe(21);

    // A rolling deploy: A drains with a job of each replica running; A closes its connection, so B takes every new
    // command, and A's job still finishes and is shown.
    emu.emulator.configure({ latencyMs: 1500 });
    for (const i of [0, 1]) await slack.command({ command: '/imagine', text: `slow kite ${i} --quality low`, user: `U0SLOW${i}`, channel: `C0SLOW${i}` });
    await waitUntil(() => emu.emulator.stats().openStreams === 2, 'a job on each replica reached the service', 10_000);
    const drained = a.service.drain();
    await slack.waitFor(() => slack.socketCount === 1 || undefined, 'A to close its Socket Mode connection', 3000);
    emu.emulator.configure({ latencyMs: 50 });
    for (let i = 0; i < 4; i++) await slack.command({ command: '/imagine', text: `new kite ${i} --quality low`, user: `U0NEW${i}`, channel: `C0NEW${i}` });
    for (let i = 0; i < 4; i++) await finishedActions(slack, `C0NEW${i}`);
    for (const i of [0, 1]) await finishedActions(slack, `C0SLOW${i}`);
    expect(slack.responses.filter((r) => /restarting/.test(String(r.body.text)))).toEqual([]);
    expect(await drained).toBe(0);
    emu.emulator.configure({ latencyMs: 0 });
  }, 90_000);

  it('in Socket Mode, a lone replica that drains keeps its connection and says it is restarting, until a new replica connects and takes over', async () => {
    const slack = await new FakeSlack({ channelWriteIntervalMs: 5, tier3PerMinute: 0 }).start();
    defer(() => slack.close());
    const env = await sharedEnv({ slack }, 'socket');
    const a = await startReplica(env);
    await slack.waitFor(() => slack.socketCount === 1 || undefined, 'A’s Socket Mode connection');

    emu.emulator.configure({ latencyMs: 3000 });
    await slack.command({ command: '/imagine', text: 'a slow kite --quality low', user: 'U0LONE', channel: 'C0LONE' });
    await waitUntil(() => emu.emulator.stats().openStreams === 1, 'A’s job reached the service', 10_000);
    const drained = a.service.drain();
    // Nobody else is connected: Slack would have nowhere to send new events, so A stays and answers them. A command's
    // answer through A's connection takes longer than A's one look at Redis, after which A would have let go.
    await slack.command({ command: '/imagine', text: 'a kite during the drain', user: 'U0LATE', channel: 'C0LATE' });
    await slack.waitFor(() => slack.responses.find((r) => /restarting/.test(String(r.body.text))), 'A to say it is restarting');
    expect(slack.socketCount).toBe(1);

    // The rolling deploy's new replica connects: A lets go, and the new one takes the next commands.
    emu.emulator.configure({ latencyMs: 50 });
    await startReplica(env);
    await slack.waitFor(() => slack.socketCount === 1 || undefined, 'A to hand its events over to the new replica', 10_000);
    await slack.command({ command: '/imagine', text: 'a kite after the hand-over --quality low', user: 'U0NEXT', channel: 'C0NEXT' });
    expect(statusOf(await finishedJob(slack, 'C0NEXT'))).toContain('Done');
    expect(statusOf(await finishedJob(slack, 'C0LONE'))).toContain('Done');
    expect(await drained).toBe(0);
    emu.emulator.configure({ latencyMs: 0 });
  }, 60_000);

  it('on the Discord gateway: when the holder starts draining, the standby connects within seconds and takes new commands while the holder’s job finishes and is shown', async () => {
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    defer(() => discord.close());
    const env = await sharedEnv({ discord });
    const a = await startReplica(env);
    await startReplica(env);
    expect(discord.openGatewaySessions).toBe(1);

    emu.emulator.configure({ latencyMs: 1500 });
    const running = discord.slashCommand('imagine', { prompt: 'a slow lighthouse', quality: 'low' });
    await waitUntil(() => emu.emulator.stats().openStreams === 1, 'the job reached the service', 10_000);
    const drainedAt = Date.now();
    const drained = a.service.drain();
    await discord.waitFor(() => discord.gatewayStats.identifies === 2 || undefined, 'the standby to connect', 10_000);
    expect(Date.now() - drainedAt).toBeLessThan(4000);
    expect(discord.openGatewaySessions).toBe(1);

    emu.emulator.configure({ latencyMs: 50 });
    const late = discord.slashCommand('imagine', { prompt: 'a new lighthouse', quality: 'low' });
    const finalReply = (ix: FakeInteraction) =>
      discord.waitFor(() => {
        const m = discord.original(ix);
        return m && discordButtonsOf(m).some((b) => b.label === 'Reroll') ? m : undefined;
      }, `the final reply of ${ix.token}`);
    expect((await finalReply(late)).content).not.toMatch(/restarting/);
    expect((await finalReply(running)).content).not.toMatch(/restarting/);
    expect([running.callbackAttempts, late.callbackAttempts]).toEqual([1, 1]);
    expect(await drained).toBe(0);
    emu.emulator.configure({ latencyMs: 0 });
  }, 60_000);
});
