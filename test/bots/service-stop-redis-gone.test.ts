import { describe, expect, it } from 'vitest';
import { startService, STOP_RESERVE_MS } from '../../bots/main.js';
import { STOP_ALLOWANCE_MS } from '../../bots/runner/index.js';
import { startThrowawayRedis } from '../setup/redis-server.js';
import { startChatFakes, surfaceEnv, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { requireRedisUrl, testRedis } from '../helpers/shared-limits-redis.js';

const defer = useCleanup();
const redisPresent = testRedis();

/** npm start with both bots on a Redis of the test's own, which the test then stops under it. */
async function bothBotsOnARedisThatGoes() {
  requireRedisUrl(redisPresent);
  const redis = await startThrowawayRedis();
  if (!redis) throw new Error('redis-server is needed to stop a Redis under a running service');
  let up = true;
  const stopRedis = async () => {
    if (up) await redis.stop();
    up = false;
  };
  defer(stopRedis);
  const { discord, slack } = await startChatFakes(defer);
  const service = await startService(
    { PICTOR_LOG_LEVEL: 'silent', PICTOR_DATA_DIR: await tempDataDir(defer), PICTOR_EMULATOR_LATENCY_MS: '0', REDIS_URL: redis.url, ...surfaceEnv({ discord, slack }) },
    () => {},
  );
  let stopped = false;
  defer(async () => {
    if (!stopped) await service.stop({ until: Date.now() });
  });
  await stopRedis();
  return {
    /** Stops the service (by `until` when given); resolves with when its promise resolved. */
    stop: async (until?: number) => {
      await service.stop(until === undefined ? {} : { until });
      stopped = true;
      return Date.now();
    },
  };
}

describe('npm start whose Redis went away', () => {
  // Every wait of the stop on Redis (the runner's history writes, the sweeps, the gateway lease, the state's lease and
  // subscription) ends by the stop's deadlines: the runner and the surfaces by `until`, the closes within the reserve.
  it.skipIf(redisPresent.skipReason)(
    'stops both bots and closes what they used by the stop’s until and its reserve',
    async () => {
      const { stop } = await bothBotsOnARedisThatGoes();
      const until = Date.now() + 1_000;
      const stoppedAt = await stop(until);
      expect(stoppedAt).toBeLessThan(until + STOP_RESERVE_MS);
    },
    60_000,
  );

  it.skipIf(redisPresent.skipReason)(
    'without an until, stops by the budget npm start gives a stop after a drain (the allowance less the reserve), and its reserve',
    async () => {
      const { stop } = await bothBotsOnARedisThatGoes();
      const until = Date.now() + STOP_ALLOWANCE_MS - STOP_RESERVE_MS;
      const stoppedAt = await stop();
      expect(stoppedAt).toBeLessThan(until + STOP_RESERVE_MS);
    },
    60_000,
  );
});
