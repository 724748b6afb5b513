import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
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

  it('keep a member’s forget mark as long past a job’s run at the defaults as docs/shared-limits.md says: its minutes of 1 + its retries of the longest request, and the times over', async () => {
    const page = await readFile(join(import.meta.dirname, '../../../docs/shared-limits.md'), 'utf8');
    const row = page.split('\n').find((line) => line.startsWith('| `forgotten`')) ?? '';
    const [, minutes, times] = /\((\d+) minutes by default\), then its end shown and recorded; a day is over (\d+) times that/.exec(row) ?? [];
    const client = new PictorClient({ baseURL: 'http://127.0.0.1:9', apiKey: 'sk-test' });
    const run = (1 + client.maxRetries) * client.timeoutMs;
    expect(Number(minutes)).toBe(run / 60_000);
    expect(Number(times)).toBeGreaterThanOrEqual(30);
    expect(botSpaces().forgotten).toMatchObject({ ttlMs: 24 * 60 * 60_000 });
    expect(botSpaces().forgotten.ttlMs).toBeGreaterThan(Number(times) * run);
  });
});
