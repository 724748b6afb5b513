import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createEmulator, DEV_API_KEY } from '../../src/emulator/index.js';
import { padImage } from '../../src/emulator/pad-image.js';
import { FakeDiscord, buttonsOf, type FakeInteraction } from '../fakes/discord/FakeDiscord.js';
import { makeImage } from './images.js';

/** Edits sent at once by different members: each with `images` PNGs of `imageBytes` bytes. */
export interface EditMemoryScenario {
  edits: readonly { images: number; imageBytes: number }[];
  /** The runner's input bound (`PICTOR_MAX_QUEUED_INPUT_MB`, in bytes); default the runner's own. */
  maxQueuedInputBytes?: number | undefined;
  /** A checkout whose bots and core the bot process loads (default this one), e.g. the commit before a change. */
  root?: string | undefined;
  /** Load the build (`dist/`) instead of the sources through tsx. */
  dist?: boolean | undefined;
  /** The image service's time per image. Default 300 ms. */
  latencyMs?: number | undefined;
}

export interface EditMemoryResult {
  /** The bot process's RSS after start-up, one small edit and two full GCs. */
  idleRss: number;
  /** Its high-water mark of resident memory (VmHWM) from then to the end of the scenario. */
  peakRss: number;
  /** The most input bytes its runner held at once (what the input bound counts), sampled every millisecond. */
  maxInputBytesHeld: number;
  /** `process.memoryUsage()` of the bot process when its sampled RSS was highest (where the memory was). */
  atPeak: NodeJS.MemoryUsage;
  /** (peak − idle) ÷ the most input bytes held. */
  ratio: number;
  /** Input bytes the scenario's edits offered in all. */
  offeredBytes: number;
  completed: number;
  /** Refused before anything was sent: `queue_full`, `input_too_large`. */
  refused: number;
}

const PROBE = fileURLToPath(new URL('./edit-memory-probe.ts', import.meta.url));

/**
 * Runs a scenario of `/edit`s against a bot process of its own (edit-memory-probe.ts) and measures what that process
 * holds: the fake Discord (with its CDN, which serves the images) and the image service (the emulator) run here, so
 * the child's memory is the bot's alone. Linux only (VmHWM).
 */
export async function measureEditMemory(scenario: EditMemoryScenario): Promise<EditMemoryResult> {
  const biggest = Math.max(...scenario.edits.map((e) => e.imageBytes));
  const discord = await FakeDiscord.start({ attachmentSizeLimit: Math.max(10 * 1024 * 1024, biggest + 1), messageRateLimit: { limit: 50, windowMs: 1000 } });
  const emulator = createEmulator({ latencyMs: scenario.latencyMs ?? 300 });
  const server = await emulator.listen({ port: 0 });
  let probe: Probe | undefined;
  try {
    const base = Buffer.from(await makeImage('png', 64, 64));
    const attachments = (images: number, bytes: number, tag: string) =>
      Array.from({ length: images }, (_, i) => discord.hostFile({ filename: `${tag}-${i + 1}.png`, bytes: padImage(base, 'png', bytes) }));
    const asks = scenario.edits.map((edit, i) => attachments(edit.images, edit.imageBytes, `m${i + 1}`));
    const warmUp = attachments(1, 4096, 'warm-up');

    probe = await Probe.start({
      root: scenario.root,
      dist: scenario.dist,
      apiBaseUrl: discord.apiBaseUrl,
      token: discord.botToken,
      cdnHost: discord.cdnHost,
      emulatorUrl: server.url,
      apiKey: DEV_API_KEY,
      maxQueuedInputBytes: scenario.maxQueuedInputBytes,
    });
    // One small edit first, so the code it runs is loaded and compiled before the idle footprint is taken.
    await finalOf(discord, editWith(discord, warmUp, discord.newUser('warm-up')));
    await probe.ask('baseline');

    const interactions = asks.map((files, i) => editWith(discord, files, discord.newUser(`member-${i + 1}`)));
    const finals = await Promise.all(interactions.map((ix) => finalOf(discord, ix)));
    const report = (await probe.ask('report')) as { idleRss: number; peakRss: number; maxInputBytesHeld: number; atPeak: NodeJS.MemoryUsage };
    const completed = finals.filter((m) => buttonsOf(m).some((b) => /^pictor:reroll:/.test(b.custom_id))).length;
    return {
      ...report,
      ratio: report.maxInputBytesHeld > 0 ? (report.peakRss - report.idleRss) / report.maxInputBytesHeld : Number.NaN,
      offeredBytes: scenario.edits.reduce((sum, e) => sum + e.images * e.imageBytes, 0),
      completed,
      refused: finals.filter((m) => m.content.includes('costs nothing')).length,
    };
  } finally {
    await probe?.stop();
    await discord.close();
    await server.close();
    await emulator.close();
  }
}

function editWith(discord: FakeDiscord, files: ReturnType<FakeDiscord['hostFile']>[], user: ReturnType<FakeDiscord['newUser']>): FakeInteraction {
  const options: Record<string, string | ReturnType<FakeDiscord['hostFile']>> = { prompt: 'make it brighter', quality: 'low' };
  files.forEach((file, i) => (options[`image${i + 1}`] = file));
  return discord.slashCommand('edit', options, { user });
}

/** The reply once the job ended: its result (with buttons) or a refusal (nothing started, nothing spent). */
function finalOf(discord: FakeDiscord, ix: FakeInteraction) {
  return discord.waitFor(
    () => {
      const message = discord.original(ix);
      return message && (buttonsOf(message).some((b) => /^pictor:(reroll|retry):/.test(b.custom_id)) || message.content.includes('costs nothing')) ? message : undefined;
    },
    `the end of ${ix.name}`,
    10 * 60_000,
  );
}

/** The bot process: its JSON lines, and the word it waits for. */
class Probe {
  readonly #child: ChildProcess;
  readonly #lines: AsyncIterator<string>;
  /** Its data folder, made and removed here: the process is stopped with a signal, before it could remove it. */
  readonly #dataDir: string;

  private constructor(child: ChildProcess, lines: Interface, dataDir: string) {
    this.#child = child;
    this.#lines = lines[Symbol.asyncIterator]();
    this.#dataDir = dataDir;
  }

  static async start(config: object): Promise<Probe> {
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-edit-memory-'));
    const child = spawn(process.execPath, ['--import', 'tsx', PROBE, JSON.stringify({ ...config, dataDir })], { stdio: ['pipe', 'pipe', 'inherit'] });
    const probe = new Probe(child, createInterface({ input: child.stdout! }), dataDir);
    try {
      await probe.#next();
    } catch (error) {
      await probe.stop();
      throw error;
    }
    return probe;
  }

  async ask(word: string): Promise<unknown> {
    this.#child.stdin!.write(`${word}\n`);
    return this.#next();
  }

  async #next(): Promise<unknown> {
    const { value, done } = await this.#lines.next();
    if (done) throw new Error('the bot process ended before it answered');
    return JSON.parse(value as string) as unknown;
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      const exited = new Promise((resolve) => this.#child.once('exit', resolve));
      this.#child.stdin!.end();
      this.#child.kill('SIGTERM');
      await exited;
    }
    await rm(this.#dataDir, { recursive: true, force: true });
  }
}
