import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What a child process of the shared-limits tests is told at start (argv[2], JSON). */
export interface ChildConfig {
  redisUrl: string;
  prefix: string;
  baseURL: string;
  apiKey: string;
  imagesPerMinute?: number | undefined;
  maxConcurrent?: number | undefined;
  leaseMs?: number | undefined;
  heartbeatMs?: number | undefined;
  maxRetries?: number | undefined;
  /** The limiter's `toleranceMs`: how late a request may reach the service after it leaves. */
  toleranceMs?: number | undefined;
  prompt?: string | undefined;
}

export type ParentCommand = { type: 'run'; jobs: { id: string; n: number }[] } | { type: 'stop' };

export type ChildEvent =
  | { type: 'ready'; pid: number }
  | { type: 'fatal'; code: string; message: string }
  | { type: 'queued'; id: string; ahead: number }
  | { type: 'started'; id: string; at: number }
  | { type: 'retry'; id: string; code: string }
  | { type: 'done'; id: string; images: number; at: number }
  | { type: 'failed'; id: string; code: string; message: string };

const CHILD_SCRIPT = fileURLToPath(new URL('./shared-limits-child.ts', import.meta.url));

/** A child process running its own shared limiter and client; everything it reports is kept in `events`. */
export class Child {
  readonly name: string;
  readonly events: ChildEvent[] = [];
  readonly #process: ChildProcess;
  readonly #waiters = new Set<() => void>();
  #exited = false;

  constructor(name: string, config: ChildConfig) {
    this.name = name;
    this.#process = fork(CHILD_SCRIPT, [JSON.stringify(config)], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.#process.on('message', (event: ChildEvent) => {
      this.events.push(event);
      this.#wake();
    });
    this.#process.on('exit', () => {
      this.#exited = true;
      this.#wake();
    });
  }

  get exited(): boolean {
    return this.#exited;
  }

  run(jobs: { id: string; n: number }[]): void {
    this.#process.send({ type: 'run', jobs } satisfies ParentCommand);
  }

  /** Resolves when `predicate` holds on the events so far; rejects if the process exits first or `timeoutMs` passes. */
  waitFor(what: string, predicate: (events: ChildEvent[]) => boolean, timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        let holds: boolean;
        try {
          holds = predicate(this.events);
        } catch (error) {
          return done(() => reject(error as Error));
        }
        if (holds) return done(resolve);
        if (this.#exited) return done(() => reject(new Error(`${this.name} exited before ${what}: ${JSON.stringify(this.events.slice(-3))}`)));
      };
      const timer = setTimeout(() => done(() => reject(new Error(`${this.name}: no ${what} within ${timeoutMs} ms`))), timeoutMs);
      const done = (finish: () => void) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        finish();
      };
      this.#waiters.add(check);
      check();
    });
  }

  ready(timeoutMs = 20_000): Promise<void> {
    return this.waitFor('ready', (events) => {
      const fatal = events.find((e) => e.type === 'fatal');
      if (fatal) throw new Error(`${this.name} could not start: ${JSON.stringify(fatal)}`);
      return events.some((e) => e.type === 'ready');
    }, timeoutMs);
  }

  /** Resolves when every one of `ids` is done or failed. */
  finished(ids: readonly string[], timeoutMs?: number): Promise<void> {
    return this.waitFor(`the end of ${ids.length} jobs`, (events) => ids.every((id) => events.some((e) => (e.type === 'done' || e.type === 'failed') && e.id === id)), timeoutMs);
  }

  of<T extends ChildEvent['type']>(type: T): Extract<ChildEvent, { type: T }>[] {
    return this.events.filter((e): e is Extract<ChildEvent, { type: T }> => e.type === type);
  }

  /** SIGKILL: no clean-up of any kind. */
  kill(): void {
    this.#process.kill('SIGKILL');
  }

  /** Asks the child to stop its limiter and exit; kills it after `timeoutMs`. */
  async stop(timeoutMs = 5000): Promise<void> {
    if (this.#exited) return;
    const exited = new Promise<void>((resolve) => this.#process.once('exit', () => resolve()));
    try {
      this.#process.send({ type: 'stop' } satisfies ParentCommand);
    } catch {
      // The IPC channel is already gone; the kill below ends it.
    }
    const timer = setTimeout(() => this.#process.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}

/** Starts `count` children with the same config and waits until each has its limiter ready. */
export async function startChildren(count: number, config: ChildConfig, names = ['A', 'B', 'C', 'D', 'E', 'F']): Promise<Child[]> {
  const children = Array.from({ length: count }, (_, i) => new Child(names[i] ?? `child${i}`, config));
  try {
    await Promise.all(children.map((c) => c.ready()));
  } catch (error) {
    await Promise.all(children.map((c) => c.stop(1000)));
    throw error;
  }
  return children;
}
