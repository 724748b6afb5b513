/**
 * The bots' state under image load: how long a claim in a data folder's space
 * (`claimOnce`, as the Slack replay guard makes for every signed request)
 * takes while the bots make previews and fits with sharp, with image work
 * unbounded (as before `withImageWork`) against through the process's bound
 * (`IMAGE_WORK_AT_ONCE`), side by side in one process, rounds alternating.
 *
 * Each round starts `--jobs` pieces of image work at once on a 1024x1536 noisy
 * PNG (about what the service sends): half the runner's preview (metadata,
 * then at most 512 px as JPEG), half Discord's fit of a final (WebP at quality
 * 90, as `fitImage` tries first). While they run, a claim starts every
 * `--every` ms (a new key each; at least `--claims` of them), as requests keep
 * arriving, each timed on its own. Printed per mode: the claims' median, p99
 * and slowest, how many took longer than the replay guard waits
 * (`CLAIM_WAIT_MS`: such a request is dropped), the image burst's wall time,
 * and ratios bounded / unbounded; a row with no image work is the floor.
 *
 * Every sharp call holds one of the 4 threads of Node's thread pool while
 * libvips works; unbounded, the state's file system calls queue behind them.
 *
 * Usage: node --import tsx bench/image-work-pool.ts [--jobs 12] [--claims 20] [--every 50] [--rounds 5]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { FileStateStore, type SpaceDefinition } from '../bots/state/index.js';
import { CLAIM_WAIT_MS } from '../src/core/claim-wait.js';
import { IMAGE_WORK_AT_ONCE, withImageWork } from '../src/core/image-work.js';
import { printTable } from './helpers/measure.js';

const { values: args } = parseArgs({
  options: {
    jobs: { type: 'string', default: '12' },
    claims: { type: 'string', default: '20' },
    every: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '5' },
  },
});
const JOBS = Number(args.jobs);
const CLAIMS = Number(args.claims);
const ROUNDS = Number(args.rounds);
const CLAIM_EVERY_MS = Number(args.every);
const SEEN: SpaceDefinition = { name: 'slack-seen', dir: 'slack/seen', ttlMs: 7 * 60_000, maxValueBytes: 64, maxCount: 100_000 };

type Mode = 'idle' | 'unbounded' | 'bounded';
type Run = <T>(work: () => Promise<T>) => Promise<T>;

const image = await noisyPng(1024, 1536);
const dataDir = await mkdtemp(join(tmpdir(), 'pictor-bench-image-work-'));
const store = new FileStateStore({ dataDir });
const seen = store.space<unknown>(SEEN);
let keys = 0;

const claims: Record<Mode, number[]> = { idle: [], unbounded: [], bounded: [] };
const bursts: Record<Mode, number[]> = { idle: [], unbounded: [], bounded: [] };
const modes: Mode[] = ['idle', 'unbounded', 'bounded'];

await round('unbounded', { claims: [], bursts: [] }); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  const order = modes.map((_, i) => modes[(i + r) % modes.length]!);
  for (const mode of order) await round(mode, { claims: claims[mode], bursts: bursts[mode] });
}
await store.close();
await rm(dataDir, { recursive: true, force: true });

console.log(`image work: ${JOBS} at once on a ${image.length}-byte 1024x1536 PNG (half previews, half fits); a claim every ${CLAIM_EVERY_MS} ms (at least ${CLAIMS}); ${ROUNDS} rounds; bound ${IMAGE_WORK_AT_ONCE}; UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? '(default 4)'}`);
printTable(
  ['mode', 'claims', 'claim median ms', 'claim p99 ms', 'claim slowest ms', `claims over ${CLAIM_WAIT_MS} ms`, 'image burst ms (median)'],
  modes.map((mode) => [
    mode,
    String(claims[mode].length),
    ms(quantile(claims[mode], 0.5)),
    ms(quantile(claims[mode], 0.99)),
    ms(Math.max(...claims[mode])),
    String(claims[mode].filter((t) => t > CLAIM_WAIT_MS).length),
    mode === 'idle' ? '–' : ms(quantile(bursts[mode], 0.5)),
  ]),
);
printTable(
  ['ratio', 'claim median', 'claim p99', 'image burst'],
  [['bounded / unbounded', ratio(claims.bounded, claims.unbounded, 0.5), ratio(claims.bounded, claims.unbounded, 0.99), ratio(bursts.bounded, bursts.unbounded, 0.5)]],
);

async function round(mode: Mode, into: { claims: number[]; bursts: number[] }): Promise<void> {
  const run: Run = mode === 'bounded' ? withImageWork : (work) => work();
  const started = performance.now();
  const burst = mode === 'idle' ? Promise.resolve() : Promise.all(Array.from({ length: JOBS }, (_, i) => (i % 2 ? fit(run) : preview(run))));
  // Requests keep arriving while the images are made: a claim every CLAIM_EVERY_MS, each timed on its own.
  let done = mode === 'idle';
  void burst.then(() => (done = true));
  const timed: Promise<void>[] = [];
  for (let i = 0; i < CLAIMS || !done; i++) {
    const at = performance.now();
    timed.push(seen.claimOnce(`bench-${keys++}`).then(() => void into.claims.push(performance.now() - at)));
    await sleep(CLAIM_EVERY_MS);
  }
  await Promise.all([burst, ...timed]);
  into.bursts.push(performance.now() - started);
}

/** The runner's preview: its metadata, then at most 512 px as JPEG (`bots/runner/preview-image.ts`). */
function preview(run: Run): Promise<unknown> {
  return run(async () => {
    const pipeline = sharp(image);
    await pipeline.metadata();
    return pipeline.resize({ width: 512, height: 512, fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 80 }).toBuffer();
  });
}

/** Discord's fit of a final too large to upload: its metadata, then WebP at quality 90 (`bots/discord/fit-images.ts`). */
async function fit(run: Run): Promise<unknown> {
  await run(() => sharp(image).metadata());
  return run(() => sharp(image).webp({ quality: 90 }).toBuffer());
}

/** Smooth bands with noise over them: about the bytes of a drawn 1024x1536 PNG (a few MB), not a flat one's. */
async function noisyPng(width: number, height: number): Promise<Buffer> {
  const raw = randomBytes(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (((i / (width * 3)) | 0) % 256 + (raw[i]! >> 3)) & 0xff;
  return sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

function ms(value: number): string {
  return value.toFixed(1);
}

function ratio(a: readonly number[], b: readonly number[], q: number): string {
  return (quantile(a, q) / quantile(b, q)).toFixed(2);
}
