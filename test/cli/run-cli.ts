import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/context.js';
import { followOutput, outputOf, type ChildOutput } from '../helpers/child-output.js';
import { killedAtTestEnd } from '../helpers/killed-at-test-end.js';
import { testTempDir, testTempDirSync } from '../helpers/temp-dir.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The CLI's entry point, run from the sources (through tsx) so a test never meets a stale build. */
export const CLI_ENTRY = join(REPO_ROOT, 'src/cli/main.ts');
/** tsx by its file address, so the child finds it from any working directory. */
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** A folder for one test's files, removed after it. */
export const tempDir = () => testTempDir('pictor-cli-');

/**
 * The per-user state folder the CLI keeps its ledger in by default: a
 * throwaway one for each run (unless a test sets its own), never the real
 * `~/.local/state/pictor`. One per run, as runs in this process stand for
 * processes of their own (a file ledger is opened once per process). Removed
 * after the test.
 */
const testStateHome = () => testTempDirSync('pictor-state-');

/** Runs `main` in this process with captured output. */
export async function run(argv: string[], environment: NodeJS.ProcessEnv = {}, io: Partial<CliIo> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { XDG_STATE_HOME: testStateHome(), ...environment }, {
    stdout: (l) => {
      out.push(l);
      io.stdout?.(l);
    },
    stderr: (l) => {
      err.push(l);
      io.stderr?.(l);
    },
    ...(io.cwd ? { cwd: io.cwd } : {}),
    ...(io.progressEveryMs ? { progressEveryMs: io.progressEveryMs } : {}),
    ...(io.stdoutIsTerminal ? { stdoutIsTerminal: true } : {}),
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Runs the CLI in its own process (for what only a process shows: its entry point, `.env`, stray log lines). */
export function spawnCli(
  args: string[],
  options: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    /** Close the reading end of its stdout at once, as `| head -0` would. */
    stdoutGone?: boolean;
    /** Run as this user (and group) instead of the test's. */
    user?: { uid?: number; gid?: number };
  } = {},
): Promise<ChildOutput> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, XDG_STATE_HOME: testStateHome(), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options.user,
  });
  if (options.stdoutGone) child.stdout.destroy();
  return outputOf(child);
}

/**
 * `pictor <args>` in a process of its own, for a test that acts on it while it runs (a signal, a kill): what it writes
 * is followed as it comes, and the process is killed and waited for at the test's end (`killedAtTestEnd`). Its
 * environment is PATH and HOME and `env`, which may replace them.
 */
export function cliInAProcess(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killedAtTestEnd(child, `pictor ${args[0] ?? ''}`.trim());
  const output = followOutput(child);
  // Once closed: the streams are read to their end too.
  return { process: child, ...output, exited: output.ended.then(({ code }) => code) };
}
