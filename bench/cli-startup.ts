/**
 * What a one-off `pictor generate` costs against a service that answers at
 * once, next to a 6-line script doing the same with the official `openai`
 * client (helpers/openai-one-shot.mjs): one low-quality 1024x1024 image,
 * written to a file, a fresh node process each time.
 *
 * - The service is the emulator in a child process (latencyMs 0), the same for
 *   every contender; it caches what it renders, so after warm-up it only sends.
 * - Each sample is one process, started and awaited: wall time from spawn to
 *   exit, CPU time reported by the process itself at exit (user + system,
 *   helpers/report-cpu.mjs, preloaded into every contender alike).
 * - Rounds rotate the order of the contenders; medians are compared.
 * - `pictor` is the built CLI (`dist/cli/pictor.js`, the bundle `npm run
 *   pictor` and `npx pictor` run), so run `npm run build` first. `node (empty)` is the floor every
 *   contender pays; `pictor price` a command that sends nothing.
 *
 * - End to end: `pictor generate --n 4 --size 1536x1024` to files against the
 *   same script asking for the same and writing the same files (its rows say
 *   `4 × 1536x1024`, compared with each other).
 * - `--compare-with DIR`: another checkout of Pictor, built, whose CLI joins
 *   as `pictor generate (other)` (e.g. the commit before a change): its
 *   `dist/cli/pictor.js`, or `dist/src/cli/main.js` where there is none (builds
 *   from before the CLI was bundled).
 *
 * Usage: node --import tsx bench/cli-startup.ts [--rounds 10] [--warmup 2] [--compare-with DIR]
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, startChildServer } from './helpers/child-server.js';
import { median, ms, printTable, ratio, relativeIqr } from './helpers/measure.js';

const { values: args } = parseArgs({
  options: { rounds: { type: 'string', default: '10' }, warmup: { type: 'string', default: '2' }, 'compare-with': { type: 'string' } },
});
const ROUNDS = Number(args.rounds);
const WARMUP = Number(args.warmup);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || !Number.isInteger(WARMUP) || WARMUP < 0) throw new Error('--rounds must be ≥ 1 and --warmup ≥ 0');

const CLI = join(REPO_ROOT, 'dist/cli/pictor.js');
if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first`);
const REPORT_CPU = join(REPO_ROOT, 'bench/helpers/report-cpu.mjs');
const OPENAI_SCRIPT = join(REPO_ROOT, 'bench/helpers/openai-one-shot.mjs');
const PROMPT = 'a lighthouse at dusk';

const OTHER_CLI = args['compare-with'] ? builtCli(args['compare-with']) : undefined;
if (OTHER_CLI && !existsSync(OTHER_CLI)) throw new Error(`${OTHER_CLI} is missing: build that checkout first`);

function builtCli(dir: string): string {
  const bundled = join(dir, 'dist/cli/pictor.js');
  return existsSync(bundled) ? bundled : join(dir, 'dist/src/cli/main.js');
}

type Contender =
  | 'openai script'
  | 'pictor generate'
  | 'pictor generate (other)'
  | 'pictor price'
  | 'node (empty)'
  | 'openai script, 4 × 1536x1024'
  | 'pictor generate, 4 × 1536x1024';
const CONTENDERS: readonly Contender[] = [
  'openai script',
  'pictor generate',
  ...(OTHER_CLI ? (['pictor generate (other)'] as const) : []),
  'pictor price',
  'node (empty)',
  'openai script, 4 × 1536x1024',
  'pictor generate, 4 × 1536x1024',
];
const LARGE = { n: '4', size: '1536x1024' };

function commandOf(contender: Contender, outDir: string, index: number): string[] {
  switch (contender) {
    case 'openai script':
      return [OPENAI_SCRIPT, PROMPT, join(outDir, `openai-${index}.png`)];
    case 'pictor generate':
      return [CLI, 'generate', '--prompt', PROMPT, '--quality', 'low', '--out', `${outDir}/`];
    case 'pictor generate (other)':
      return [OTHER_CLI!, 'generate', '--prompt', PROMPT, '--quality', 'low', '--out', `${outDir}/`];
    case 'pictor price':
      return [CLI, 'price', '--quality', 'low'];
    case 'node (empty)':
      return ['-e', ''];
    case 'openai script, 4 × 1536x1024':
      return [OPENAI_SCRIPT, PROMPT, join(outDir, `openai-${index}.png`), LARGE.n, LARGE.size];
    case 'pictor generate, 4 × 1536x1024':
      return [CLI, 'generate', '--prompt', PROMPT, '--quality', 'low', '--n', LARGE.n, '--size', LARGE.size, '--out', `${outDir}/`];
  }
}

/** One process: wall time spawn → exit, CPU time as the process reported it. */
function runOnce(argv: string[], env: NodeJS.ProcessEnv): Promise<{ wallMs: number; cpuMs: number }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, ['--import', REPORT_CPU, ...argv], { cwd: REPO_ROOT, env, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let report = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => (report += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - start;
      if (code !== 0) reject(new Error(`${argv.join(' ')} exited with ${String(code)}: ${stderr}`));
      else resolve({ wallMs, cpuMs: (JSON.parse(report) as { cpuMs: number }).cpuMs });
    });
  });
}

const emulator = await startChildServer('./emulator-server.ts', [JSON.stringify({ latencyMs: 0 })]);
const outDir = await mkdtemp(join(tmpdir(), 'pictor-bench-cli-'));
try {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, PICTOR_BASE_URL: emulator.url, PICTOR_API_KEY: 'pictor-dev-key' };
  const samples = new Map<Contender, { wallMs: number; cpuMs: number }[]>(CONTENDERS.map((c) => [c, []]));
  let index = 0;
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const order = CONTENDERS.map((_, i) => CONTENDERS[(i + round) % CONTENDERS.length]!);
    for (const contender of order) {
      const sample = await runOnce(commandOf(contender, outDir, index++), env);
      if (round >= WARMUP) samples.get(contender)!.push(sample);
    }
  }
  const base = samples.get('openai script')!;
  const baseWall = median(base.map((s) => s.wallMs));
  const baseCpu = median(base.map((s) => s.cpuMs));
  console.log(`# CLI start-up: one-off generation, ${ROUNDS} rounds (+${WARMUP} warm-up), node ${process.version}`);
  printTable(
    ['contender', 'wall (median)', 'IQR/median', 'CPU (median)', 'wall vs openai', 'CPU vs openai'],
    CONTENDERS.map((c) => {
      const wall = samples.get(c)!.map((s) => s.wallMs);
      const cpu = samples.get(c)!.map((s) => s.cpuMs);
      return [c, ms(median(wall)), relativeIqr(wall).toFixed(2), ms(median(cpu)), ratio(median(wall), baseWall), ratio(median(cpu), baseCpu)];
    }),
  );
  const large = (c: Contender) => samples.get(c)!;
  const [pictorLarge, openaiLarge] = [large('pictor generate, 4 × 1536x1024'), large('openai script, 4 × 1536x1024')];
  console.log(
    `\nend to end, 4 × 1536x1024 to files: pictor/openai wall ${ratio(median(pictorLarge.map((s) => s.wallMs)), median(openaiLarge.map((s) => s.wallMs)))}, CPU ${ratio(median(pictorLarge.map((s) => s.cpuMs)), median(openaiLarge.map((s) => s.cpuMs)))}`,
  );
} finally {
  await rm(outDir, { recursive: true, force: true });
  await emulator.close();
}
