import { spawnSync } from 'node:child_process';
import { readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileQuotaStore, LedgerUnreadableError } from '../../src/internal.js';
import { useFileQuotaStores, useTempDirs } from '../helpers/runner-harness.js';

const newDir = useTempDirs();
const storeAt = useFileQuotaStores();

const T = Date.UTC(2030, 5, 15, 12);
const reserve = (s: FileQuotaStore, jobId: string, usd: number, limits = {}, now = T, userKey = 'discord:u1') =>
  s.reserve({ jobId, userKey, scopeKey: 'discord:g1', estimateUsd: usd, limits, now });

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

/** A ledger as a process that died left it: one sent and one queued reservation under its name. */
async function ledgerLeftBy(dir: string, pid: number, renewedAt: number): Promise<void> {
  const owner = `${hostname()}:${pid}:dead`;
  const r = (usd: number, sent: boolean) => ({ userKey: 'discord:u1', scopeKey: 'discord:g1', usd, day: '2030-06-15', month: '2030-06', at: T, owner, sent });
  await writeFile(
    join(dir, 'quota-ledger.json'),
    JSON.stringify({
      version: 2,
      spent: {},
      reservations: { sent: r(0.3, true), queued: r(0.2, false) },
      owners: { [owner]: { pid, host: hostname(), renewedAt } },
      uncertain: {},
      lastJobAt: {},
    }),
  );
}

describe('the file ledger over the life of its processes', () => {
  it('at start, settles a dead process’s sent job at its estimate (marked uncertain), releases its queued one and frees the user', async () => {
    const dir = await newDir();
    await ledgerLeftBy(dir, deadPid(), T);
    const store = storeAt(dir);
    expect(await store.reconcile(T + 1000)).toMatchObject({ released: ['queued'], settledAtEstimate: ['sent'] });
    expect(await store.spentToday('discord:u1', T + 1000)).toBeCloseTo(0.3, 9);
    expect(await store.spentThisMonth('account', T + 1000)).toBeCloseTo(0.3, 9);
    const ledger = JSON.parse(await readFile(store.path, 'utf8'));
    expect(ledger.uncertain.sent).toMatchObject({ usd: 0.3, userKey: 'discord:u1' });
    expect(await reserve(store, 'next', 0.1, { userConcurrentJobs: 1 }, T + 1000)).toEqual({ ok: true });
  });

  it('ends the reservations of a process on this machine that stopped renewing its lease, even if its pid lives on', async () => {
    const dir = await newDir();
    // The pid is alive (this one), but the lease was last renewed two minutes ago: that process is gone.
    await ledgerLeftBy(dir, process.pid, T - 120_000);
    const store = storeAt(dir, { leaseMs: 60_000, clock: () => T });
    expect(await store.reconcile(T)).toMatchObject({ released: ['queued'], settledAtEstimate: ['sent'] });
  });

  it('judges a lease by the processes’ clock, not by the day a job counts in: a live process’s reservation holds against a job reserved for a later time', async () => {
    const dir = await newDir();
    // A second process on the same ledger: one store per file per process, so the other opens it through a link.
    const alias = `${dir}-other-process`;
    await symlink(dir, alias);
    const [left, right] = [storeAt(dir), storeAt(alias)];
    expect(await reserve(left, 'left', 0.6, { accountDailyUsd: 1 }, T)).toEqual({ ok: true });
    // The same day, two minutes later than the first job's time (longer than the lease): the left process is alive all the same.
    expect(await reserve(right, 'right', 0.6, { accountDailyUsd: 1 }, T + 120_000, 'discord:u2')).toMatchObject({ ok: false, code: 'budget_account_daily' });
  });

  it('keeps counting a live process’s reservation past 30 minutes, and its renewed lease keeps it alive for others', async () => {
    const dir = await newDir();
    let now = T;
    const store = storeAt(dir, { leaseMs: 60_000, clock: () => now });
    await reserve(store, 'long', 0.8, { accountDailyUsd: 1 });
    now = T + 31 * 60_000;
    await store.renewLease();
    expect(await reserve(store, 'second', 0.5, { accountDailyUsd: 1 }, now)).toMatchObject({ ok: false, code: 'budget_account_daily', used: 0.8 });
    const ledger = JSON.parse(await readFile(store.path, 'utf8'));
    expect(Object.values(ledger.owners as Record<string, { renewedAt: number }>)[0]!.renewedAt).toBe(now);
  });

  it('refuses at the account, user and scope caps, daily and monthly, saying when each resets', async () => {
    const store = storeAt(await newDir());
    await store.settle((await reserve(store, 'a', 0.9, {}), 'a'), 0.9);
    const dayEnd = Date.UTC(2030, 5, 16);
    const monthEnd = Date.UTC(2030, 6, 1);
    expect(await reserve(store, 'b', 0.2, { accountDailyUsd: 1 }, T, 'discord:u2')).toEqual({ ok: false, code: 'budget_account_daily', limit: 1, used: 0.9, resetsAt: dayEnd });
    expect(await reserve(store, 'c', 0.2, { accountMonthlyUsd: 1 }, T + 2 * 86_400_000, 'discord:u2')).toEqual({
      ok: false,
      code: 'budget_account_monthly',
      limit: 1,
      used: 0.9,
      resetsAt: monthEnd,
    });
    expect(await reserve(store, 'd', 0.2, { userMonthlyUsd: 1 }, T + 86_400_000)).toMatchObject({ ok: false, code: 'budget_user_monthly', used: 0.9 });
    expect(await reserve(store, 'e', 0.2, { scopeMonthlyUsd: 1 }, T + 86_400_000, 'discord:u3')).toMatchObject({ ok: false, code: 'budget_scope_monthly' });
    // A new calendar month starts from zero.
    expect(await reserve(store, 'f', 0.2, { accountMonthlyUsd: 1, userMonthlyUsd: 1 }, monthEnd)).toEqual({ ok: true });
  });

  it('reads a version 1 ledger, carrying its days into months and charging its open reservations', async () => {
    const dir = await newDir();
    await writeFile(
      join(dir, 'quota-ledger.json'),
      JSON.stringify({
        version: 1,
        spent: { '2030-06-14': { 'discord:u1': 0.5 } },
        reservations: { old: { userKey: 'discord:u1', scopeKey: 'discord:g1', usd: 0.1, day: '2030-06-15', at: T } },
        lastJobAt: {},
      }),
    );
    const store = storeAt(dir);
    expect(await store.reconcile(T)).toMatchObject({ released: [], settledAtEstimate: ['old'] });
    expect(await store.spentThisMonth('discord:u1', T)).toBeCloseTo(0.6, 9);
  });

  describe.each([
    ['empty', ''],
    ['truncated', '{"version":2,"spent":{"2030-06-15":{"discord:u1":0.'],
    ['garbage', '\u0000\u0001PK\u0003\u0004 not a ledger'],
    ['not a ledger', '{"hello":"world"}'],
    // Valid JSON whose numbers no ledger holds: every capped job would fail on them, an uncapped one be sent uncounted.
    ['holding a negative amount', '{"version":2,"spent":{"2030-06-15":{"account":-5}},"reservations":{},"owners":{},"uncertain":{},"lastJobAt":{}}'],
    ['holding an amount too large for a number', '{"version":2,"spent":{"2030-06-15":{"account":1e999}},"reservations":{},"owners":{},"uncertain":{},"lastJobAt":{}}'],
    ['holding an amount no sum of it can count (its nano-dollars are not a finite number)', '{"version":2,"spent":{"2030-06-15":{"account":1e308}},"reservations":{},"owners":{},"uncertain":{},"lastJobAt":{}}'],
    ['holding amounts each finite whose sum is not', '{"version":2,"spent":{"2030-06-15":{"discord:u1":1e290}},"reservations":{"r":{"userKey":"discord:u1","scopeKey":"discord:g1","usd":1.7e308,"day":"2030-06-15","month":"2030-06","at":0,"owner":"o","sent":true}},"owners":{},"uncertain":{},"lastJobAt":{}}'],
    ['holding a negative amount in its first format', '{"version":1,"spent":{"2030-06-15":{"discord:u1":-5}},"reservations":{},"lastJobAt":{}}'],
  ])('a ledger that is %s', (_what, content) => {
    it('refuses to open without a backup, naming the file and what to do', async () => {
      const dir = await newDir();
      await writeFile(join(dir, 'quota-ledger.json'), content);
      const store = storeAt(dir);
      const error = await store.open().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LedgerUnreadableError);
      expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.path });
      expect((error as Error).message).toContain(store.path);
      expect((error as Error).message).toMatch(/move it away/);
    });

    it('is restored from the backup copy kept beside it, and the broken one kept for a look', async () => {
      const dir = await newDir();
      const first = storeAt(dir);
      await reserve(first, 'a', 0.4);
      await first.settle('a', 0.4);
      await reserve(first, 'b', 0.1);
      await first.settle('b', 0.1);
      await first.close();
      await writeFile(join(dir, 'quota-ledger.json'), content);

      const store = storeAt(dir);
      const opened = await store.open();
      expect(opened.restoredFromBackup).toBe(true);
      // The copy is the version before the last change: job b reserved (counted) rather than settled, the same $0.50.
      expect(await store.spentToday('discord:u1', T)).toBeCloseTo(0.5, 9);
      expect((await readdir(dir)).some((f) => f.startsWith('quota-ledger.json.broken-'))).toBe(true);
    });
  });

  it('restores a ledger that went missing while its backup copy stayed', async () => {
    const dir = await newDir();
    const first = storeAt(dir);
    await reserve(first, 'a', 0.4);
    await first.settle('a', 0.4);
    await reserve(first, 'b', 0.1);
    await first.close();
    await rm(join(dir, 'quota-ledger.json'));
    const store = storeAt(dir);
    expect(await store.open()).toEqual({ restoredFromBackup: true });
    expect(await store.spentToday('discord:u1', T)).toBeCloseTo(0.4, 9);
  });

  it.each([
    ['empty', ''],
    ['damaged', '{"version":2,"spent":{"2030-06-15":{"discord:u1":0.'],
  ])('refuses to open a ledger that went missing beside a backup copy that is %s, naming both', async (_what, backup) => {
    const dir = await newDir();
    await writeFile(join(dir, 'quota-ledger.json.bak'), backup);
    const store = storeAt(dir);
    const error = await store.open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgerUnreadableError);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.path });
    expect((error as Error).message).toContain(`${store.path} is missing, and its backup copy ${store.backupPath} is damaged`);
    expect((error as Error).message).toContain(store.backupPath);
    expect(await readdir(dir)).toEqual(['quota-ledger.json.bak']);
  });

  it('opens a missing ledger as a fresh one, and a good one as it is', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    expect(await store.open()).toEqual({ restoredFromBackup: false });
    await reserve(store, 'a', 0.1);
    expect(await store.open()).toEqual({ restoredFromBackup: false });
  });
});
