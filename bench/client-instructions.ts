/**
 * The clients of `client-compare.ts` counted in CPU instructions rather than
 * timed: a figure the machine's load does not change, for ratios that timing
 * on a shared 2-core machine cannot settle.
 *
 * - Each contender runs alone in a child process (bench/helpers/client-probe.ts)
 *   under valgrind's callgrind, which counts every instruction the process
 *   executes, in all its threads (JIT code, the garbage collector, the
 *   kernel's work excluded). The emulator runs natively in another child.
 * - Start-up and warm-up are taken out by difference: a contender runs twice,
 *   `--warmup` requests then 0 more, and `--warmup` then `--requests` more;
 *   (count of the second − count of the first) ÷ `--requests` is what one
 *   request costs once the code is warm. Both runs import the same code and
 *   warm up alike, so what is left is the requests' own work.
 * - `--compare-with DIR`: another checkout's build (`DIR/dist/src/index.js`,
 *   `npm run build` there first) as the contender `before`, beside this
 *   checkout's build (`pictor`; `npm run build` here first).
 * - Contenders run in a rotating order, `--repeats` times; medians and ranges.
 * - What it does not see: the kernel's share of a connection (connect, close:
 *   system time), which `client-compare.ts`'s CPU times include.
 *
 * Valgrind slows a process about 80 times: a streamed request takes ~0.2 s,
 * a run of 200 about a minute. Needs `valgrind` on PATH (Debian: apt-get
 * install valgrind); without it the script says so and ends.
 *
 * Usage: node --import tsx bench/client-instructions.ts [--compare-with DIR] [--workloads streamed[,nonStreamed]] [--contenders pictor,undici,undici-fresh] [--requests 200] [--warmup 40] [--repeats 2]
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { REPO_ROOT, startChildServer } from './helpers/child-server.js';
import { CONTENDER_NAMES, WORKLOADS, type ContenderName, type WorkloadName } from './helpers/contenders.js';
import { listOf, median, positiveInt, printTable } from './helpers/measure.js';

const { values: args } = parseArgs({
  options: {
    'compare-with': { type: 'string' },
    workloads: { type: 'string', default: 'streamed' },
    contenders: { type: 'string', default: 'pictor,undici,undici-fresh' },
    requests: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '40' },
    repeats: { type: 'string', default: '2' },
  },
});
const REQUESTS = positiveInt('requests', args.requests);
const WARMUP = positiveInt('warmup', args.warmup);
const REPEATS = positiveInt('repeats', args.repeats);
const workloads = listOf('workloads', args.workloads, Object.keys(WORKLOADS)) as WorkloadName[];
const chosen = listOf('contenders', args.contenders, CONTENDER_NAMES) as ContenderName[];

/** One thing counted: a contender of contenders.ts, and for Pictor which build. */
interface Entry {
  label: string;
  contender: ContenderName;
  build: string;
}
const thisBuild = join(REPO_ROOT, 'dist', 'src', 'index.js');
const entries: Entry[] = chosen.map((contender) => ({ label: contender, contender, build: thisBuild }));
if (args['compare-with']) {
  const build = join(resolve(args['compare-with']), 'dist', 'src', 'index.js');
  if (!existsSync(build)) throw new Error(`--compare-with: no build at ${build} (npm run build there first)`);
  entries.splice(1, 0, { label: 'before', contender: 'pictor', build });
}
if (entries.some((e) => e.contender === 'pictor' && e.build === thisBuild) && !existsSync(thisBuild)) {
  throw new Error(`no build at ${thisBuild}: run \`npm run build\` first`);
}

if (!(await hasValgrind())) {
  console.log('valgrind is not on PATH (Debian: apt-get install valgrind): nothing counted.');
  process.exit(0);
}

const PROBE = fileURLToPath(new URL('./helpers/client-probe.ts', import.meta.url));
const outDir = await mkdtemp(join(tmpdir(), 'pictor-callgrind-'));
const emulator = await startChildServer('./emulator-server.ts', [JSON.stringify({ latencyMs: 0 })]);
try {
  console.log(`# Instructions per request: ${entries.map((e) => e.label).join(', ')}`);
  console.log(
    `callgrind; per contender and repeat, (${WARMUP} warm-up + ${REQUESTS} requests) − (${WARMUP} warm-up + 0), ÷ ${REQUESTS}; ${REPEATS} repeats in rotating order; emulator (native) in child process ${emulator.pid}; node ${process.version}` +
      (args['compare-with'] ? `; before = the build of ${resolve(args['compare-with'])}` : ''),
  );
  for (const workload of workloads) {
    const counts = new Map<string, number[]>(entries.map((e) => [e.label, []]));
    for (let repeat = 0; repeat < REPEATS; repeat++) {
      const order = entries.map((_, i) => entries[(i + repeat) % entries.length]!);
      for (const entry of order) {
        const base = await countInstructions(entry, workload, 0);
        const full = await countInstructions(entry, workload, REQUESTS);
        const perRequest = (full - base) / REQUESTS;
        counts.get(entry.label)!.push(perRequest);
        console.log(`- ${workload}, ${entry.label}, repeat ${repeat + 1}: ${millions(perRequest)} M instructions per request`);
      }
    }
    const med = (label: string) => median(counts.get(label)!);
    console.log(`\n## ${workload}: instructions per request (median of ${REPEATS}, range)\n`);
    printTable(
      ['contender', 'M instructions', 'range'],
      entries.map((e) => [e.label, millions(med(e.label)), counts.get(e.label)!.map(millions).join(' – ')]),
    );
    const pairs: [string, string][] = [];
    for (const a of ['pictor', 'before']) for (const b of ['undici', 'undici-fresh', 'openai', 'before']) if (a !== b && counts.has(a) && counts.has(b)) pairs.push([a, b]);
    console.log(`\n## ${workload}: ratios of the medians (per repeat in brackets)\n`);
    printTable(
      ['ratio', 'instructions'],
      pairs.map(([a, b]) => [
        `${a}/${b}`,
        `${(med(a) / med(b)).toFixed(3)}× (${counts.get(a)!.map((x, i) => (x / counts.get(b)![i]!).toFixed(3)).join(', ')})`,
      ]),
    );
    console.log('');
  }
} finally {
  await emulator.close();
  await rm(outDir, { recursive: true, force: true });
}

/** Instructions the probe's whole process executed, as callgrind reports them. */
function countInstructions(entry: Entry, workload: WorkloadName, requests: number): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      'valgrind',
      [
        '--tool=callgrind',
        `--callgrind-out-file=${join(outDir, 'callgrind.%p')}`,
        process.execPath,
        // Everything on the main thread (V8's compiler and garbage collector too): the work is the same, its order
        // no longer depends on how valgrind schedules the threads.
        '--single-threaded',
        '--import',
        'tsx',
        PROBE,
        entry.contender,
        workload,
        emulator.url,
        String(WARMUP),
        String(requests),
        entry.build,
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      const collected = /Collected : (\d+)/.exec(stderr);
      if (code !== 0 || !collected || !stdout.includes('"bytes"')) {
        reject(new Error(`${entry.label} under callgrind exited ${code}:\n${stderr.slice(-2000)}${stdout.slice(-500)}`));
        return;
      }
      resolvePromise(Number(collected[1]));
    });
  });
}

function hasValgrind(): Promise<boolean> {
  return new Promise((done) => execFile('valgrind', ['--version'], (error) => done(!error)));
}

function millions(n: number): string {
  return (n / 1e6).toFixed(2);
}
