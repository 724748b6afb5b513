/**
 * The Pictor client vs the official `openai` client vs a bare undici
 * `request()`, against the same emulator, side by side in one run.
 *
 * - The emulator runs in a child process (127.0.0.1, port 0, latencyMs 0), so
 *   this process's CPU time is the client's alone. It caches what it renders,
 *   so after warm-up it only encodes and sends.
 * - Time: each round runs every contender `batch` times in a row per workload,
 *   contenders in an order that cycles through all their permutations, after a
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
 * - `--compare-with DIR`: another checkout's build (`DIR/dist/src/index.js`,
 *   `npm run build` there first) as one more contender, `before`, timed in the
 *   same rounds as the others (needs `--pictor dist`, so both sides are
 *   builds); ratios pictor/before and before/undici are added. Its memory is
 *   not measured.
 * - `--contenders` runs a subset (e.g. without openai, whose streamed requests
 *   cost 4-5 times the others, so more rounds fit in the same time);
 *   `--workloads` likewise; `--memory off` skips the memory probes.
 * - CPU is split into user and system time: a fresh connection per request is
 *   mostly the kernel's work (connect, close), seen in the system column.
 *
 * Usage: node --import tsx bench/client-compare.ts [--pictor src|dist] [--compare-with DIR] [--contenders pictor,openai,undici,undici-fresh] [--workloads nonStreamed,streamed] [--rounds 40] [--batch 4] [--warmup 5] [--forced-gc on|off] [--memory on|off] [--memory-rounds 10] [--memory-repeats 3]
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ImageLimiter } from '../src/index.js';
import { startChildServer } from './helpers/child-server.js';
import { runChildScript } from './helpers/child-script.js';
import { CONTENDER_NAMES, makeContender, WORKLOADS, type Contender, type ContenderName, type PictorModule, type WorkloadName } from './helpers/contenders.js';
import { collectGarbage, listOf, mb, median, ms, positiveInt, printTable, ratio, relativeIqr, timed } from './helpers/measure.js';

const { values: args } = parseArgs({
  options: {
    pictor: { type: 'string', default: 'src' },
    'compare-with': { type: 'string' },
    contenders: { type: 'string', default: CONTENDER_NAMES.join(',') },
    workloads: { type: 'string', default: Object.keys(WORKLOADS).join(',') },
    memory: { type: 'string', default: 'on' },
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
if (args.memory !== 'on' && args.memory !== 'off') throw new RangeError(`--memory must be on or off, got ${JSON.stringify(args.memory)}`);
if (args['compare-with'] && args.pictor !== 'dist') throw new RangeError('--compare-with compares two builds: add --pictor dist');
const pictorModule = args.pictor === 'dist' ? await loadBuild(new URL('../dist/src/index.js', import.meta.url)) : undefined;
const beforeModule = args['compare-with'] ? await loadBuild(pathToFileURL(join(resolve(args['compare-with']), 'dist', 'src', 'index.js'))) : undefined;

/** A contender of contenders.ts, or `before`: the Pictor contender made of another checkout's build. */
type Label = ContenderName | 'before';
const NAMES: readonly Label[] = [...(listOf('contenders', args.contenders, CONTENDER_NAMES) as ContenderName[]), ...(beforeModule ? ['before' as const] : [])];
const has = (name: Label) => NAMES.includes(name);

const LIMITER_SAMPLES = 15;
const LIMITER_BATCH = 100;
const WORKLOAD_NAMES = listOf('workloads', args.workloads, Object.keys(WORKLOADS)) as WorkloadName[];
const LABELS: Record<WorkloadName, string> = {
  nonStreamed: 'non-streamed, n=4, 1536x1024 PNG',
  streamed: 'streamed, 3 partials + completed, 1536x1024 PNG',
};
/** All orders of the contenders; round r uses PERMUTATIONS[r % PERMUTATIONS.length]. */
const PERMUTATIONS: readonly (readonly Label[])[] = permutations(NAMES);

interface Sample {
  wallMs: number;
  cpuMs: number;
  /** The system (kernel) part of cpuMs. */
  systemMs: number;
}

const emulator = await startChildServer('./emulator-server.ts', [JSON.stringify({ latencyMs: 0 })]);
try {
  console.log(`# Core client: Pictor vs openai ${await openaiVersion()} vs bare undici`);
  console.log(`emulator in child process ${emulator.pid} at ${emulator.url}; node ${process.version}; ${ROUNDS} rounds of ${BATCH} requests per client and workload, after ${WARMUP} warm-up rounds${FORCED_GC ? ", a full GC before each batch" : ", no forced GC"}`);
  console.log(
    pictorModule
      ? `pictor: the build (dist/src/)${beforeModule ? `; before: the build of ${resolve(args['compare-with']!)}` : ''}, source-mapped stack traces off in this process\n`
      : 'pictor: the TypeScript source through tsx (source-mapped stack traces on for every contender)\n',
  );

  const contenders = Object.fromEntries(
    NAMES.map((name) => [name, name === 'before' ? { ...makeContender('pictor', emulator.url, beforeModule), name } : makeContender(name, emulator.url, pictorModule)]),
  ) as Record<Label, Contender>;
  await checkSameAnswers(contenders);

  const samples = await timeSideBySide(contenders);
  for (const workload of WORKLOAD_NAMES) {
    console.log(`\n## ${LABELS[workload]}: time per request (median of ${ROUNDS})\n`);
    printTable(
      ['client', 'wall', 'CPU (this process)', 'of which system', 'CPU spread (IQR/median)'],
      NAMES.map((name) => {
        const s = samples[workload][name];
        return [
          name,
          ms(median(s.map((x) => x.wallMs))),
          ms(median(s.map((x) => x.cpuMs))),
          ms(median(s.map((x) => x.systemMs))),
          `${(relativeIqr(s.map((x) => x.cpuMs)) * 100).toFixed(0)}%`,
        ];
      }),
    );
  }

  const limiter = await timeLimiter();
  console.log('\n## The shared ImageLimiter alone (every Pictor request passes through it once)\n');
  console.log(`acquire + release of a free slot: ${ms(limiter.wallMs)} wall, ${ms(limiter.cpuMs)} CPU (median of ${LIMITER_SAMPLES} runs of ${LIMITER_BATCH})`);
  if (args.memory === 'on') console.log(`\n## Peak memory above idle (median of ${MEMORY_REPEATS} child processes per cell, ${MEMORY_ROUNDS} requests each)\n`);

  const memory = args.memory === 'on' ? await measureMemory(emulator.url) : undefined;

  console.log('\n## Ratios (first ÷ second; below 1 = the first costs less)\n');
  const rows: string[][] = [];
  for (const workload of WORKLOAD_NAMES) {
    const med = (name: Label, key: keyof Sample) => median(samples[workload][name].map((x) => x[key]));
    const medUser = (name: Label) => median(samples[workload][name].map((x) => x.cpuMs - x.systemMs));
    const mem = memory?.[workload];
    const memoryRatio = (a: Label, b: Label, key: 'rss' | 'heap') => {
      const x = mem?.[a as ContenderName];
      const y = mem?.[b as ContenderName];
      return x && y ? ratio(x[key], y[key]) : '—';
    };
    for (const [a, b] of comparedPairs()) {
      rows.push([
        LABELS[workload],
        `${a}/${b}`,
        ratio(med(a, 'wallMs'), med(b, 'wallMs')),
        ratio(med(a, 'cpuMs'), med(b, 'cpuMs')),
        ratio(medUser(a), medUser(b)),
        memoryRatio(a, b, 'rss'),
        memoryRatio(a, b, 'heap'),
      ]);
    }
  }
  printTable(['workload', 'ratio', 'wall', 'CPU', 'user CPU', 'peak RSS', 'peak heap'], rows);

  const cpu = (workload: WorkloadName, name: Label) => median(samples[workload][name].map((x) => x.cpuMs));
  if (has('undici')) {
    console.log('\n## CPU goal (every contender decodes each image once): non-streamed ≤ 0.8× openai and ≤ 1.2× bare undici; streamed ≤ 1.1× bare undici\n');
    for (const workload of WORKLOAD_NAMES) {
      for (const name of (['pictor', 'before'] as const).filter(has)) {
        const vsUndici = cpu(workload, name) / cpu(workload, 'undici');
        const vsOpenai = has('openai') ? cpu(workload, name) / cpu(workload, 'openai') : undefined;
        const met = workload === 'nonStreamed' ? (vsOpenai === undefined || vsOpenai <= 0.8) && vsUndici <= 1.2 : vsUndici <= 1.1;
        console.log(
          `- ${LABELS[workload]}: ${vsOpenai === undefined ? '' : `${name}/openai ${vsOpenai.toFixed(2)}, `}${name}/undici ${vsUndici.toFixed(2)} → ${met ? 'met' : 'MISSED'}`,
        );
      }
    }
  }
  if (has('undici') && has('undici-fresh')) {
    console.log("\n## Split of the gap to bare undici: a fresh connection per request (undici-fresh/undici) and Pictor's own work (pictor/undici-fresh)\n");
    for (const workload of WORKLOAD_NAMES) {
      const own = (['pictor', 'before'] as const).filter(has).map((name) => `${name}/undici-fresh ${(cpu(workload, name) / cpu(workload, 'undici-fresh')).toFixed(2)}`);
      console.log(`- ${LABELS[workload]}: undici-fresh/undici ${(cpu(workload, 'undici-fresh') / cpu(workload, 'undici')).toFixed(2)}, ${own.join(', ')}`);
    }
  }
} finally {
  await emulator.close();
}

/** Every contender must receive the same image data, or the comparison is meaningless. */
async function checkSameAnswers(contenders: Record<Label, Contender>): Promise<void> {
  for (const workload of WORKLOAD_NAMES) {
    const received = await Promise.all(NAMES.map((name) => contenders[name].run(workload)));
    if (new Set(received).size !== 1 || received[0] === 0) {
      throw new Error(`the contenders received different image data for ${workload}: ${received.join(', ')} bytes of images`);
    }
    console.log(`- ${LABELS[workload]}: each request carries ${mb(received[0]!)} of images (decoded)`);
  }
}

async function timeSideBySide(contenders: Record<Label, Contender>): Promise<Record<WorkloadName, Record<Label, Sample[]>>> {
  const samples = Object.fromEntries(
    WORKLOAD_NAMES.map((w) => [w, Object.fromEntries(NAMES.map((n) => [n, [] as Sample[]]))]),
  ) as Record<WorkloadName, Record<Label, Sample[]>>;
  for (let round = -WARMUP; round < ROUNDS; round++) {
    const order = PERMUTATIONS[(round + WARMUP) % PERMUTATIONS.length]!;
    for (const workload of WORKLOAD_NAMES) {
      for (const name of order) {
        if (FORCED_GC) collectGarbage();
        const { wallMs, cpuMs, systemMs } = await timed(async () => {
          for (let i = 0; i < BATCH; i++) await contenders[name].run(workload);
        });
        if (round >= 0) samples[workload][name].push({ wallMs: wallMs / BATCH, cpuMs: cpuMs / BATCH, systemMs: systemMs / BATCH });
      }
    }
  }
  return samples;
}

/** The real limiter a default PictorClient makes, free (nothing queued, no rate limit): its own cost per request. */
async function timeLimiter(): Promise<Omit<Sample, 'systemMs'>> {
  const limiter = new ImageLimiter();
  const runs: Omit<Sample, 'systemMs'>[] = [];
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

async function measureMemory(url: string): Promise<Record<WorkloadName, Partial<Record<ContenderName, { rss: number; heap: number }>>>> {
  const out = {} as Record<WorkloadName, Partial<Record<ContenderName, { rss: number; heap: number }>>>;
  let exact = true;
  const rows: string[][] = [];
  // The source's contenders only (the probes import this checkout's source), never `before`.
  const probed = NAMES.filter((name): name is ContenderName => name !== 'before');
  const orders = permutations(probed);
  for (const workload of WORKLOAD_NAMES) {
    const results = Object.fromEntries(probed.map((n) => [n, [] as ProbeResult[]])) as Record<ContenderName, ProbeResult[]>;
    for (let repeat = 0; repeat < MEMORY_REPEATS; repeat++) {
      for (const name of orders[repeat % orders.length]!) {
        const result = await runChildScript<ProbeResult>('./memory-probe.ts', [name, workload, url, String(MEMORY_ROUNDS)]);
        exact &&= result.exactPeak;
        results[name].push(result);
      }
    }
    const cells = Object.fromEntries(
      probed.map((name) => [name, { rss: median(results[name].map((r) => r.peakRssDelta)), heap: median(results[name].map((r) => r.peakHeapDelta)) }]),
    ) as Record<ContenderName, { rss: number; heap: number }>;
    out[workload] = cells;
    for (const name of probed) rows.push([LABELS[workload], name, mb(cells[name].rss), mb(cells[name].heap)]);
  }
  printTable(['workload', 'client', 'peak RSS above idle', 'peak heap + ArrayBuffers above idle (sampled)'], rows);
  if (!exact) console.log('\n(peak RSS is getrusage maxrss since process start here: /proc/self/clear_refs was not available)');
  return out;
}

/** A built package (its `dist/src/index.js`), with stack traces as plain node makes them (tsx turned source maps on for the process). */
async function loadBuild(entry: URL): Promise<PictorModule> {
  if (!existsSync(fileURLToPath(entry))) throw new Error(`no build at ${fileURLToPath(entry)}: run \`npm run build\` in that checkout first`);
  process.setSourceMapsEnabled(false);
  return (await import(entry.href)) as PictorModule;
}

async function openaiVersion(): Promise<string> {
  const { VERSION } = await import('openai/version');
  return VERSION;
}

/** The pairs the ratios compare: Pictor (and `before`) against each other contender run, and Pictor against `before`. */
function comparedPairs(): [Label, Label][] {
  const pairs: [Label, Label][] = [];
  for (const a of ['pictor', 'before'] as const) {
    if (!has(a)) continue;
    for (const b of ['openai', 'undici', 'undici-fresh'] as const) if (has(b)) pairs.push([a, b]);
  }
  if (has('pictor') && has('before')) pairs.push(['pictor', 'before']);
  if (has('undici') && has('undici-fresh')) pairs.push(['undici-fresh', 'undici']);
  return pairs;
}

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}
