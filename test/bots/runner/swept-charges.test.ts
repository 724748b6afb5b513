import { describe, expect, it } from 'vitest';
import type { ActiveJob, UsageRecord } from 'pictor/internal';
import { stoppedEndOf, sweptCharges, type SweptLedger } from '../../../bots/runner/swept-charges.js';
import { silentLogger } from '../../../src/internal.js';

const used = (jobId: string, costUsd: number): UsageRecord => ({ jobId, costUsd, time: 0, day: '', month: '', surface: 'discord', userKey: 'discord:u1', scopeKey: 'discord:g', basis: 'uncertain' });
const held = (jobId: string, usd: number, sent: boolean): ActiveJob => ({ jobId, usd, sent, at: 0, userKey: 'discord:u1', scopeKey: 'discord:g', owner: 'h:1:x' });

/** A ledger whose reconcile settles `settles` (what a gone process held), and that counts what it is asked. */
function ledger(settled: UsageRecord[], active: ActiveJob[], settles: string[] = []) {
  const asked: string[] = [];
  const reconciledAt: number[] = [];
  const fake: SweptLedger = {
    reconcile: async (now) => {
      asked.push('reconcile');
      reconciledAt.push(now);
      for (const jobId of settles) {
        const job = active.splice(active.findIndex((j) => j.jobId === jobId), 1)[0]!;
        settled.push(used(jobId, job.usd));
      }
      return { released: [], settledAtEstimate: settles, chargedUsd: 0 };
    },
    usage: async (query) => (asked.push(`usage ${query.userKey}`), settled.filter((r) => r.userKey === query.userKey)),
    activeJobs: async () => (asked.push('activeJobs'), [...active]),
  };
  return { fake, asked, reconciledAt };
}

const job = (jobId: string, userKey = 'discord:u1') => ({ jobId, userKey, createdAt: 0 });

describe('what the ledger charged the jobs a sweep says “stopped” of', () => {
  it('reconciles before it reads, so a gone process’s reservation is charged, not left pending', async () => {
    const { fake } = ledger([], [held('j1', 0.04, true)], ['j1']);
    expect(await sweptCharges(fake, [job('j1')], silentLogger())('j1')).toEqual({ type: 'charged', cost: { totalUsd: 0.04 } });
  });

  it('leaves pending only a sent reservation a live process still holds; nothing for one never sent, released or settled at nothing', async () => {
    const { fake } = ledger([used('j3', 0)], [held('j1', 0.04, true), held('j2', 0.04, false)]);
    const charges = sweptCharges(fake, [job('j1'), job('j2'), job('j3'), job('j4')], silentLogger());
    expect(await Promise.all(['j1', 'j2', 'j3', 'j4'].map(charges))).toEqual([{ type: 'pending', cost: { totalUsd: 0.04 } }, { type: 'none' }, { type: 'none' }, { type: 'none' }]);
  });

  it('reads the ledger once for every job of the sweep (one reconcile, one read of what is held, one of each member’s records), and not at all until asked', async () => {
    const { fake, asked } = ledger([used('j1', 0.02)], [held('j2', 0.04, true)]);
    const charges = sweptCharges(fake, [job('j1'), job('j2'), job('j3', 'discord:u2')], silentLogger());
    expect(asked).toEqual([]);
    for (const id of ['j1', 'j2', 'j3']) await charges(id);
    expect(asked.sort()).toEqual(['activeJobs', 'reconcile', 'usage discord:u1', 'usage discord:u2']);
  });

  it('reconciles at the time of the caller’s clock, read at the first ask', async () => {
    const { fake, reconciledAt } = ledger([], [held('j1', 0.04, true)]);
    let now = 1_000;
    const charges = sweptCharges(fake, [job('j1')], silentLogger(), () => now);
    now = 5_000;
    await charges('j1');
    expect(reconciledAt).toEqual([5_000]);
  });

  it('answers nothing charged when the ledger cannot be read, or for a job the runner never took', async () => {
    const failing: SweptLedger = { reconcile: () => Promise.reject(new Error('down')), usage: async () => [], activeJobs: async () => [] };
    expect(await sweptCharges(failing, [job('j1')], silentLogger())('j1')).toEqual({ type: 'none' });
    expect(await sweptCharges(ledger([], []).fake, [], silentLogger())(undefined)).toEqual({ type: 'none' });
  });

  it('records a stopped job failed (interrupted) with its charge, or with what it may be charged while pending', () => {
    expect(stoppedEndOf({ type: 'charged', cost: { totalUsd: 0.04 } })).toStrictEqual({ type: 'failed', code: 'interrupted', cost: { totalUsd: 0.04 } });
    expect(stoppedEndOf({ type: 'pending', cost: { totalUsd: 0.04 } })).toStrictEqual({ type: 'failed', code: 'interrupted', mayCost: { totalUsd: 0.04 } });
    expect(stoppedEndOf({ type: 'none' })).toStrictEqual({ type: 'failed', code: 'interrupted' });
  });
});
