import { describe, expect, it, vi } from 'vitest';
import { startService } from '../../bots/main.js';
import { buttonsOf } from '../fakes/discord/FakeDiscord.js';
import { startThrowawayRedis } from '../setup/redis-server.js';
import { scrape } from '../metrics/scrape.js';
import { slackEventsUrl, startChatFakes, surfaceEnv, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const defer = useCleanup();
const redisPresent = testRedis();

/** A Redis of the test's own, which it may restart (empty) or stop under the running service; stopped at the end if it still runs. */
async function aRedisOfItsOwn(): Promise<{ url: string; restart(): Promise<void>; stop(): Promise<void> }> {
  requireRedisUrl(redisPresent);
  const redis = await startThrowawayRedis();
  if (!redis) throw new Error('redis-server is needed to stop a Redis under a running service');
  let up = true;
  const stop = async () => {
    if (!up) return;
    up = false;
    await redis.stop();
  };
  defer(stop);
  return { url: redis.url, restart: () => redis.restart(), stop };
}

describe('npm start with PICTOR_METRICS_PORT', () => {
  it.skipIf(redisPresent.skipReason)(
    'serves /metrics and /healthz: ready with both bots and Redis up, counting jobs and the writes Discord refused; unready when Redis goes away',
    async () => {
      const redis = await aRedisOfItsOwn();
      const { discord, slack } = await startChatFakes(defer);
      const dataDir = await tempDataDir(defer);
      const lines: string[] = [];
      const service = await startService(
        {
          PICTOR_LOG_LEVEL: 'silent',
          PICTOR_DATA_DIR: dataDir,
          PICTOR_EMULATOR_LATENCY_MS: '0',
          PICTOR_UPDATE_INTERVAL_MS: '20',
          PICTOR_METRICS_PORT: '0',
          REDIS_URL: redis.url,
          ...surfaceEnv({ discord, slack }),
        },
        (line) => lines.push(line),
      );
      defer(() => service.stop());
      const printed = lines.join('\n');
      const base = /Metrics for Prometheus at (\S+)\/metrics/.exec(printed)?.[1];
      expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      slack.deliverOverHttp(slackEventsUrl(printed)!);

      const ready = await fetch(`${base}/healthz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ok', checks: { redis: true, limiter: true, accepting: true, discord: true, slack: true } });

      // Discord answers the first edit of the reply with a 429; discord.js waits and sends it again.
      const ix = discord.slashCommand('imagine', { prompt: 'a lighthouse, metered', quality: 'low' });
      discord.rateLimitNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, 50);
      await discord.waitFor(() => {
        const message = discord.original(ix);
        return message && buttonsOf(message).some((b) => /^pictor:reroll:/.test(b.custom_id)) ? message : undefined;
      }, 'the Discord result');

      const scraped = await scrape(`${base}/metrics`);
      expect(scraped.value('pictor_jobs_total', { surface: 'discord', outcome: 'completed' })).toBe(1);
      expect(scraped.value('pictor_images_total', { size: '1024x1024', quality: 'low' })).toBe(1);
      expect(scraped.value('pictor_chat_writes_refused_total', { platform: 'discord' })).toBeGreaterThanOrEqual(1);
      expect(scraped.value('pictor_spent_usd_total')).toBeGreaterThan(0);
      for (const secret of [discord.botToken, slack.botToken, slack.signingSecret]) expect(scraped.text).not.toContain(secret);

      await redis.stop();
      const unready = await fetch(`${base}/healthz`);
      expect(unready.status).toBe(503);
      expect(await unready.json()).toMatchObject({ status: 'unavailable', checks: { redis: false, limiter: false, discord: true, slack: true } });
    },
    60_000,
  );

  it.skipIf(redisPresent.skipReason)(
    'turns /healthz unready (accepting: false) once a drain begins with REDIS_URL, while the Slack HTTP endpoint still answers',
    async () => {
      const { slack } = await startChatFakes(defer);
      const lines: string[] = [];
      const service = await startService(
        {
          PICTOR_LOG_LEVEL: 'silent',
          PICTOR_DATA_DIR: await tempDataDir(defer),
          PICTOR_EMULATOR_LATENCY_MS: '0',
          PICTOR_METRICS_PORT: '0',
          REDIS_URL: requireRedisUrl(redisPresent),
          PICTOR_REDIS_PREFIX: uniquePrefix('healthz-drain'),
          ...surfaceEnv({ slack }),
        },
        (line) => lines.push(line),
      );
      defer(() => service.stop());
      const printed = lines.join('\n');
      const base = /Metrics for Prometheus at (\S+)\/metrics/.exec(printed)![1]!;
      slack.deliverOverHttp(slackEventsUrl(printed)!);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);

      const drained = service.drain();
      const draining = await fetch(`${base}/healthz`);
      expect({ status: draining.status, body: await draining.json() }).toEqual({
        status: 503,
        body: { status: 'unavailable', checks: { redis: true, limiter: true, accepting: false, slack: true } },
      });
      // A request that still arrives is answered: the new job is refused politely.
      const late = await slack.command({ command: '/imagine', text: 'a late lighthouse', user: 'U0LATE', channel: 'C0LATE' });
      expect(late.status).toBe(200);
      const note = await slack.waitFor(() => slack.responses.find((r) => late.responseUrl.endsWith(r.id)), 'the polite refusal');
      expect(String(note.body.text)).toBe('The bot is restarting; try again in a minute.');
      expect(await drained).toBe(0);
    },
    60_000,
  );

  it('stays ready while draining without REDIS_URL: a lone process has nobody to hand its traffic to', async () => {
    const lines: string[] = [];
    const service = await startService(
      { PICTOR_LOG_LEVEL: 'silent', PICTOR_DATA_DIR: await tempDataDir(defer), PICTOR_EMULATOR_LATENCY_MS: '0', PICTOR_METRICS_PORT: '0', ...surfaceEnv({ slack: (await startChatFakes(defer)).slack }) },
      (line) => lines.push(line),
    );
    defer(() => service.stop());
    const base = /Metrics for Prometheus at (\S+)\/metrics/.exec(lines.join('\n'))![1]!;
    const drained = service.drain();
    const draining = await fetch(`${base}/healthz`);
    expect({ status: draining.status, body: await draining.json() }).toEqual({ status: 200, body: { status: 'ok', checks: { slack: true } } });
    expect(await drained).toBe(0);
  }, 60_000);

  it.skipIf(redisPresent.skipReason)(
    'checks Redis and the shared limiter in /healthz whenever REDIS_URL is set, with no bot running: ready again after Redis restarts empty, unready while it is gone',
    async () => {
      const redis = await aRedisOfItsOwn();
      const lines: string[] = [];
      const service = await startService({ PICTOR_LOG_LEVEL: 'silent', PICTOR_METRICS_PORT: '0', PICTOR_EMULATOR_LATENCY_MS: '0', REDIS_URL: redis.url }, (l) => lines.push(l));
      defer(() => service.stop());
      const base = /Metrics for Prometheus at (\S+)\/metrics/.exec(lines.join('\n'))![1]!;
      const health = async () => {
        const answer = await fetch(`${base}/healthz`);
        return { status: answer.status, body: (await answer.json()) as unknown };
      };
      const ready = { status: 200, body: { status: 'ok', checks: { redis: true, limiter: true } } };
      expect(await health()).toEqual(ready);
      // Nothing persisted: the limiter's state in Redis is gone, and rebuilt.
      await redis.restart();
      await vi.waitFor(async () => expect(await health()).toEqual(ready), { timeout: 20_000, interval: 200 });
      await redis.stop();
      expect(await health()).toEqual({ status: 503, body: { status: 'unavailable', checks: { redis: false, limiter: false } } });
    },
    60_000,
  );

  it('refuses PICTOR_METRICS_HOST without a port, naming the variable', async () => {
    await expect(startService({ PICTOR_METRICS_HOST: '0.0.0.0' }, () => {})).rejects.toMatchObject({ code: 'validation_error', param: 'PICTOR_METRICS_PORT' });
  });
});
