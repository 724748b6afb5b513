import { describe, expect, it, onTestFinished } from 'vitest';
import { historyOf, historyOfScope, keepInHistory, openBotState, stateKeyOf, type HistoryItem } from '../../../bots/state/index.js';
import { silentLogger } from '../../../src/internal.js';
import { useTempDirs } from '../../helpers/runner-harness.js';

const newDir = useTempDirs();

async function state() {
  const opened = await openBotState({ dataDir: await newDir(), logger: silentLogger() });
  onTestFinished(() => opened.close());
  return opened;
}

describe('a job’s end kept again in the history by its key', () => {
  it('keeps the first one’s time, link and cost when the repeat has none: a sweep’s repeat changes nothing', async () => {
    const s = await state();
    const first: HistoryItem = { key: 'job-1', scopeKey: 'discord:guild', at: 1_000, link: 'https://example.com/m/1', costUsd: 0.042 };
    await keepInHistory(s, 'discord:member', [first], 2_000);
    await keepInHistory(s, 'discord:member', [{ key: 'job-1', scopeKey: 'discord:guild', at: 1_500 }], 2_000);

    expect(await historyOf(s, 'discord:member')).toEqual([first]);
  });

  it('takes the repeat’s own link and cost when it has them', async () => {
    const s = await state();
    await keepInHistory(s, 'discord:member', [{ key: 'job-1', scopeKey: 'discord:guild', at: 1_000 }], 2_000);
    await keepInHistory(s, 'discord:member', [{ key: 'job-1', scopeKey: 'discord:guild', at: 1_500, link: 'https://example.com/m/1', costUsd: 0.042 }], 2_000);

    expect(await historyOf(s, 'discord:member')).toEqual([{ key: 'job-1', scopeKey: 'discord:guild', at: 1_000, link: 'https://example.com/m/1', costUsd: 0.042 }]);
  });
});

describe('a damaged history list (no list: a hand edit)', () => {
  it('is skipped when a server’s list of members is one, telling its key, and written anew with the next job’s end', async () => {
    const s = await state();
    const told: string[] = [];
    const tell = (key: string) => void told.push(key);
    await keepInHistory(s, 'discord:a', [{ key: 'job-1', scopeKey: 'discord:guild', at: 1_000 }], 2_000);
    await s.store.space(s.spaces.historyScopes).put(stateKeyOf('discord:guild'), { members: ['discord:a'] });
    expect(await historyOfScope(s, 'discord:guild', tell)).toEqual([]);
    await keepInHistory(s, 'discord:b', [{ key: 'job-2', scopeKey: 'discord:guild', at: 1_500 }], 2_000, tell);

    expect(await historyOfScope(s, 'discord:guild', tell)).toEqual([{ key: 'job-2', scopeKey: 'discord:guild', at: 1_500 }]);
    expect(told).toEqual(['discord:guild', 'discord:guild']);
  });
});

/** A member of `target` as its own: a method called through a proxy still reaches its private fields. */
function bound(target: object, name: string | symbol): unknown {
  const value: unknown = Reflect.get(target, name);
  return typeof value === 'function' ? value.bind(target) : value;
}

describe('a member forgotten while a job of theirs ends', () => {
  it('is not left in their server’s list of members when the forget ran between the history write and the list write', async () => {
    const s = await state();
    const lists = s.store.space<string[]>(s.spaces.historyScopes);
    // The job's first write to the list waits until the forget is done (it erased the history, then scanned the lists).
    let arrived!: () => void;
    let release!: () => void;
    const atList = new Promise<void>((resolve) => (arrived = resolve));
    const forgotten = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    const heldLists = new Proxy(lists, {
      get: (target, name) =>
        name === 'update' && !held
          ? async (...args: Parameters<typeof lists.update>) => {
              held = true;
              arrived();
              await forgotten;
              return target.update(...args);
            }
          : bound(target, name),
    });
    const store = new Proxy(s.store, { get: (target, name) => (name === 'space' ? (definition: { name: string }) => (definition.name === s.spaces.historyScopes.name ? heldLists : target.space(definition as never)) : bound(target, name)) });
    const ended = keepInHistory({ store, spaces: s.spaces }, 'discord:member', [{ key: 'job-1', scopeKey: 'discord:guild', at: 1_000 }], 2_000);
    await atList;
    expect(await s.forget('discord:member')).toBe(1);
    release();
    await ended;

    expect(await historyOf(s, 'discord:member')).toEqual([]);
    expect(await lists.get(stateKeyOf('discord:guild'))).toBeUndefined();
  });
});
