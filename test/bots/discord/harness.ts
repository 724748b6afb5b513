import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveHoldingEvents } from '../../fakes/held-stream.js';
import { DEV_API_KEY, createEmulator, type Emulator, type EmulatorOptions } from '../../../src/emulator/index.js';
import { PictorClient, type LoggerLike } from '../../../src/index.js';
import { startDiscordBot, type DiscordBot, type StartDiscordBotOptions } from '../../../bots/discord/index.js';
import { ANSWER_TRIP_MS } from '../../../bots/runner/answer-budget.js';
import { DISCORD_LIMITS } from '../../../bots/discord/discord-facts.js';
import { vi } from 'vitest';
import { FileQuotaStore, JobRunner, settingsInState, memberDefaultsInState, type DmCaps, type IntakeAnswers, type JobUpdate, type OperatorControls, type SpendLimits } from '../../../bots/runner/index.js';
import { makeImage } from '../../helpers/images.js';
import { runnerOf, spyOnInstance } from '../../helpers/instance-spy.js';
import { openBotState, type BotState } from '../../../bots/state/index.js';
import { LEDGER_FILES } from '../../../src/spend/ledger-files.js';
import { openQuotaStore } from '../../../src/spend/open-store.js';
import { FakeDiscord, buttonsOf, type FakeDiscordOptions, type FakeInteraction, type FakeMessage } from '../../fakes/discord/FakeDiscord.js';

/** A logger that keeps every entry, so a test can check that no secret was ever logged. */
export class RecordingLogger implements LoggerLike {
  readonly entries: { level: string; obj: object; msg: string | undefined }[] = [];
  debug(obj: object, msg?: string): void {
    this.entries.push({ level: 'debug', obj, msg });
  }
  info(obj: object, msg?: string): void {
    this.entries.push({ level: 'info', obj, msg });
  }
  warn(obj: object, msg?: string): void {
    this.entries.push({ level: 'warn', obj, msg });
  }
  error(obj: object, msg?: string): void {
    this.entries.push({ level: 'error', obj, msg });
  }
  /** Every entry as text; errors with every enumerable property, as pino's error serializer writes them. */
  text(): string {
    const errors = (_key: string, v: unknown) => (v instanceof Error ? { ...v, name: v.name, message: v.message, stack: v.stack } : v);
    return this.entries.map((e) => JSON.stringify(e.obj, errors) + (e.msg ?? '')).join('\n');
  }
}

export interface HarnessOptions {
  limits?: SpendLimits;
  /** The operator's DM caps (PICTOR_DM_DAILY_USD, PICTOR_DM_MONTHLY_USD). */
  dmCaps?: DmCaps;
  /** What the operator allows every server (PICTOR_ALLOWED_SCOPES, PICTOR_BLOCKED_WORDS …). */
  controls?: OperatorControls;
  partialImages?: number;
  emulator?: EmulatorOptions;
  discord?: FakeDiscordOptions;
  bot?: Partial<Omit<StartDiscordBotOptions, 'runner' | 'logger' | 'dataDir' | 'token' | 'state'>>;
  /** The client's retries of 5xx/429 upstream. Default 0, so failures show at once. */
  maxRetries?: number;
  /** The runner's bound on the input images held by queued edits (PICTOR_MAX_QUEUED_INPUT_MB), in bytes. */
  maxQueuedInputBytes?: number;
  /** Interactions over HTTP: the bot takes them at an interactions endpoint the fake Discord POSTs to, signed, instead of the gateway. */
  http?: boolean;
  /** Over HTTP, the endpoint's `ackDeadlineMs` (default Discord's 3 s). */
  endpointAckDeadlineMs?: number;
  /** The runner's clock (default `Date.now`): a test tells its times from the bot's own. */
  runnerNow?: () => number;
  /** Holds each event of the service's streamed answers until this settles (`serveHoldingEvents`); index 0 is the first. */
  holdEvent?: (harness: DiscordHarness, index: number) => Promise<unknown>;
}

/**
 * The real discord.js client (inside startDiscordBot) logged in to a fake
 * Discord, a real JobRunner over a real PictorClient, and the emulator, all on
 * 127.0.0.1. `restart()` replaces the bot and runner, keeping the data folder.
 */
export class DiscordHarness {
  readonly logger = new RecordingLogger();
  bot!: DiscordBot;
  runner!: JobRunner;
  /** The bots' state of the current process (the data folder's). */
  state!: BotState;
  #quotaStore!: FileQuotaStore;
  #closeEmulator!: () => Promise<void>;
  get quotaStore(): FileQuotaStore {
    return this.#quotaStore;
  }

  /** Runners left behind by a simulated crash, shut down on close (`now`: their ledger died with them, so they wait for nothing). */
  readonly #abandoned: { runner: JobRunner; now?: boolean }[] = [];

  private constructor(
    readonly discord: FakeDiscord,
    readonly emulator: Emulator,
    readonly emulatorUrl: string,
    readonly dataDir: string,
    readonly options: HarnessOptions,
  ) {}

  static async start(options: HarnessOptions = {}): Promise<DiscordHarness> {
    const discord = await FakeDiscord.start({ messageRateLimit: { limit: 30, windowMs: 5000 }, heartbeatIntervalMs: 1000, ...options.discord });
    const emulator = createEmulator({ latencyMs: 150, recordImageBytes: true, ...options.emulator });
    // The held stream asks the harness, made once the server's address is known.
    const made: { harness?: DiscordHarness } = {};
    const { holdEvent } = options;
    const server = holdEvent ? await serveHoldingEvents(emulator, (index) => holdEvent(made.harness!, index)) : await emulator.listen({ port: 0 });
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-discord-'));
    const harness = (made.harness = new DiscordHarness(discord, emulator, server.url, dataDir, options));
    harness.#closeEmulator = server.close;
    await harness.#startBot();
    return harness;
  }

  async #startBot(keepQuotaStore = false): Promise<void> {
    // The ledger allows one open store per process; a simulated crash keeps using it.
    if (!keepQuotaStore) this.#quotaStore = new FileQuotaStore({ dir: this.dataDir });
    this.state = await openBotState({ dataDir: this.dataDir, ledger: this.#quotaStore, logger: this.logger });
    this.runner = new JobRunner({
      client: new PictorClient({ baseURL: this.emulatorUrl, apiKey: DEV_API_KEY, maxRetries: this.options.maxRetries ?? 0 }),
      store: this.#quotaStore,
      limits: this.options.limits ?? {},
      dmCaps: this.options.dmCaps,
      minUpdateIntervalMs: 5,
      partialImages: this.options.partialImages ?? 2,
      logger: this.logger,
      operatorControls: this.options.controls,
      history: this.state,
      settings: settingsInState(this.state.store.space(this.state.spaces.scopeSettings)),
      styles: this.state.store.space(this.state.spaces.houseStyles),
      memberDefaults: memberDefaultsInState(this.state.store.space(this.state.spaces.memberDefaults)),
      auditPosts: this.state.store.space(this.state.spaces.auditPosts),
      auditEnded: this.state.store.space(this.state.spaces.auditEnded),
      // Audit entries are posted a moment after they come (2 s in production), so the tests see them soon.
      auditBatchMs: 50,
      // A failed audit post is tried again a moment later (a minute in production).
      auditPostRetryMs: 50,
      maxQueuedInputBytes: this.options.maxQueuedInputBytes,
      now: this.options.runnerNow,
    });
    this.bot = await startDiscordBot({
      token: this.discord.botToken,
      applicationId: this.discord.applicationId,
      apiBaseUrl: this.discord.apiBaseUrl,
      runner: this.runner,
      ledger: this.#quotaStore,
      state: this.state,
      allowedAttachmentHosts: [this.discord.cdnHost],
      logger: this.logger,
      stopGraceMs: 5000,
      ...(this.options.http ? { interactions: { publicKey: this.discord.publicKeyHex, host: '127.0.0.1', port: 0, ackDeadlineMs: this.options.endpointAckDeadlineMs } } : {}),
      ...this.options.bot,
    });
    // As an operator would set the new address in the Developer Portal (a replica behind a load balancer keeps one).
    if (this.options.http) this.discord.interactionsEndpoint = this.bot.interactionsUrl;
  }

  async #stopBot(): Promise<void> {
    await this.runner.shutdown({ graceMs: 1000 });
    await this.bot.stop();
    await this.state.close();
    await this.#quotaStore.close();
  }

  /**
   * A new bot process: new client and runner, same data folder. A `crash`
   * skips the graceful shutdown: running jobs never report their end. With
   * `leaseLapsed`, the crash takes the ledger too (its lease is renewed no more,
   * its reservations stay in the file), and the next start comes once that lease
   * has lapsed: it opens the ledger as a start does (`openQuotaStore`), whose
   * reconcile ends the dead process's reservations (charges the sent ones).
   */
  async restart(options: { crash?: boolean; leaseLapsed?: boolean } = {}): Promise<void> {
    if (options.crash) {
      this.#abandoned.push({ runner: this.runner, now: options.leaseLapsed });
      // Off the gateway for good, as a killed process is (a client only destroyed mid-login comes back through
      // discord.js's own retry); its jobs' replies are not waited for.
      await this.bot.stop({ graceMs: 0 });
      // A process that died writes nothing more into the data folder (its jobs go on here, writing nowhere).
      await this.state.close();
      if (options.leaseLapsed) {
        await this.#quotaStore.close();
        await lapseLeases(this.dataDir);
        this.#quotaStore = (await openQuotaStore({ dataDir: this.dataDir, logger: this.logger })) as FileQuotaStore;
      }
      await this.#startBot(true);
      return;
    }
    await this.#stopBot();
    await this.#startBot();
  }

  async close(): Promise<void> {
    for (const { runner, now } of this.#abandoned) await runner.shutdown({ graceMs: 0, ...(now && { until: Date.now() }) });
    await this.#stopBot();
    await this.discord.close();
    await this.#closeEmulator();
    await this.emulator.close();
    // Nothing writes into the folder any more: the state's close ended the writes under way and refuses later ones.
    await rm(this.dataDir, { recursive: true, force: true });
  }

  /** Waits until the interaction's reply has buttons (a final result, failure or cancellation) matching `done`. */
  finalReply(ix: FakeInteraction, done: (message: FakeMessage) => boolean = (m) => buttonsOf(m).some((b) => /^pictor:(reroll|retry):/.test(b.custom_id)), timeoutMs = 15_000): Promise<FakeMessage> {
    return this.discord.waitFor(() => {
      const message = this.discord.original(ix);
      return message && done(message) ? message : undefined;
    }, `the final reply of ${ix.kind} ${ix.name}`, timeoutMs);
  }
}

export { buttonsOf };

/**
 * Ages every lease in the data folder's ledger past its length, as the time after a process died does: a start then
 * takes their owners for gone (they share this process's pid, so only the lease's age tells). Nothing has the ledger open.
 */
async function lapseLeases(dataDir: string): Promise<void> {
  const path = join(dataDir, LEDGER_FILES.ledger);
  const ledger = JSON.parse(await readFile(path, 'utf8')) as { owners: Record<string, { renewedAt: number }> };
  for (const owner of Object.values(ledger.owners)) owner.renewedAt = 0;
  await writeFile(path, JSON.stringify(ledger));
}

/**
 * Waits until the interaction's reply says "Drawing…" (its job started), and answers a copy of that message as it was
 * then, its buttons with it: later edits (a sweep's, a cancellation's) do not change it, so a test can press its Cancel
 * as a client that did not refresh would.
 */
export function drawingReply(harness: Pick<DiscordHarness, 'discord'>, ix: FakeInteraction, what = 'the job to start'): Promise<FakeMessage> {
  return harness.discord.waitFor(() => {
    const message = harness.discord.original(ix);
    return message?.content.includes('Drawing') ? { ...message, components: structuredClone(message.components) } : undefined;
  }, what);
}

/**
 * Clicks Cancel on the job's message `running` and waits until that message no longer says "Drawing…": answers the
 * click and a copy of the message as it was then, so a later edit (a restart's) does not change what the test read.
 */
export async function cancelShown(harness: Pick<DiscordHarness, 'discord'>, running: FakeMessage): Promise<{ click: FakeInteraction; shown: FakeMessage }> {
  const click = harness.discord.clickButton(running, buttonId(running, 'Cancel'));
  const shown = await harness.discord.waitFor(() => {
    const message = harness.discord.messages.get(running.id);
    return message && !message.content.includes('Drawing') ? { ...message } : undefined;
  }, 'the job’s message changed');
  return { click, shown };
}

/** The custom_id of the button labelled `label` (throws if there is none). */
/** The first answer of an interaction (a command's private reply), once it has text. */
export function answerOf(harness: DiscordHarness, ix: FakeInteraction): Promise<FakeMessage> {
  return harness.discord.waitFor(() => {
    const message = harness.discord.original(ix);
    return message && message.content ? message : undefined;
  }, `the answer to /${ix.name}`);
}

/** Discord's flag of a message only the member who asked sees. */
export const EPHEMERAL = 64;

/**
 * The note only the member sees that answers an interaction: its first answer
 * (an ephemeral reply), or an ephemeral follow-up once a public answer was given.
 */
export function privateNoteOf(harness: DiscordHarness, ix: FakeInteraction): Promise<FakeMessage> {
  return harness.discord.waitFor(
    () => [...harness.discord.messages.values()].find((m) => m.interactionId === ix.id && (m.flags & EPHEMERAL) !== 0 && m.content !== ''),
    `a private note answering ${ix.kind} ${ix.name}`,
  );
}

/** The messages an interaction left that everyone in the channel sees (its public reply, follow-ups). */
export function publicMessagesOf(harness: DiscordHarness, ix: FakeInteraction): FakeMessage[] {
  return [...harness.discord.messages.values()].filter((m) => m.interactionId === ix.id && (m.flags & EPHEMERAL) === 0);
}

/**
 * From now on the bot's timers are the test's (they run as real time passes, and `passTheAnswerBudget` jumps them):
 * an interaction's answer budget runs out without waiting for it. Undone by `vi.useRealTimers()`.
 */
export function takeTheTimers(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'], shouldAdvanceTime: true });
}

/** Jumps the bot's timers past an interaction's answer budget (Discord's 3 s less its answer's trip), its clock left as it is. */
export async function passTheAnswerBudget(): Promise<void> {
  await vi.advanceTimersByTimeAsync(DISCORD_LIMITS.acknowledgeMs - ANSWER_TRIP_MS);
}

export function buttonId(message: FakeMessage, label: string): string {
  const button = buttonsOf(message).find((b) => b.label === label);
  if (!button) throw new Error(`no button "${label}" on message ${message.id} (it has ${buttonsOf(message).map((b) => b.label).join(', ') || 'none'})`);
  return button.custom_id;
}

/**
 * Hands the bot of `process` each job's final update as an answer mixing formats would have come: its second image a
 * JPEG, each image's own format in `formats` (`format` the first's, as the runner gives it).
 */
export function secondImageAsJpeg(process: { runner: JobRunner }): void {
  const request = JobRunner.prototype.request;
  spyOnInstance(JobRunner.prototype, 'request', runnerOf(process)).mockImplementation(function (this: JobRunner, intent, answers: IntakeAnswers) {
    return request.call(this, intent, {
      ...answers,
      accept: async (job) => {
        const accepted = await answers.accept(job);
        if (!accepted) return accepted;
        const jpeg = Buffer.from(await makeImage('jpeg', 32, 32));
        const mixed = (update: JobUpdate): JobUpdate =>
          (update.type === 'completed' || update.type === 'failed' || update.type === 'cancelled') && update.images && update.images.length > 1
            ? { ...update, images: [update.images[0]!, jpeg, ...update.images.slice(2)], formats: update.images.map((_, i) => (i === 1 ? 'jpeg' : 'png')) }
            : update;
        return { ...accepted, sink: (update) => accepted.sink(mixed(update)) };
      },
    });
  });
}


/**
 * A `holdEvent` that lets the service's next partial image (and then its final image) through only once Discord shows
 * the preview before it: every preview is shown, however slow the machine, where otherwise the next one may overtake it.
 */
export function previewByPreview(harness: DiscordHarness, index: number): Promise<unknown> {
  const shown = () => harness.discord.requests.flatMap((r) => r.files).filter((f) => f.filename.startsWith('preview-')).length;
  return index === 0 ? Promise.resolve() : harness.discord.waitFor(() => shown() >= index || undefined, `preview ${index} shown on Discord`);
}
