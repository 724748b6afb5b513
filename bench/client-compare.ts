/**
 * The Pictor client vs the official `openai` client vs a bare undici
 * `request()`, against the same emulator, side by side in one run.
 *
 * - The emulator runs in a child process (127.0.0.1, port 0, latencyMs 0), so
 *   this process's CPU time is the client's alone. It caches what it renders,
 *   so after warm-up it only encodes and sends.
 * - Time: each round runs every contender `batch` times in a row per workload,
 *   contenders in an order that cycles through all 6 permutations, after a
 *   full GC (outside the timed window) so no contender pays for another's
 *   garbage. One sample is the batch's time divided by its size; medians of
 *   the samples are compared.
 * - `--forced-gc off`: no full GC before each batch. A forced full GC resets
 *   V8's heap sizing, and the garbage collections that follow in the next few
 *   requests cost a client that keeps more alive per request (Pictor holds the
 *   base64 and the decoded bytes of a result) far more than they would in a
 *   process that runs steadily (measured: Pictor's non-streamed CPU per request
 *   ~7 ms in 200 requests in a row, ~12 ms with a full GC every 4, bare undici
 *   ~7.5 ms either way). Without it, use batches long enough for the GC to
 *   settle (e.g. `--batch 20`); the rotating order spreads the garbage one
 *   contender leaves over the others alike.
 * - Where Pictor's extra time goes: the shared `ImageLimiter` every Pictor
 *   request passes through, timed alone (acquire + release) in this process.
 * - Memory: one child process per contender and workload (all three clients
 *   imported in each, one exercised), peak resident memory above the idle
 *   footprint; see helpers/memory-probe.ts.
 *
 * - Every contender turns each image it receives into bytes once, as a caller
 *   that writes or uploads it must (Pictor: the bytes its check decoded).
 * - Contenders: pictor, openai, undici (a kept-alive connection reused, as
 *   undici does by default) and undici-fresh (the same, with a new connection
 *   per request, as Pictor opens on purpose): pictor/undici-fresh is Pictor's
 *   own work, undici-fresh/undici the cost of that connection policy.
 * - `--pictor dist` measures the built package (`dist/src/`, `npm run build`
 *   first), the JavaScript users run, instead of the TypeScript source through
 *   tsx; source-mapped stack traces (which tsx turns on for the whole process)
 *   are then turned off, so an error's stack costs every contender what it
 *   costs under plain node. Memory is measured on the source either way.
 *
 * Usage: node --import tsx bench/client-compare.ts [--pictor src|dist] [--rounds 40] [--batch 4] [--warmup 5] [--forced-gc on|off] [--memory-rounds 10] [--memory-repeats 3]
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ImageLimiter } from '../src/index.js';
import { startChildServer } from './helpers/child-server.js';
import { runChildScript } from './helpers/child-script.js';
import { CONTENDER_NAMES, makeContender, WORKLOADS, type Contender, type ContenderName, type PictorModule, type WorkloadName } from './helpers/contenders.js';
import { collectGarbage, mb, median, ms, printTable, ratio, relativeIqr, timed } from './helpers/measure.js';

const { values: args } = parseArgs({
  options: {
    pictor: { type: 'string', default: 'src' },
    rounds: { type: 'string', default: '40' },
    batch: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '5' },
    'forced-gc': { type: 'string', default: 'on' },
    'memory-rounds': { type: 'string', default: '10' },
    'memory-repeats': { type: 'string', default: '3' },
  },
});
const ROUNDS = positiveInt('rounds', args.rounds);
const BATCH = positiveInt('batch', args.batch);
const WARMUP = positiveInt('warmup', args.warmup);
const MEMORY_ROUNDS = positiveInt('memory-rounds', args['memory-rounds']);
const MEMORY_REPEATS = positiveInt('memory-repeats', args['memory-repeats']);
if (args['forced-gc'] !== 'on' && args['forced-gc'] !== 'off') throw new RangeError(`--forced-gc must be on or off, got ${JSON.stringify(args['forced-gc'])}`);
const FORCED_GC = args['forced-gc'] === 'on';
if (args.pictor !== 'src' && args.pictor !== 'dist') throw new RangeError(`--pictor must be src or dist, got ${JSON.stringify(args.pictor)}`);
const pictorModule = args.pictor === 'dist' ? await loadBuild() : undefined;

const LIMITER_SAMPLES = 15;
const LIMITER_BATCH = 100;
const WORKLOAD_NAMES = Object.keys(WORKLOADS) as WorkloadName[];
const LABELS: Record<WorkloadName, string> = {
  nonStreamed: 'non-streamed, n=4, 1536x1024 PNG',
  streamed: 'streamed, 3 partials + completed, 1536x1024 PNG',
};
/** All orders of the contenders; round r uses PERMUTATIONS[r % PERMUTATIONS.length]. */
const PERMUTATIONS: readonly (readonly ContenderName[])[] = permutations(CONTENDER_NAMES);

interface Sample {
  wallMs: number;
  cpuMs: number;
}

const emulator = await startChildServer('./emulator-server.ts', [JSON.stringify({ latencyMs: 0 })]);
try {
  console.log(`# Core client: Pictor vs openai ${await openaiVersion()} vs bare undici`);
  console.log(`emulator in child process ${emulator.pid} at ${emulator.url}; node ${process.version}; ${ROUNDS} rounds of ${BATCH} requests per client and workload, after ${WARMUP} warm-up rounds${FORCED_GC ? ", a full GC before each batch" : ", no forced GC"}`);
  console.log(
    pictorModule
      ? 'pictor: the build (dist/src/), source-mapped stack traces off in this process\n'
      : 'pictor: the TypeScript source through tsx (source-mapped stack traces on for every contender)\n',
  );

  const contenders = Object.fromEntries(CONTENDER_NAMES.map((name) => [name, makeContender(name, emulator.url, pictorModule)])) as Record<ContenderName, Contender>;
  await checkSameAnswers(contenders);

  const samples = await timeSideBySide(contenders);
  for (const workload of WORKLOAD_NAMES) {
    console.log(`\n## ${LABELS[workload]}: time per request (median of ${ROUNDS})\n`);
    printTable(
      ['client', 'wall', 'CPU (this process)', 'CPU spread (IQR/median)'],
      CONTENDER_NAMES.map((name) => {
        const s = samples[workload][name];
        return [name, ms(median(s.map((x) => x.wallMs))), ms(median(s.map((x) => x.cpuMs))), `${(relativeIqr(s.map((x) => x.cpuMs)) * 100).toFixed(0)}%`];
      }),
    );
  }

  const limiter = await timeLimiter();
  console.log('\n## The shared ImageLimiter alone (every Pictor request passes through it once)\n');
  console.log(`acquire + release of a free slot: ${ms(limiter.wallMs)} wall, ${ms(limiter.cpuMs)} CPU (median of ${LIMITER_SAMPLES} runs of ${LIMITER_BATCH})`);

  console.log(`\n## Peak memory above idle (median of ${MEMORY_REPEATS} child processes per cell, ${MEMORY_ROUNDS} requests each)\n`);
  const memory = await measureMemory(emulator.url);

  console.log('\n## Ratios (Pictor ÷ other; below 1 = Pictor costs less)\n');
  const rows: string[][] = [];
  for (const workload of WORKLOAD_NAMES) {
    const med = (name: ContenderName, key: keyof Sample) => median(samples[workload][name].map((x) => x[key]));
    const mem = memory[workload];
    for (const other of ['openai', 'undici', 'undici-fresh'] as const) {
      rows.push([
        LABELS[workload],
        `pictor/${other}`,
        ratio(med('pictor', 'wallMs'), med(other, 'wallMs')),
        ratio(med('pictor', 'cpuMs'), med(other, 'cpuMs')),
        ratio(mem.pictor.rss, mem[other].rss),
        ratio(mem.pictor.heap, mem[other].heap),
      ]);
    }
  }
  printTable(['workload', 'ratio', 'wall', 'CPU', 'peak RSS', 'peak heap'], rows);

  console.log('\n## CPU goal (every contender decodes each image once): non-streamed ≤ 0.8× openai and ≤ 1.2× bare undici; streamed ≤ 1.1× bare undici\n');
  for (const workload of WORKLOAD_NAMES) {
    const cpu = (name: ContenderName) => median(samples[workload][name].map((x) => x.cpuMs));
    const vsOpenai = cpu('pictor') / cpu('openai');
    const vsUndici = cpu('pictor') / cpu('undici');
    const met = workload === 'nonStreamed' ? vsOpenai <= 0.8 && vsUndici <= 1.2 : vsUndici <= 1.1;
    console.log(`- ${LABELS[workload]}: pictor/openai ${vsOpenai.toFixed(2)}, pictor/undici ${vsUndici.toFixed(2)} → ${met ? 'met' : 'MISSED'}`);
  }
  console.log('\n## Split of the gap to bare undici: a fresh connection per request (undici-fresh/undici) and Pictor\'s own work (pictor/undici-fresh)\n');
  for (const workload of WORKLOAD_NAMES) {
    const cpu = (name: ContenderName) => median(samples[workload][name].map((x) => x.cpuMs));
    console.log(`- ${LABELS[workload]}: undici-fresh/undici ${(cpu('undici-fresh') / cpu('undici')).toFixed(2)}, pictor/undici-fresh ${(cpu('pictor') / cpu('undici-fresh')).toFixed(2)}`);
  }
} finally {
  await emulator.close();
}

/** Every contender must receive the same image data, or the comparison is meaningless. */
async function checkSameAnswers(contenders: Record<ContenderName, Contender>): Promise<void> {
  for (const workload of WORKLOAD_NAMES) {
    const received = await Promise.all(CONTENDER_NAMES.map((name) => contenders[name].run(workload)));
    if (new Set(received).size !== 1 || received[0] === 0) {
      throw new Error(`the contenders received different image data for ${workload}: ${received.join(', ')} bytes of images`);
    }
    console.log(`- ${LABELS[workload]}: each request carries ${mb(received[0]!)} of images (decoded)`);
  }
}

async function timeSideBySide(contenders: Record<ContenderName, Contender>): Promise<Record<WorkloadName, Record<ContenderName, Sample[]>>> {
  const samples = Object.fromEntries(
    WORKLOAD_NAMES.map((w) => [w, Object.fromEntries(CONTENDER_NAMES.map((n) => [n, [] as Sample[]]))]),
  ) as Record<WorkloadName, Record<ContenderName, Sample[]>>;
  for (let round = -WARMUP; round < ROUNDS; round++) {
    const order = PERMUTATIONS[(round + WARMUP) % PERMUTATIONS.length]!;
    for (const workload of WORKLOAD_NAMES) {
      for (const name of order) {
        if (FORCED_GC) collectGarbage();
        const { wallMs, cpuMs } = await timed(async () => {
          for (let i = 0; i < BATCH; i++) await contenders[name].run(workload);
        });
        if (round >= 0) samples[workload][name].push({ wallMs: wallMs / BATCH, cpuMs: cpuMs / BATCH });
      }
    }
  }
  return samples;
}

/** The real limiter a default PictorClient makes, free (nothing queued, no rate limit): its own cost per request. */
async function timeLimiter(): Promise<Sample> {
  const limiter = new ImageLimiter();
  const runs: Sample[] = [];
  for (let i = -2; i < LIMITER_SAMPLES; i++) {
    collectGarbage();
    const { wallMs, cpuMs } = await timed(async () => {
      for (let k = 0; k < LIMITER_BATCH; k++) (await limiter.acquire({ weight: 1 }))();
    });
    if (i >= 0) runs.push({ wallMs: wallMs / LIMITER_BATCH, cpuMs: cpuMs / LIMITER_BATCH });
  }
  await limiter.stop();
  return { wallMs: median(runs.map((r) => r.wallMs)), cpuMs: median(runs.map((r) => r.cpuMs)) };
}

interface ProbeResult {
  name: ContenderName;
  workload: WorkloadName;
  exactPeak: boolean;
  peakRssDelta: number;
  peakHeapDelta: number;
}

async function measureMemory(url: string): Promise<Record<WorkloadName, Record<ContenderName, { rss: number; heap: number }>>> {
  const out = {} as Record<WorkloadName, Record<ContenderName, { rss: number; heap: number }>>;
  let exact = true;
  const rows: string[][] = [];
  for (const workload of WORKLOAD_NAMES) {
    const results = Object.fromEntries(CONTENDER_NAMES.map((n) => [n, [] as ProbeResult[]])) as Record<ContenderName, ProbeResult[]>;
    for (let repeat = 0; repeat < MEMORY_REPEATS; repeat++) {
      for (const name of PERMUTATIONS[repeat % PERMUTATIONS.length]!) {
        const result = await runChildScript<ProbeResult>('./memory-probe.ts', [name, workload, url, String(MEMORY_ROUNDS)]);
        exact &&= result.exactPeak;
        results[name].push(result);
      }
    }
    out[workload] = Object.fromEntries(
      CONTENDER_NAMES.map((name) => [
        name,
        { rss: median(results[name].map((r) => r.peakRssDelta)), heap: median(results[name].map((r) => r.peakHeapDelta)) },
      ]),
    ) as Record<ContenderName, { rss: number; heap: number }>;
    for (const name of CONTENDER_NAMES) rows.push([LABELS[workload], name, mb(out[workload][name].rss), mb(out[workload][name].heap)]);
  }
  printTable(['workload', 'client', 'peak RSS above idle', 'peak heap + ArrayBuffers above idle (sampled)'], rows);
  if (!exact) console.log('\n(peak RSS is getrusage maxrss since process start here: /proc/self/clear_refs was not available)');
  return out;
}

/** The built package, with stack traces as plain node makes them (tsx turned source maps on for the process). */
async function loadBuild(): Promise<PictorModule> {
  const entry = new URL('../dist/src/index.js', import.meta.url);
  if (!existsSync(fileURLToPath(entry))) throw new Error('--pictor dist needs the build: run `npm run build` first');
  process.setSourceMapsEnabled(false);
  return (await import(entry.href)) as PictorModule;
}

async function openaiVersion(): Promise<string> {
  const { VERSION } = await import('openai/version');
  return VERSION;
}

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

function positiveInt(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`--${name} must be a whole number of at least 1, got ${JSON.stringify(text)}`);
  return value;
}
