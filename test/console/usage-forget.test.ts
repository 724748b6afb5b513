import { describe, expect, it, afterEach } from 'vitest';
import type { QuotaStore } from '../../src/spend/types.js';
import { loginCookie, startSeededConsole, type ConsoleUnderTest } from './console-harness.js';

/** The console over a file ledger keeps its own copy of the usage records, prompts too, and reads on from its cursor. */
let c: ConsoleUnderTest | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

async function settled(store: QuotaStore, jobId: string, userKey: string): Promise<void> {
  const job = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low', prompt: 'a job of another member' };
  expect(await store.reserve({ jobId, userKey, scopeKey: 'discord:g', estimateUsd: 0.02, limits: {}, now: Date.now(), job })).toEqual({ ok: true });
  await store.markSent(jobId);
  await store.settle(jobId, 0.011, { outcome: 'completed', images: 1 });
}

describe('the console’s jobs page over a file ledger after a member’s prompts were forgotten', () => {
  it('no longer shows the forgotten member’s prompts, and still lists every settled job', async () => {
    c = await startSeededConsole();
    const cookie = await loginCookie(c.url, '/jobs');
    const jobs = async () => (await fetch(`${c!.url}/jobs`, { headers: { cookie } })).text();
    const listed = (page: string) => [...page.slice(page.indexOf('id="recent-jobs"')).matchAll(/<tr data-job="([^"]+)"/g)].map((m) => m[1]);
    expect(await jobs()).toContain('a lighthouse at dawn');

    await c.store.forgetPrompts('discord:111111111111111111');
    await settled(c.store, 'o-1', 'discord:901');

    const page = await jobs();
    expect(page).not.toContain('a lighthouse at dawn');
    expect(page).not.toContain('an earlier one');
    expect(page).toContain('a job of another member');
    const records = (await c.store.usage({})).map((r) => r.jobId);
    expect(listed(page).sort()).toEqual(records.sort());
  });
});
