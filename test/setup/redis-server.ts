import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '../helpers/free-port.js';

/** A redis-server this test run started on loopback, with nothing persisted. */
export interface ThrowawayRedis {
  url: string;
  /** Stops it and starts a new one on the same port: it comes back empty (nothing is persisted), as a Redis without persistence after a restart. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Resolves when redis-server says it accepts connections; rejects when it exits or says nothing for `timeoutMs`. */
function ready(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => finish(new Error(`redis-server was not ready after ${timeoutMs} ms: ${said.slice(-300)}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      said = (said + chunk.toString()).slice(-4000);
      if (/ready to accept connections/i.test(said)) finish();
    };
    const onExit = (code: number | null) => finish(new Error(`redis-server exited (${code}): ${said.slice(-300)}`));
    const onError = (error: Error) => finish(error);
    function finish(error?: Error) {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      if (error) reject(error);
      else resolve();
    }
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

function stopped(child: ChildProcess): Promise<void> {
  // Never started (no such program), or already gone.
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Starts `binary` (redis-server from PATH by default) on a free loopback port,
 * saving nothing, in a temporary folder. Undefined when there is no such
 * program; a port taken between probing and binding is retried.
 */
export async function startThrowawayRedis(binary = 'redis-server', attempts = 3, settings: readonly string[] = []): Promise<ThrowawayRedis | undefined> {
  const launch = async (port: number, dir: string): Promise<ChildProcess> => {
    const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...settings], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      await ready(child, 10_000);
    } catch (error) {
      await stopped(child);
      throw error;
    }
    child.stdout?.resume();
    return child;
  };
  for (let attempt = 1; ; attempt++) {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-test-redis-'));
    const port = await freeLoopbackPort();
    let child: ChildProcess;
    try {
      child = await launch(port, dir);
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      if (attempt >= attempts) throw error;
      continue;
    }
    return {
      url: `redis://127.0.0.1:${port}`,
      async restart() {
        await stopped(child);
        child = await launch(port, dir);
      },
      async stop() {
        await stopped(child);
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
}
