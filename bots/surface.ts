import type { LoggerLike } from 'pictor';
import type { Env } from 'pictor/internal';
import type { JobRunner, QuotaStore } from './runner/index.js';
import type { BotState } from './state/index.js';

/** What `npm start` hands every surface it starts. */
export interface SurfaceContext {
  /** The one job runner of the process (budgets, queue, pacing). */
  runner: JobRunner;
  /**
   * The bots' state: the data folder, or Redis shared by replicas (whose link, `state.redis`, a surface borrows for
   * its leases and buckets). Closed by `npm start` after the surfaces.
   */
  state: BotState;
  /** The ledger the runner charges, to read what it charged a job (its usage records). */
  ledger?: Pick<QuotaStore, 'usage' | 'reconcile' | 'activeJobs'> | undefined;
  /** Already a child logger for this surface. */
  logger: LoggerLike;
  /** Counts a write the platform refused (metrics), when metrics are on. */
  onWriteRefused: (() => void) | undefined;
  /** A line for the operator (stdout). */
  print(line: string): void;
  /**
   * The surface can no longer run, after it started (a token the platform refused since): `npm start` prints the
   * message and stops the process as on SIGTERM (running jobs end within the grace), exiting 2 for a setting to change
   * (a ValidationError), as a failed start does. Once is enough.
   */
  fail(error: Error): void;
}

/** How a stop is bounded: see `RunningSurface.stop`. */
export interface StopOptions {
  until?: number | undefined;
}

/** A surface that runs. */
export interface RunningSurface {
  /** Readiness for /healthz: connected to its platform. */
  health(): boolean;
  /**
   * Called when the process begins to drain (SIGTERM) and other replicas may be running (`REDIS_URL` is set): lets go
   * of what brings it new work (a gateway lease, a socket connection) so the platform hands that to the others, while
   * the jobs this process runs keep writing their messages. Optional: a surface reached over HTTP has nothing to let
   * go of (its /healthz turns unready instead). Not called for a lone process: it has nobody to hand over to.
   */
  handOver?(): Promise<void>;
  /**
   * Stops taking interactions and shows what it still owes; called after the runner has ended the jobs. `until`
   * (a time in ms since the epoch, as `Date.now()`): by when it is done, however much it still owes — its waits share
   * what is left of it, so the process can still close its stores and Redis link after it. Without it, each wait
   * takes the surface's own default. Runs once (`stopOnce`): a second call gets the first one's stop, ended by the
   * earlier of their `until`s, a wait under way cut short too.
   */
  stop(options?: StopOptions): Promise<void>;
}

/**
 * One chat surface as `npm start` sees it: an id (for logs, metrics and
 * /healthz), its settings read from the environment (undefined when it is not
 * configured), the secrets among them (kept out of logs), and how to start it.
 * A new surface is a folder with one of these, and a line in `bots/main.ts`.
 */
export interface Surface<C = unknown> {
  id: string;
  /** What to tell an operator who has not configured any surface: the settings that turn this one on (in a container, its commands). */
  hint(where: { container: boolean }): string;
  readConfig(env: Env): C | undefined;
  secrets(config: C): (string | undefined)[];
  start(config: C, ctx: SurfaceContext): Promise<RunningSurface>;
}

/** A surface together with its settings, ready to start (the type of `main.ts`'s list). */
export interface ConfiguredSurface {
  id: string;
  secrets: (string | undefined)[];
  start(ctx: SurfaceContext): Promise<RunningSurface>;
}

/** A surface in `main.ts`'s list, whatever its settings' type. */
export interface ListedSurface {
  id: string;
  hint(where: { container: boolean }): string;
  /** Reads its settings: undefined when it is not configured (a ValidationError when they are wrong). */
  configure(env: Env): ConfiguredSurface | undefined;
}

export function listed<C>(surface: Surface<C>): ListedSurface {
  return {
    id: surface.id,
    hint: surface.hint,
    configure(env) {
      const config = surface.readConfig(env);
      if (config === undefined) return undefined;
      return { id: surface.id, secrets: surface.secrets(config), start: (ctx) => surface.start(config, ctx) };
    },
  };
}
