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
