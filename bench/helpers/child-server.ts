import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface ChildServer {
  /** Base address, e.g. `http://127.0.0.1:53127`. */
  url: string;
  /** The child's process id. */
  pid: number;
  close(): Promise<void>;
}

/** Repository root, so children resolve `tsx` and `src/` the same way the parent does. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Runs `script` (a TypeScript file under bench/helpers) in its own node process
 * through tsx and waits for the `{"url": …}` line it prints once listening.
 * Servers live in a child so the parent's CPU time and memory measure only the client.
 */
export async function startChildServer(script: string, args: readonly string[] = []): Promise<ChildServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(script, import.meta.url)), ...args], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${script} exited with code ${String(code)} before it was listening`);
  });
  const first = (async () => {
    for await (const line of lines) return JSON.parse(line) as { url: string };
    throw new Error(`${script} closed its output before it was listening`);
  })();
  const { url } = await Promise.race([first, exited]);
  exited.catch(() => undefined);
  lines.close();
  child.stdout.resume();
  return {
    url,
    pid: child.pid!,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = once(child, 'exit');
      child.stdin.end();
      await gone;
    },
  };
}

/** Child side: announce `url`, then shut down when the parent closes our stdin or sends SIGTERM. */
export function serveUntilParentLeaves(url: string, stop: () => Promise<void>): void {
  process.stdout.write(`${JSON.stringify({ url })}\n`);
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    void stop().finally(() => process.exit(0));
  };
  process.stdin.on('end', shutdown);
  process.stdin.on('close', shutdown);
  process.stdin.resume();
  process.on('SIGTERM', shutdown);
}
