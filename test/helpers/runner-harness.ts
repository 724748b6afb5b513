import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import {
  FileQuotaStore,
  JobRunner,
  type AuditPost,
  type AuditPoster,
  type FileQuotaStoreOptions,
  type FinalUpdate,
  type InputImage,
  type JobHandle,
  type JobRunnerOptions,
  type JobUpdate,
  type Requester,
  type UpdateSink,
} from '../../bots/runner/index.js';
import type { BotState } from '../../bots/state/index.js';
import type { Space, SpaceDefinition } from '../../bots/state/StateStore.js';
import type { EmulatorOptions } from '../../src/emulator/index.js';
import type { PictorClientOptions } from '../../src/index.js';
import { useEmulator } from './emulator.js';

/** A fresh data folder per call, removed after each test. */
export function useTempDirs(): () => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-runner-'));
    made.push(dir);
    return dir;
  };
}

/**
 * File ledgers a test opens at a folder, each closed after the test. Call it after `useTempDirs`: hooks after a test run
 * in reverse, so the ledgers close before their folders are removed.
 */
export function useFileQuotaStores(): (dir: string, options?: Partial<FileQuotaStoreOptions>) => FileQuotaStore {
  const open: FileQuotaStore[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((store) => store.close()));
  });
  return (dir, options = {}) => {
    const store = new FileQuotaStore({ dir, ...options });
    open.push(store);
    return store;
  };
}

let nextUser = 0;

/** A Discord requester with a user id of its own unless one is given. */
export function requester(overrides: Partial<Requester> = {}): Requester {
  nextUser += 1;
  return { platform: 'discord', userId: `user-${nextUser}`, channelId: 'channel-1', scopeId: 'guild-1', ...overrides };
}

export interface RecordedUpdate {
  update: JobUpdate;
  /** The clock's reading when the sink received it. */
  at: number;
}

/** An audit channel that keeps what it is given to post (10 entries a post), and edits nothing. */
export function recordingPoster(): AuditPoster & { posts: AuditPost[] } {
  const posts: AuditPost[] = [];
  return { posts, maxEntries: 10, post: async (post) => (posts.push(post), { messageId: String(posts.length) }), edit: async () => undefined, greet: async () => undefined };
}

/**
 * A sink that records every update with the time it arrived, optionally taking
 * `delayMs` to handle each one, and counts how many it handled at once.
 */
export function recordingSink(options: { clock?: () => number; delayMs?: number; onUpdate?: (update: JobUpdate) => void | Promise<void> } = {}) {
  const clock = options.clock ?? Date.now;
  const received: RecordedUpdate[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const sink: UpdateSink = async (update) => {
    received.push({ update, at: clock() });
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      await options.onUpdate?.(update);
    } finally {
      inFlight -= 1;
    }
  };
  return {
    sink,
    received,
    get types() {
      return received.map((r) => r.update.type);
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get final(): FinalUpdate | undefined {
      const last = received.at(-1)?.update;
      return last && (last.type === 'completed' || last.type === 'failed' || last.type === 'cancelled') ? last : undefined;
    },
    partials() {
      return received.flatMap((r) => (r.update.type === 'partial' ? [r.update] : []));
    },
  };
}

/**
 * Checks the runner's grammar: `queued`+ `started`? `partial`* then exactly one
 * final update, last; partials only after `started`, in stream order.
 */
export function expectOrderedSequence(updates: readonly JobUpdate[]): void {
  const types = updates.map((u) => u.type).join(' ');
  expect(types).toMatch(/^(queued )+(started (partial )*)?(completed|failed|cancelled)$/);
  const partials = updates.flatMap((u) => (u.type === 'partial' ? [u] : []));
  for (let i = 1; i < partials.length; i++) {
    const [a, b] = [partials[i - 1]!, partials[i]!];
    expect(b.imageIndex > a.imageIndex || (b.imageIndex === a.imageIndex && b.partialIndex > a.partialIndex)).toBe(true);
  }
  const ids = new Set(updates.map((u) => u.jobId));
  expect(ids.size).toBe(1);
}

/**
 * An edit through the intake whose images are being fetched until `arrive` (or `giveUp`) is called, as a surface
 * downloads them: while it waits it holds its place in the queue with `declaredBytes`. `admitted` settles once it holds
 * it (undefined) or was refused (the refusal); `handle` with the job once started, or undefined once given up (its
 * place then given back).
 */
export function editBeingFetched(runner: Pick<JobRunner, 'request'>, who: Requester, declaredBytes: number, sink: UpdateSink = () => {}) {
  let arrive!: (images: InputImage[]) => void;
  let giveUp!: (error: Error) => void;
  const fetched = new Promise<InputImage[]>((resolve, reject) => {
    arrive = resolve;
    giveUp = reject;
  });
  let admit!: (refusal: unknown) => void;
  const admitted = new Promise<unknown>((resolve) => (admit = resolve));
  const state = { fetchStarted: false };
  const fetch = () => {
    state.fetchStarted = true;
    return fetched;
  };
  const handle: Promise<JobHandle | undefined> = runner.request(
    { kind: 'edit', prompt: 'an edit being fetched', options: { quality: 'low' }, requester: who, images: { declaredBytes, fetch } },
    {
      refuse: async (refusal) => admit(refusal),
      accept: async () => {
        admit(undefined);
        return { sink };
      },
      fail: async () => {},
    },
  );
  return {
    admitted,
    handle,
    arrive,
    giveUp: () => giveUp(new Error('the download was given up')),
    /** Whether the runner asked for the images (it does once the job is admitted and answered). */
    get fetchStarted() {
      return state.fetchStarted;
    },
  };
}

/** Polls `check` until it is true, for at most `timeoutMs`. */
export async function waitUntil(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * An emulator on a free port plus factories for stores and runners pointed at
 * it; every runner is shut down and every store closed after each test.
 */
export function useRunnerKit(emulatorOptions: EmulatorOptions = {}) {
  const emu = useEmulator(emulatorOptions);
  const newDir = useTempDirs();
  const runners: JobRunner[] = [];
  const stores: FileQuotaStore[] = [];
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.shutdown({ graceMs: 0 })));
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  const kit = {
    emu,
    newDir,
    async store(options: Partial<FileQuotaStoreOptions> = {}): Promise<FileQuotaStore> {
      const store = new FileQuotaStore({ dir: options.dir ?? (await newDir()), ...options });
      stores.push(store);
      return store;
    },
    async runner(options: Partial<JobRunnerOptions> & { clientOptions?: PictorClientOptions } = {}) {
      const { clientOptions, ...rest } = options;
      const store = (rest.store as FileQuotaStore | undefined) ?? (await kit.store());
      const runner = new JobRunner({ client: emu.client(clientOptions), limits: {}, minUpdateIntervalMs: 0, ...rest, store });
      runners.push(runner);
      return { runner, store };
    },
  };
  return kit;
}

/**
 * The bots' state with one of its spaces seen through `wrap`: the methods it answers replace the space's (a read that
 * fails, a read counted), the rest are the space's own. Each `space()` of that definition is wrapped (on Redis each is a new object).
 */
export function withSpace(state: BotState, definition: SpaceDefinition, wrap: (space: Space<unknown>) => Partial<Space<unknown>>): BotState {
  const bound = (target: object, name: string | symbol): unknown => {
    const value: unknown = Reflect.get(target, name);
    return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
  };
  const space = (asked: SpaceDefinition) => {
    const opened = state.store.space<unknown>(asked);
    if (asked !== definition) return opened;
    const over: Partial<Space<unknown>> = wrap(opened);
    return new Proxy(opened, { get: (target, name) => (name in over ? over[name as keyof Space<unknown>] : bound(target, name)) });
  };
  const store = new Proxy(state.store, { get: (target, name) => (name === 'space' ? space : bound(target, name)) });
  return new Proxy(state, { get: (target, name) => (name === 'store' ? store : bound(target, name)) });
}
