import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { ledgerDir, openQuotaStore } from '../../src/spend/open-store.js';
import type { ReconcileReport } from '../../src/spend/types.js';

describe('openQuotaStore', () => {
  let dataDir: string | undefined;

  afterEach(async () => {
    vi.useRealTimers();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    dataDir = undefined;
  });

  it('tells onReconciled once, and warns once, what its start’s reconcile charged for a dead process’s job', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    dataDir = await mkdtemp(join(tmpdir(), 'pictor-open-store-'));
    const dead = new FileQuotaStore({ dir: ledgerDir(dataDir) });
    await dead.reserve({ jobId: 'sent-job', userKey: 'discord:alice', scopeKey: 'discord:guild', estimateUsd: 0.5, limits: {}, now: Date.now() });
    await dead.markSent('sent-job');
    await dead.close(); // stops renewing, as a killed process does
    vi.setSystemTime(Date.now() + 60_001); // its lease lapsed
    const reports: ReconcileReport[] = [];
    const warnings: string[] = [];
    const logger = { warn: (_fields: object, message?: string) => warnings.push(message ?? ''), info: () => {} };
    const store = await openQuotaStore({ dataDir, logger, onReconciled: (report) => reports.push(report) });
    try {
      expect(reports).toEqual([{ released: [], settledAtEstimate: ['sent-job'], chargedUsd: 0.5 }]);
      expect(warnings).toEqual(['ended the reservations of a process that stopped without settling them']);
    } finally {
      await store.close();
    }
  });

  it('says, as at start, that it put back the ledger deleted while the process ran, and the job goes on to be charged', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'pictor-open-store-'));
    const restored: string[] = [];
    const store = await openQuotaStore({ dataDir, onRestored: (sentence) => restored.push(sentence) });
    try {
      const ask = (jobId: string) => ({ jobId, userKey: 'discord:alice', scopeKey: 'discord:guild', estimateUsd: 0.2, limits: {}, now: Date.now() });
      await store.reserve(ask('first'));
      await store.settle('first', 0.1);
      await store.reserve(ask('second'));
      await rm(join(ledgerDir(dataDir), 'quota-ledger.json'));

      expect(await store.settle('second', 0.1)).toBe(true);

      const path = join(ledgerDir(dataDir), 'quota-ledger.json');
      expect(restored).toEqual([`The spend ledger ${path} was missing: restored its backup copy ${path}.bak, one change behind.`]);
      expect(await store.spentToday('discord:alice', Date.now())).toBeCloseTo(0.2, 9);
    } finally {
      await store.close();
    }
  });
});
