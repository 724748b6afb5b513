import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ALERT_LOG_KEPT, FileAlertLog, MemoryAlertLog, type AlertLog } from '../../src/console/alerts/alert-log.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const HOUR_MS = 3_600_000;

/** `count` alerts sent one after another from `start`, each with its mark kept an hour. */
async function sendMany(log: AlertLog, count: number, start: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const at = start + i;
    await log.sent([{ key: `cap:user:discord:${i}:day:x:50@test`, keepUntil: at + HOUR_MS }], at, { id: `alert-${i}`, channel: 'test', text: `alert ${i}`, at });
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

  it(`keeps the last ${ALERT_LOG_KEPT} in memory too`, async () => {
    const log = new MemoryAlertLog();
    await sendMany(log, ALERT_LOG_KEPT + 5, Date.now());
    expect(await log.recent(1000)).toHaveLength(ALERT_LOG_KEPT);
  });
});
