import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { IDataObject, INodeParameters } from './n8n-workflow.js';

/** What the child is told at start (argv[2], JSON): where the built node package is. */
export interface N8nProcessConfig {
  /** The folder `scripts/build.mjs --outdir` built the package into (inside nodes/node_modules, so its imports resolve as installed). */
  bundleDir: string;
  /** nodes/, whence n8n-workflow (CommonJS, as n8n loads it) is required. */
  nodesDir: string;
}

/** One execution of the Pictor Image node: its parameters, how many input items, the credential. */
export interface ExecutionRequest {
  parameters: INodeParameters;
  items: number;
  credentials: Record<string, unknown>;
  continueOnFail?: boolean | undefined;
}

/** What an execution gave: the output items' JSON and binary field names, or the node error it threw. */
export type ExecutionOutcome =
  | { ok: true; items: { json: IDataObject; binary: string[] }[] }
  | { ok: false; error: { name: string; message: string; description: string | null; context: IDataObject } };

export type ChildCommand = { type: 'execute'; id: number; request: ExecutionRequest } | { type: 'stop' };
export type ChildReport = { type: 'ready' } | { type: 'executed'; id: number; outcome: ExecutionOutcome };

/** A second n8n "process": a child running the built node package through the harness, one execution per call. */
export interface N8nProcess {
  execute(request: ExecutionRequest, timeoutMs?: number): Promise<ExecutionOutcome>;
  stop(): Promise<void>;
}

const CHILD_SCRIPT = fileURLToPath(new URL('./n8n-process-child.ts', import.meta.url));

export async function startN8nProcess(config: N8nProcessConfig, timeoutMs = 20_000): Promise<N8nProcess> {
  const child: ChildProcess = fork(CHILD_SCRIPT, [JSON.stringify(config)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, (outcome: ExecutionOutcome) => void>();
  let nextId = 1;
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));

  await bounded(
    new Promise<void>((resolve, reject) => {
      child.on('message', (report: ChildReport) => {
        if (report.type === 'ready') resolve();
        else waiting.get(report.id)?.(report.outcome);
      });
      void exit.then(() => reject(new Error('the n8n child process exited before it was ready')));
    }),
    timeoutMs,
    'the n8n child process did not start',
  ).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });

  return {
    execute(request, executeTimeoutMs = 30_000) {
      const id = nextId++;
      const answer = new Promise<ExecutionOutcome>((resolve, reject) => {
        waiting.set(id, resolve);
        void exit.then(() => reject(new Error('the n8n child process exited during an execution')));
      });
      child.send({ type: 'execute', id, request } satisfies ChildCommand);
      return bounded(answer, executeTimeoutMs, `the child's execution ${id} did not finish`).finally(() => waiting.delete(id));
    },
    async stop() {
      if (exited) return;
      child.send({ type: 'stop' } satisfies ChildCommand);
      await bounded(exit, 5000, 'the n8n child process did not stop').catch(() => {
        child.kill('SIGKILL');
        return exit;
      });
    },
  };
}

function bounded<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
