import { vi, type Mock } from 'vitest';
import type { JobRecordStore } from '../../bots/discord/JobRecordStore.js';
import type { JobRunner } from '../../bots/runner/index.js';
import type { RequestStore } from '../../bots/slack/RequestStore.js';
import type { BotState, Space } from '../../bots/state/index.js';

type Method = (...args: never[]) => unknown;
type MethodOf<T> = { [K in keyof T]: T[K] extends Method ? K : never }[keyof T];

/**
 * A spy on `method` of one instance of a class, picked by `mine` at each call, for an instance the test cannot reach
 * before it is used (one made inside the code under test, or by a restart still to come): the method is wrapped on
 * the prototype, but only the calls of the instance `mine` picks reach the mock answered (its `mock.calls` are that
 * instance's, and its `…Once` fakes are used up by that instance alone). Every other instance gets the real method —
 * one a test of another file left running (the unit tests share one process), or a process this test stopped. Where
 * nothing public tells the instance, `mine` may pick by the call's arguments instead (the test's own job). Undone by
 * `vi.restoreAllMocks()`, or by the returned spy's own `mockRestore()` (the prototype gets its real method back). One
 * spy per method at a time: a method already spied (by this or by `vi.spyOn`) throws, as the wrapper would otherwise
 * call itself for the real method.
 */
export function spyOnInstance<T extends object, K extends MethodOf<T>>(
  prototype: T,
  method: K,
  mine: (instance: T, ...args: Parameters<Extract<T[K], Method>>) => boolean,
): Mock<Extract<T[K], Method>> {
  if (vi.isMockFunction(prototype[method])) {
    throw new Error(`spyOnInstance: ${String(method)} is already spied on this prototype; restore that spy first (vi.restoreAllMocks()) or pick both instances in one spy`);
  }
  const real = prototype[method] as (this: T, ...args: unknown[]) => unknown;
  const picks = mine as (instance: T, ...args: unknown[]) => boolean;
  const own = vi.fn(function (this: T, ...args: unknown[]) {
    return real.apply(this, args);
  });
  const wrapper = (vi.spyOn(prototype, method as never) as unknown as Mock<(this: T, ...args: unknown[]) => unknown>).mockImplementation(function (this: T, ...args: unknown[]) {
    return picks(this, ...args) ? own.apply(this, args) : real.apply(this, args);
  });
  const resetOwn = own.mockRestore.bind(own);
  own.mockRestore = () => {
    resetOwn();
    wrapper.mockRestore();
  };
  return own as unknown as Mock<Extract<T[K], Method>>;
}

/**
 * Picks the instances seen calling `method` with arguments `theirs` picks, from now on: for an instance nothing public
 * tells but what it is asked to do (the Slack channel writer that writes to the test's own channel), so make it before
 * that call. It learns them by a spy on `method` that answers none (every call runs the real method), undone by
 * `vi.restoreAllMocks()`: no other spy can be on that method meanwhile.
 */
export function seenCalling<T extends object, K extends MethodOf<T>>(prototype: T, method: K, theirs: (...args: Parameters<Extract<T[K], Method>>) => boolean): (instance: T) => boolean {
  const seen = new WeakSet<T>();
  spyOnInstance(prototype, method, (instance, ...args) => {
    if (theirs(...args)) seen.add(instance);
    return false;
  });
  return (instance) => seen.has(instance);
}

/**
 * Whether `space` is one of the store of `state`, the bots' state of one process: a space carries the owner of its
 * store, and each process's store has an owner of its own. Picks the instance of a store built on that state (the
 * Discord job records' `records`, Slack's requests' `space`), which the bot makes where a test cannot reach it.
 */
export function isSpaceOf(space: Space<unknown>, state: BotState): boolean {
  return space.owner === state.store.owner;
}

/**
 * Picks the Discord job store of the bot of `process`: it reads `process.state` at each call, so it picks whichever
 * state the object holds then — after a harness's `restart()` has replaced it, the new bot's store, and the old one's
 * no more. A state that is not reassigned on `process` is never followed.
 */
export function jobStoreOf(process: { state: BotState }): (store: JobRecordStore) => boolean {
  return (store) => isSpaceOf(store.records, process.state);
}

/** Picks the Slack request store of the bot of `process`, reading `process.state` at each call (as `jobStoreOf`). */
export function requestStoreOf(process: { state: BotState }): (store: RequestStore) => boolean {
  return (store) => isSpaceOf(store.space, process.state);
}

/**
 * Picks the Slack request store kept in the data folder `dataDir` (a file state's): for a bot the test starts later on
 * a folder it knows (a restart), whose state it cannot reach before that bot uses the store.
 */
export function requestStoreIn(dataDir: string): (store: RequestStore) => boolean {
  return (store) => 'dataDir' in store.space && store.space.dataDir === dataDir;
}

/**
 * Picks the job runner of `process`: it reads `process.runner` at each call, so after a harness's `restart()` has
 * replaced it, the new runner, and the old one (a crashed process's, still finishing its jobs) no more.
 */
export function runnerOf(process: { runner: JobRunner }): (runner: JobRunner) => boolean {
  return (runner) => runner === process.runner;
}

/**
 * Picks the calls about the job asked with `prompt` (a runner's `recordEnded`), from whichever runner makes them: the
 * test's current one, or one a crash left finishing its jobs — a job's end recorded twice is counted wherever it was.
 */
export function jobPrompted(prompt: string): (runner: JobRunner, requester: unknown, job: { prompt: string }) => boolean {
  return (_runner, _requester, job) => job.prompt === prompt;
}
