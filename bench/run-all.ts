/**
 * Runs every `bench/*.ts` script except this one, one after another, each in
 * its own node process (through tsx) with its output passed straight through.
 * Scripts are picked up by listing the folder, so a new benchmark needs no
 * registration here. Exits non-zero if any script failed; the rest still run.
 *
 * Usage: node --import tsx bench/run-all.ts [--only name[,name…]] [--list]
 *   (`npm run bench` runs it)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const SELF = basename(fileURLToPath(import.meta.url));

const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    list: { type: 'boolean', default: false },
  },
});

const all = (await readdir(BENCH_DIR, { withFileTypes: true }))
  .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !entry.name.startsWith('.') && entry.name !== SELF)
  .map((entry) => entry.name)
  .sort();
const wanted = args.only?.split(',').map((name) => name.trim().replace(/\.ts$/, ''));
const unknown = wanted?.filter((name) => !all.includes(`${name}.ts`)) ?? [];
if (unknown.length) {
  console.error(`no such benchmark: ${unknown.join(', ')} (have: ${all.map((n) => n.replace(/\.ts$/, '')).join(', ')})`);
  process.exit(2);
}
const scripts = wanted ? all.filter((name) => wanted.includes(name.replace(/\.ts$/, ''))) : all;

if (args.list) {
  for (const script of scripts) console.log(script);
  process.exit(0);
}

const outcomes: { script: string; code: number | null; signal: NodeJS.Signals | null; seconds: number }[] = [];
for (const script of scripts) {
  console.log(`\n========== bench/${script} ==========\n`);
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', `${BENCH_DIR}${script}`], { cwd: REPO_ROOT, stdio: 'inherit' });
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  outcomes.push({ script, code, signal, seconds: (performance.now() - started) / 1000 });
}

console.log('\n========== summary ==========\n');
for (const { script, code, signal, seconds } of outcomes) {
  const status = code === 0 ? 'ok' : signal ? `killed by ${signal}` : `FAILED (exit ${String(code)})`;
  console.log(`${status.padEnd(20)} ${script} (${seconds.toFixed(1)} s)`);
}
process.exitCode = outcomes.every((o) => o.code === 0) ? 0 : 1;
