import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { OperatorSettings } from '../../src/console/source.js';
import type { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import type { QuotaStore } from '../../src/spend/types.js';

/**
 * A file ledger's set-up for the console's tests: each step it opens is undone by `steps` (the test file runs them,
 * last first, after each test).
 */
export function ledgerFixtures(steps: (() => Promise<void>)[], name: string) {
  return {
    /** A data folder of its own, removed after the test. */
    async folder(): Promise<string> {
      const dir = await mkdtemp(join(tmpdir(), `pictor-${name}-`));
      steps.push(() => rm(dir, { recursive: true, force: true }));
      return dir;
    },
    /** `store`, opened, and closed after the test. */
    async opened(store: FileQuotaStore): Promise<FileQuotaStore> {
      await store.open();
      steps.push(() => store.close());
      return store;
    },
  };
}

/** A job of `usd` reserved, sent and settled at that amount: spend as the ledger counts it. */
export async function spend(store: QuotaStore, jobId: string, userKey: string, scopeKey: string, usd: number, now: number): Promise<void> {
  expect(await store.reserve({ jobId, userKey, scopeKey, estimateUsd: usd, limits: {}, now })).toEqual({ ok: true });
  await store.markSent(jobId);
  await store.settle(jobId, usd);
}

/** The operator's settings with these caps and nothing else. */
export const operatorWith = (caps: OperatorSettings['caps']): OperatorSettings => ({ caps, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' });
