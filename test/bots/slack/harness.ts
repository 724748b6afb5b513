import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { onTestFinished, vi } from 'vitest';
import { DEFAULT_FILE_HOSTS, parseFileHost, startSlackBot, type SlackBot, type SlackBotOptions } from '../../../bots/slack/index.js';
import { FileQuotaStore, JobRunner, say, settingsInState, memberDefaultsInState, type OperatorControls, type SpendLimits } from '../../../bots/runner/index.js';
import { openBotState, type BotState } from '../../../bots/state/index.js';
import { type QuotaStore, silentLogger } from '../../../src/internal.js';
import { ImageLimiter, PictorClient, type LoggerLike } from '../../../src/index.js';
import { createEmulator, DEV_API_KEY, type Emulator, type EmulatorOptions, type EmulatorServer } from '../../../src/emulator/index.js';
import { serveHoldingEvents } from '../../fakes/held-stream.js';
import { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import type { FakeMessage } from '../../fakes/slack/slack-objects.js';
import { buttonsOf, visibleText } from '../../fakes/slack/slack-objects.js';

export interface HarnessOptions {
  mode?: 'http' | 'socket';
  limits?: SpendLimits;
  /** What the operator allows every workspace (PICTOR_ALLOWED_SCOPES, PICTOR_BLOCKED_WORDS …). */
  controls?: OperatorControls;
  emulator?: EmulatorOptions;
  /** Reuse a data folder (restart tests). */
  dataDir?: string;
  /** Reuse a fake Slack (restart tests). */
  fake?: FakeSlack;
  bot?: Partial<SlackBotOptions>;
  /** The runner's ledger (default a file ledger in the data folder); closed by `close()`. */
  store?: QuotaStore;
  /** The runner's bound on the input images held by queued edits (PICTOR_MAX_QUEUED_INPUT_MB), in bytes. */
  maxQueuedInputBytes?: number;
  /** The runner's and the bot's logger (default silent). */
  logger?: LoggerLike;
  /** Where the runner's client sends its requests instead of the emulator: an image service of the test's own, whose answers it writes. */
  serviceUrl?: string;
  /** Holds each event of the emulator's streamed answers until this settles (`serveHoldingEvents`); index 0 is the first. */
  holdEvent?: (fake: FakeSlack, index: number) => Promise<unknown>;
  /** The previews the runner asks for each image (PICTOR_PARTIAL_IMAGES); default 2. */
  partialImages?: number;
}

export interface Harness {
  fake: FakeSlack;
  emulator: Emulator;
  runner: JobRunner;
  /** The runner's spend ledger. */
  store: QuotaStore;
  bot: SlackBot;
  /** The bots' state (the data folder's, unless `bot.state` was given). */
  state: BotState;
  dataDir: string;
  /**
   * Stops the bot and runner (and, unless kept, the fake, emulator and data folder); once. A harness the test leaves
   * open is closed when the test ends, and a data folder the harness made is removed then even if kept.
   */
  close(keep?: { fake?: boolean; dataDir?: boolean }): Promise<void>;
}

/** Small intervals so a test runs in a second or two; the fake still refuses writes closer than its own interval. */
export const TEST_CHANNEL_INTERVAL_MS = 40;
export const FAKE_CHANNEL_INTERVAL_MS = 30;

/** The workspace's admin in tests (SLACK_ADMIN_USER_IDS). */
export const ADMIN = 'U0ADMIN';

/** `startHarness` with `ADMIN` among the bot's admins (and any other bot options). */
export function startWithAdmin(options: HarnessOptions = {}): Promise<Harness> {
  return startHarness({ ...options, bot: { adminUserIds: [ADMIN], ...options.bot } });
}

/**
 * The real pieces, wired as in production but on 127.0.0.1: the emulator, a
 * client and limiter, the job runner with a file quota store, and the Slack
 * bot (real Bolt) talking to the fake Slack.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const mode = options.mode ?? 'http';
  const fake = options.fake ?? (await new FakeSlack({ channelWriteIntervalMs: FAKE_CHANNEL_INTERVAL_MS }).start());
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'pictor-slack-')));
  // A data folder made here is removed when the test ends, even one kept for a second process that never came, or
  // one whose test failed before it closed anything (the harness closed first, so nothing writes to it again).
  if (options.dataDir === undefined) onTestFinished(() => rm(dataDir, { recursive: true, force: true }));
  const emulator = createEmulator({ latencyMs: 150, defaultPartialImages: 2, recordImageBytes: true, ...options.emulator });
  const { holdEvent } = options;
  const held = holdEvent && (await serveHoldingEvents(emulator, (index) => holdEvent(fake, index)));
  const server: EmulatorServer = held || (await emulator.listen({ port: 0 }));
  const limiter = new ImageLimiter({ maxConcurrent: 4 });
  const client = new PictorClient({ baseURL: options.serviceUrl ?? server.url, apiKey: DEV_API_KEY, limiter, maxRetries: 0 });
  // The workspaces' settings are kept beside the ledger's caps, as `npm start` keeps them without Redis.
  const store = options.store ?? new FileQuotaStore({ dir: dataDir });
  const state = options.bot?.state ?? (await openBotState({ dataDir, ledger: store, logger: silentLogger() }));
  const runner = new JobRunner({
    client,
    store,
    limits: options.limits ?? {},
    minUpdateIntervalMs: 20,
    partialImages: options.partialImages ?? 2,
    shutdownGraceMs: 2000,
    operatorControls: options.controls,
    history: state,
    settings: settingsInState(state.store.space(state.spaces.scopeSettings)),
    styles: state.store.space(state.spaces.houseStyles),
    memberDefaults: memberDefaultsInState(state.store.space(state.spaces.memberDefaults)),
    auditPosts: state.store.space(state.spaces.auditPosts),
    auditEnded: state.store.space(state.spaces.auditEnded),
    // Audit entries are posted a moment after they come (2 s in production), so the tests see them soon.
    auditBatchMs: 50,
    // A failed audit post is tried again a moment later (a minute in production).
    auditPostRetryMs: 50,
    maxQueuedInputBytes: options.maxQueuedInputBytes,
    ...(options.logger && { logger: options.logger }),
  });
  const bot = await startSlackBot({
    botToken: fake.botToken,
    appToken: fake.appToken,
    signingSecret: fake.signingSecret,
    mode,
    port: 0,
    host: '127.0.0.1',
    apiUrl: fake.apiUrl,
    runner,
    ledger: store,
    state,
    allowedFileHosts: [...DEFAULT_FILE_HOSTS, fake.fileHost].map(parseFileHost),
    logger: options.logger ?? silentLogger(),
    channelWriteIntervalMs: TEST_CHANNEL_INTERVAL_MS,
    ...options.bot,
  } as SlackBotOptions);
  if (mode === 'http') fake.deliverOverHttp(bot.url!);
  else await fake.waitFor(() => fake.socketCount > 0, 'the Socket Mode connection');
  let closed = false;
  // Registered after the folder's removal, so run before it (the test's end runs its callbacks last first).
  onTestFinished(() => harness.close());
  const harness: Harness = {
    fake,
    emulator,
    runner,
    store,
    bot,
    state,
    dataDir,
    async close(keep = {}) {
      if (closed) return;
      closed = true;
      // As `npm start` stops: the runner first (running jobs end and are shown), then the bot waits for what it still shows.
      await runner.shutdown({ graceMs: 500 });
      await bot.stop();
      if (!options.bot?.state) await state.close();
      await store.close();
      await limiter.stop();
      await held?.close();
      await emulator.close();
      if (!keep.fake) await fake.close();
      if (!keep.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** What the ledger's usage records say each user's settled jobs cost, by user key (`slack:U…`). */
export async function settledCosts(harness: Pick<Harness, 'store'>): Promise<Map<string, number>> {
  const costs = new Map<string, number>();
  for (const r of await harness.store.usage({})) costs.set(r.userKey, (costs.get(r.userKey) ?? 0) + r.costUsd);
  return costs;
}

/** A real PNG of the given size and colour. */
export function png(width = 32, height = 32, color = { r: 40, g: 120, b: 200 }): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: color } }).png().toBuffer();
}

/** The job message the bot posted (top level, or in a thread) whose buttons or text match. */
export function jobMessages(fake: FakeSlack, channel: string): FakeMessage[] {
  return fake.botMessages(channel).filter((m) => (m.blocks ?? []).some((b) => (b as { block_id?: string }).block_id === 'status'));
}

/**
 * A `holdEvent` that lets the service's next partial image (and then its final image) through only once the job's
 * message in `channel` says the preview before it is in the thread: every preview is shown, however slow the machine,
 * where otherwise the next one may overtake it.
 */
export function previewByPreview(channel: string): (fake: FakeSlack, index: number) => Promise<unknown> {
  // The status the message shows once preview `index` is in the thread, as the catalog words it.
  const said = (fake: FakeSlack, index: number) =>
    jobMessages(fake, channel).some((m) => [m, ...m.edits].some((version) => visibleText(version).includes(say('en', 'slack.job.drawing', { previews: index }))));
  return (fake, index) => (index === 0 ? Promise.resolve() : fake.waitFor(() => said(fake, index) || undefined, `preview ${index} shown in ${channel}`));
}

export function statusOf(message: FakeMessage): string {
  const block = (message.blocks ?? []).find((b) => (b as { block_id?: string }).block_id === 'status') as { elements?: { text?: string }[] } | undefined;
  return block?.elements?.[0]?.text ?? '';
}

export function isFinished(message: FakeMessage): boolean {
  return /Done ·|:warning:|Cancelled|Stopped/.test(statusOf(message));
}

export function hasButton(message: Pick<FakeMessage, 'blocks'>, actionId: string): boolean {
  return buttonsOf(message).some((b) => b.actionId === actionId);
}

/** The top-level messages of a channel that share files (a finished job's images with their caption), oldest first. */
export function imageShares(fake: FakeSlack, channel: string): FakeMessage[] {
  return fake.topLevel(channel).filter((m) => (m.files ?? []).length > 0);
}

/** The messages with a finished job's Reroll, Edit and Delete (posted right after its images; not job messages). */
export function actionMessages(fake: FakeSlack, channel: string): FakeMessage[] {
  return fake.botMessages(channel).filter((m) => hasButton(m, 'pictor_reroll') && !(m.blocks ?? []).some((b) => (b as { block_id?: string }).block_id === 'status'));
}

/** Waits for the Reroll, Edit and Delete of the n-th finished job of a channel, and returns their message. */
export async function finishedActions(fake: FakeSlack, channel: string, index = 0): Promise<FakeMessage> {
  return fake.waitFor(() => actionMessages(fake, channel)[index], `the buttons of finished job ${index} in ${channel}`);
}

/** Waits for the n-th job message of a channel to reach its end, and returns it. */
export async function finishedJob(fake: FakeSlack, channel: string, index = 0): Promise<FakeMessage> {
  return fake.waitFor(() => {
    const message = jobMessages(fake, channel)[index];
    return message && isFinished(message) && !hasButton(message, 'pictor_cancel') ? message : undefined;
  }, `job message ${index} in ${channel} to finish`);
}

export { visibleText };

/**
 * `fake.waitFor` while the test holds the clock (fake timers that move only when it moves them): each look first runs
 * the timers due now — a library's `setTimeout(…, 0)`, as bottleneck yields between its steps — without moving the
 * clock, as a clock that stands still would.
 */
export function waitOnHeldClock<T>(fake: FakeSlack, probe: () => T | undefined | null | false, what: string): Promise<T> {
  return fake.waitFor(() => {
    vi.advanceTimersByTime(0);
    return probe();
  }, what);
}

/** `promise`'s outcome, waited for as {@link waitOnHeldClock} waits: what it waits on may be a timer due now. */
export async function settledOnHeldClock<T>(fake: FakeSlack, promise: Promise<T>, what: string): Promise<T> {
  let settled = false;
  const done = () => void (settled = true);
  promise.then(done, done);
  await waitOnHeldClock(fake, () => settled, what);
  return promise;
}

/**
 * Runs `/imagine …` as `user` (in `channel`) and returns its private answer: in the acknowledgement, or through the
 * response URL. Throws when the command was not taken or the answer is not ephemeral.
 */
export async function privately(fake: FakeSlack, text: string, user = 'U0ALICE', channel?: string): Promise<string> {
  const ack = await fake.command({ command: '/imagine', text, user, ...(channel && { channel }) });
  if (ack.status !== 200) throw new Error(`/imagine ${text} was answered ${ack.status}`);
  const inAck = (ack.body as { text?: string; response_type?: string } | undefined) ?? {};
  const answer = inAck.text
    ? { type: inAck.response_type, text: inAck.text }
    : await fake.waitFor(() => fake.responses.find((r) => ack.responseUrl.endsWith(r.id)), `the answer to /imagine ${text}`).then((r) => ({ type: r.body.response_type, text: String(r.body.text) }));
  if (answer.type !== 'ephemeral') throw new Error(`the answer to /imagine ${text} is not private: ${String(answer.type)}`);
  return answer.text;
}

/**
 * The `user` input of a workflow step as Slack fills it (`slack#/types/user_context`): the person who used the
 * workflow, with the secret Slack gives along (a builder cannot type one in).
 */
export function userContext(id: string): { id: string; secret: string } {
  return { id, secret: `${id.toLowerCase()}-context-secret` };
}
