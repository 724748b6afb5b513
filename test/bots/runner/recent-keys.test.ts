import { describe, expect, it } from 'vitest';
import { RecentKeys } from '../../../bots/runner/recent-keys.js';

describe('RecentKeys', () => {
  it('answers true the first time a key comes, false while it is remembered, and true again once its time has passed', () => {
    const keys = new RecentKeys(10, 1_000);
    expect(keys.first('a', 0)).toBe(true);
    expect(keys.first('a', 999)).toBe(false);
    expect(keys.first('a', 1_000)).toBe(true);
  });

  it('remembers at most its latest keys, forgetting the oldest first', () => {
    const keys = new RecentKeys(2, 60_000);
    for (const [i, key] of ['a', 'b', 'c'].entries()) expect(keys.first(key, i)).toBe(true);
    expect(keys.first('c', 3)).toBe(false);
    expect(keys.first('a', 4)).toBe(true);
  });

  it('forgets a dropped key at once (its claim failed): it comes as new again', () => {
    const keys = new RecentKeys(10, 60_000);
    keys.first('a', 0);
    keys.drop('a');
    expect(keys.first('a', 1)).toBe(true);
  });
});
