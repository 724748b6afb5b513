import { stat } from 'node:fs/promises';
import * as fsp from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handsInodeBack } from '../helpers/hands-inode-back.js';
import type { QuotaStore } from '../../src/spend/types.js';
import { loginCookie, startSeededConsole, type ConsoleUnderTest } from './console-harness.js';

/**
 * The console over a file ledger keeps its own copy of the usage records and reads on from its position in
 * `usage.jsonl`. Each forget rewrites the file (a new file renamed into place), and the file system may hand the
 * freed inode back: every open of `usage.jsonl` here reports the inode it had first, so that happens every time.
 */
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, open: vi.fn(actual.open) };
});

let c: ConsoleUnderTest | undefined;
afterEach(async () => {
  vi.mocked(fsp.open).mockRestore();
  await c?.close();
  c = undefined;
});

async function settled(store: QuotaStore, jobId: string, userKey: string): Promise<void> {
  const job = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low', prompt: 'a job of another member' };
  expect(await store.reserve({ jobId, userKey, scopeKey: 'discord:g', estimateUsd: 0.02, limits: {}, now: Date.now(), job })).toEqual({ ok: true });
  await store.markSent(jobId);
  await store.settle(jobId, 0.011, { outcome: 'completed', images: 1 });
}

describe('the console’s jobs page over a file ledger whose usage.jsonl was rewritten twice between two reads', () => {
  it('no longer shows a forgotten member’s prompt, and still lists every settled job', async () => {
    c = await startSeededConsole();
    const cookie = await loginCookie(c.url, '/jobs');
    const jobs = async () => (await fetch(`${c!.url}/jobs`, { headers: { cookie } })).text();
    const listed = (page: string) => [...page.slice(page.indexOf('id="recent-jobs"')).matchAll(/<tr data-job="([^"]+)"/g)].map((m) => m[1]);
    const usagePath = `${c.dir}/usage.jsonl`;
    expect(await jobs()).toContain('a lighthouse at dawn');
    const sizeAtRead = (await stat(usagePath)).size;
    const inode = await handsInodeBack(usagePath);

    await c.store.forgetPrompts('discord:111111111111111111');
    await settled(c.store, 'o-1', 'discord:901');
    await c.store.forgetPrompts('discord:901');
    // New jobs bring the file past where the console read to.
    for (let i = 0; (await stat(usagePath)).size < sizeAtRead; i++) await settled(c.store, `pad-${i}`, 'discord:333');

    const page = await jobs();
    expect(page).not.toContain('a lighthouse at dawn');
    expect(page).not.toContain('an earlier one');
    const records = (await c.store.usage({})).map((r) => r.jobId);
    expect(listed(page).sort()).toEqual(records.sort());
    // The reader opened the file at its old inode: the case this test is about, not a new inode.
    expect(inode.handedBack()).toBeGreaterThan(0);
  });
});
