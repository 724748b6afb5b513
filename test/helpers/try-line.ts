import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';

/**
 * Runs a printed "Try: VAR=… VAR=… npm run pictor -- …" line the way a shell
 * would in this repository: the assignments become the environment, and
 * `npm run pictor --` is this package's `pictor` script (the built CLI, whose
 * entry runs `main`); "Try: VAR=… npx pictor …", as in a project that installed
 * Pictor, is the package's `pictor` bin (the same built CLI). Run
 * from a fresh folder. Resolves with the exit code and the files it wrote.
 */
export async function runTryLine(line: string): Promise<{ code: number; files: string[]; stderr: string }> {
  const command = /Try:\s+(.*)$/.exec(line)?.[1];
  if (!command) throw new Error(`not a Try line: ${line}`);
  const words = [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
  const env: NodeJS.ProcessEnv = {};
  while (words[0] && /^[A-Z_]+=/.test(words[0])) {
    const [name, ...value] = words.shift()!.split('=');
    env[name!] = value.join('=');
  }
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
  let argv: string[];
  if (words.slice(0, 4).join(' ') === 'npm run pictor --') {
    if (!pkg.scripts.pictor?.includes('dist/cli/pictor.js')) throw new Error('package.json has no pictor script running the CLI');
    argv = words.slice(4);
  } else if (words.slice(0, 2).join(' ') === 'npx pictor') {
    if (pkg.bin.pictor !== 'dist/cli/pictor.js') throw new Error('package.json has no pictor bin running the CLI');
    argv = words.slice(2);
  } else {
    throw new Error(`neither an npm run pictor line nor an npx pictor line: ${command}`);
  }

  const dir = await mkdtemp(join(tmpdir(), 'pictor-try-'));
  const before = process.cwd();
  const stderr: string[] = [];
  try {
    process.chdir(dir);
    const code = await main(argv, { ...env, PICTOR_LOG_LEVEL: 'silent' }, { stdout: () => {}, stderr: (l) => stderr.push(l) });
    return { code, files: await readdir(dir, { recursive: true }), stderr: stderr.join('\n') };
  } finally {
    process.chdir(before);
    await rm(dir, { recursive: true, force: true });
  }
}
