import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JobRunner, type JobUpdate, type Requester } from '../../bots/runner/index.js';
import { createEmulator, DEV_API_KEY } from '../../src/emulator/index.js';
import { PictorClient, type LoggerLike } from '../../src/index.js';
import { createMetrics } from '../../src/metrics/index.js';
import { openQuotaStore } from '../../src/spend/open-store.js';
import { startThrowawayRedis } from '../setup/redis-server.js';
import { testRedis } from '../helpers/shared-limits-redis.js';

const redis = testRedis();
const LOST_AT_SETTLE = 'the spend ledger had lost the reservation of a job the service answered (Redis restarted without its data, or was flushed): charged and recorded it all the same';

class RecordingLogger implements LoggerLike {
  readonly entries: { level: string; obj: Record<string, unknown>; msg: string | undefined }[] = [];
  debug(): void {}
  info(): void {}
  warn(obj: object, msg?: string): void {
    this.entries.push({ level: 'warn', obj: obj as Record<string, unknown>, msg });
  }
  error(obj: object, msg?: string): void {
    this.entries.push({ level: 'error', obj: obj as Record<string, unknown>, msg });
  }
}

describe.skipIf(redis.skipReason)(`a Redis that restarts empty while jobs are at the service ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  it('charges and records every job the service answered, warns naming each lost reservation, and counts them in pictor_reservations_lost_total', async () => {
    // A Redis of its own (no persistence), restarted for real mid-job: the shared test Redis is not ours to empty.
    const own = await startThrowawayRedis();
    if (!own) throw new Error('this test needs redis-server on PATH (see .ci/run)');
    const emulator = createEmulator({ latencyMs: 2000 });
    const server = await emulator.listen({ port: 0 });
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-redis-restart-'));
    const logger = new RecordingLogger();
    const metrics = createMetrics();
    const store = await openQuotaStore({
      redis: { url: own.url, prefix: 'pictor-test' },
      dataDir,
      logger,
      onReservationLost: () => metrics.reservationLost(),
    });
    const runner = new JobRunner({ client: new PictorClient({ baseURL: server.url, apiKey: DEV_API_KEY, maxRetries: 0 }), store, limits: {}, partialImages: 0, minUpdateIntervalMs: 0, logger });
    try {
      const updates: JobUpdate[][] = [[], [], []];
      const handles = await Promise.all(
        updates.map((seen, i) => {
          const requester: Requester = { platform: 'slack', userId: `U${i}`, channelId: 'C1', scopeId: 'T1' };
          return runner.submit({ kind: 'generate', prompt: `medium job ${i}`, options: { quality: 'medium' }, requester }, (u) => void seen.push(u));
        }),
      );
      // All three at the service (their streams open), their reservations in Redis: then Redis restarts with nothing.
      await expect.poll(() => emulator.stats().openStreams, { timeout: 10_000 }).toBe(3);
      expect(await store.spentToday('account', Date.now())).toBeGreaterThan(0);
      await own.restart();

      const finals = await Promise.all(handles.map((h) => h.done));
      expect(finals.map((f) => f.type)).toEqual(['completed', 'completed', 'completed']);
      const costs = finals.map((f) => (f.type === 'completed' ? f.cost.totalUsd : 0));
      expect(costs.every((usd) => usd > 0)).toBe(true);

      // Charged and recorded as any settle: usage records, and the day's spending of each user, the scope and the account.
      await expect.poll(async () => (await store.usage({})).length, { timeout: 20_000 }).toBe(3);
      const records = await store.usage({});
      expect(records.map((r) => r.costUsd).sort()).toEqual([...costs].sort());
      expect(await store.spentToday('account', Date.now())).toBeCloseTo(costs.reduce((a, b) => a + b, 0), 9);
      expect(await store.spentToday('slack:U1', Date.now())).toBeCloseTo(costs[1]!, 9);
      expect(await store.spentToday('slack:T1', Date.now())).toBeCloseTo(costs.reduce((a, b) => a + b, 0), 9);

      const warnings = logger.entries.filter((e) => e.msg === LOST_AT_SETTLE);
      expect(warnings.map((w) => w.obj.jobId).sort()).toEqual(records.map((r) => r.jobId).sort());
      expect(warnings.map((w) => w.obj.userKey).sort()).toEqual(['slack:U0', 'slack:U1', 'slack:U2']);
      expect(await metrics.registry.getSingleMetricAsString('pictor_reservations_lost_total')).toMatch(/^pictor_reservations_lost_total 3$/m);
    } finally {
      await runner.shutdown({ graceMs: 1000 });
      await store.close();
      await server.close();
      await emulator.close();
      await own.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
