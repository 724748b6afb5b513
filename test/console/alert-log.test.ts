import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ALERT_LOG_KEPT, FileAlertLog, MemoryAlertLog, type AlertLog } from '../../src/console/alerts/alert-log.js';
import type { Alert } from '../../src/console/alerts/channels.js';
import { AlertWatcher } from '../../src/console/alerts/watcher.js';
import { silentLogger } from '../../src/internal.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { nextUtcMidnight } from '../../src/spend/utc-period.js';
import { consoleReads, NO_ALERTS } from './console-harness.js';
import { operatorWith, spend } from './ledger-fixtures.js';
import { LEDGER_WAIT_MS } from '../../src/console/server.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** `count` alerts sent one after another from `start`, each with its mark kept an hour. */
async function sendMany(log: AlertLog, count: number, start: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const at = start + i;
    await log.sent([{ key: `cap:user:discord:${i}:day:x:1usd:50@test`, keepUntil: at + HOUR_MS }], at, { id: `alert-${i}`, channel: 'test', text: `alert ${i}`, at });
  }
}

describe('the alert log', () => {
  it(`keeps the last ${ALERT_LOG_KEPT} alerts sent in console-alerts.json, newest first, however many went out, and drops the marks whose time is over`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-alert-log-'));
    dirs.push(dir);
    const log = new FileAlertLog(dir);
    const start = Date.now();
    await sendMany(log, ALERT_LOG_KEPT + 50, start);
    const recent = await log.recent(1000);
    expect(recent).toHaveLength(ALERT_LOG_KEPT);
    expect(recent[0]!.id).toBe(`alert-${ALERT_LOG_KEPT + 49}`);
    expect(recent.at(-1)!.id).toBe('alert-50');

    // An hour on, the next send drops every mark kept until then: the file holds the history and the one new mark.
    await log.sent([{ key: 'late@test', keepUntil: start + 2 * HOUR_MS }], start + HOUR_MS + ALERT_LOG_KEPT + 50, { id: 'late', channel: 'test', text: 'late', at: start + HOUR_MS });
    const file = JSON.parse(await readFile(log.path, 'utf8')) as { claims: Record<string, unknown>; log: unknown[] };
    expect(Object.keys(file.claims)).toEqual(['late@test']);
    expect(file.log).toHaveLength(ALERT_LOG_KEPT);
  });

  it.each([
    ['console-alerts.json', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'pictor-alert-log-'));
      dirs.push(dir);
      return new FileAlertLog(dir);
    }],
    ['memory', async () => new MemoryAlertLog()],
  ])('keeps in %s the highest amount a cap’s event was told up to, never lowered, until its time is over', async (_where, open) => {
    const log: AlertLog = await open();
    const start = Date.now();
    const key = 'cap:scope:discord:guild:day:x:refused@test';
    const told = (usd: number, at: number) => log.sent([{ key: `cap:scope:discord:guild:day:x:${usd}usd:refused@test`, keepUntil: start + HOUR_MS, reach: { key, usd } }], at);
    expect(await log.reached([key], start)).toEqual(new Map());
    await told(3, start);
    await told(2, start + 1);
    expect(await log.reached([key, 'other@test'], start + 2)).toEqual(new Map([[key, 3]]));
    await told(4, start + 3);
    expect(await log.reached([key], start + 4)).toEqual(new Map([[key, 4]]));
    expect(await log.reached([key], start + HOUR_MS)).toEqual(new Map());
  });

  it(`keeps the last ${ALERT_LOG_KEPT} in memory too`, async () => {
    const log = new MemoryAlertLog();
    await sendMany(log, ALERT_LOG_KEPT + 5, Date.now());
    expect(await log.recent(1000)).toHaveLength(ALERT_LOG_KEPT);
  });

  it('keeps the marks of a cap alert the watcher sent until its period ends plus a day, and drops them after', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-alert-log-'));
    dirs.push(dir);
    const store = new FileQuotaStore({ dir });
    await store.open();
    try {
      const now = Date.now();
      // $8.50 of a $10 daily cap: past 50 and 80 at once (80 is sent, 50 marked with it).
      await spend(store, 'a', 'discord:1', 'discord:guild', 8.5, now);
      const log = new FileAlertLog(dir);
      const sent: Alert[] = [];
      const watcher = new AlertWatcher({
        readWaitMs: LEDGER_WAIT_MS,
        source: { store, operator: operatorWith({ accountDailyUsd: 10 }) },
        ...consoleReads(store, { now: () => now }),
        log,
        channels: [{ id: 'test', send: async (alert) => void sent.push(alert) }],
        config: NO_ALERTS,
        logger: silentLogger(),
        now: () => now,
      });
      await watcher.check();
      await watcher.stop();
      expect(sent.map((a) => a.cap?.threshold)).toEqual([80]);
      const periodEnds = nextUtcMidnight(now);
      expect(sent[0]!.cap?.resetsAt).toBe(periodEnds);
      const claims = () => (JSON.parse(readFileSync(log.path, 'utf8')) as { claims: Record<string, { state: string; until: number }> }).claims;
      const marks = Object.entries(claims()).filter(([key]) => key.startsWith('cap:account:account:day:'));
      expect(marks.map(([key]) => key.replace(/^.*:(\w+@test)$/, '$1')).sort()).toEqual(['50@test', '80@test']);
      for (const [, mark] of marks) expect(mark).toEqual({ state: 'sent', until: periodEnds + DAY_MS });
      // A write just before that keeps them; one at it drops them.
      await log.sent([], periodEnds + DAY_MS - 1, { id: 'x', channel: 'test', text: 'x', at: periodEnds + DAY_MS - 1 });
      expect(Object.keys(claims()).filter((key) => key.startsWith('cap:account:'))).toHaveLength(2);
      await log.sent([], periodEnds + DAY_MS, { id: 'y', channel: 'test', text: 'y', at: periodEnds + DAY_MS });
      expect(Object.keys(claims()).filter((key) => key.startsWith('cap:account:'))).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
