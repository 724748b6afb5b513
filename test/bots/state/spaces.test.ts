import { describe, expect, it } from 'vitest';
import { botSpaces } from '../../../bots/state/index.js';
import { PictorClient } from '../../../src/index.js';

/**
 * Spaces whose oldest records cannot be dropped to make room without undoing what an admin decided (a server's blocked
 * words) or cutting a workspace off (its installation): each is still capped per record (`maxValueBytes`).
 */
const KEPT_WHOLE = ['slack-installations', 'scope-settings'];

describe('the bots’ spaces', () => {
  it('bound what each may hold in all (a count and a size per record, or bytes), but those kept whole', () => {
    const unbounded = Object.values(botSpaces())
      .filter((space) => {
        const { maxCount, maxBytes, maxValueBytes } = space as { maxCount?: number; maxBytes?: number; maxValueBytes: number };
        return Math.min(maxBytes ?? Infinity, (maxCount ?? Infinity) * maxValueBytes) === Infinity;
      })
      .map((space) => space.name);
    expect(unbounded).toEqual(KEPT_WHOLE);
  });

  it('keep at most 10 000 servers’ or workspaces’ house styles, 64 MiB in all', () => {
    expect(botSpaces().houseStyles).toMatchObject({ maxCount: 10_000, maxBytes: 64 * 1024 ** 2 });
  });

  it('keep a member’s forget mark well past a job’s run at the defaults: over ten times 1 + its retries of the longest request', () => {
    const client = new PictorClient({ baseURL: 'http://127.0.0.1:9', apiKey: 'sk-test' });
    expect(botSpaces().forgotten.ttlMs).toBeGreaterThan(10 * (1 + client.maxRetries) * client.timeoutMs);
  });
});
