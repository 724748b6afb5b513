import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startService } from '../../bots/main.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { connectRedis } from '../../src/internal.js';
import { buttonsOf, FakeDiscord } from '../fakes/discord/FakeDiscord.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { startUpstream, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { requireRedisUrl, testRedis } from '../helpers/shared-limits-redis.js';
import { startThrowawayRedis } from '../setup/redis-server.js';
import { finishedJob } from './slack/harness.js';

const defer = useCleanup();
const redisPresent = testRedis();

describe('npm start with both surfaces and REDIS_URL', () => {
  it.skipIf(redisPresent.skipReason)(
    'opens 2 connections to Redis from its start to its stop, so it never holds more than 3 (counted by Redis, and by name and address with CLIENT LIST), while the limiter, the ledger, the state, /healthz, the gateway lease, the Slack write buckets, socket replicas and the console all use it',
    async () => {
      requireRedisUrl(redisPresent);
      // A Redis of its own, so every client but the test's is this process's.
      const redis = await startThrowawayRedis();
      if (!redis) throw new Error('redis-server is needed');
      defer(() => redis.stop());
      // The test's own connection, opened first: Redis counts every connection it accepts from then on.
      const observer = await connectRedis(redis.url, { name: 'connections-test' });
      defer(async () => observer.disconnect());
      const mine = await observer.client('ID');
      const acceptedBefore = await connectionsReceived(observer);
      /** The connections Redis holds now other than the test's, each as `name@address`. */
      const held = async () =>
        ((await observer.client('LIST')) as string)
          .trim()
          .split('\n')
          .filter((line) => !line.startsWith(`id=${mine} `))
          .map((line) => `${/ name=(\S*)/.exec(line)?.[1]}@${/ addr=(\S*)/.exec(line)?.[1]}`);
      const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
      defer(() => discord.close());
      const slack = await new FakeSlack({ channelWriteIntervalMs: 5 }).start();
      defer(() => slack.close());
      const upstream = await startUpstream(defer, 20);
      const service = await startService(
        {
          PICTOR_LOG_LEVEL: 'silent',
          PICTOR_DATA_DIR: await tempDataDir(defer),
          PICTOR_BASE_URL: upstream.url,
          PICTOR_API_KEY: DEV_API_KEY,
          PICTOR_PARTIAL_IMAGES: '0',
          PICTOR_METRICS_PORT: '0',
          PICTOR_CONSOLE_PORT: '0',
          PICTOR_CONSOLE_TOKEN: 'connections-test-console-token-42',
          REDIS_URL: redis.url,
          DISCORD_TOKEN: discord.botToken,
          DISCORD_APPLICATION_ID: discord.applicationId,
          DISCORD_API_BASE_URL: discord.apiBaseUrl,
          SLACK_BOT_TOKEN: slack.botToken,
          SLACK_APP_TOKEN: slack.appToken,
          SLACK_API_URL: slack.apiUrl,
        },
        () => {},
      );
      let stopping: Promise<void> | undefined;
      const stop = () => (stopping ??= service.stop());
      defer(stop);
      const heldAtStart = await held();
      // Every part at work: a job on each surface (limiter, ledger, state, Slack's shared write buckets), a Cancel
      // notice channel subscribed, the gateway lease held, the socket replicas' entry kept.
      const ix = discord.slashCommand('imagine', { prompt: 'a lighthouse', quality: 'low' });
      await discord.waitFor(() => {
        const message = discord.original(ix);
        return message && buttonsOf(message).some((b) => b.label === 'Reroll') ? message : undefined;
      }, 'the Discord job');
      await slack.command({ command: '/imagine', text: 'a fox --quality low', channel: 'C0COUNT' });
      await finishedJob(slack, 'C0COUNT');
      // The console reads the ledger and the Discord job's kept image.
      const consoleUrl = service.console!.url!;
      const login = await fetch(`${consoleUrl}/login`, { method: 'POST', body: new URLSearchParams({ token: 'connections-test-console-token-42' }), redirect: 'manual', headers: { origin: consoleUrl } });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      for (const path of ['/spend', '/settings']) expect((await fetch(`${consoleUrl}${path}`, { headers: { cookie } })).status).toBe(200);
      const jobs = await (await fetch(`${consoleUrl}/jobs`, { headers: { cookie } })).text();
      const thumbnail = /<img src="(\/thumbs\/[^"]+)"/.exec(jobs)?.[1];
      expect(thumbnail).toBeDefined();
      expect((await fetch(`${consoleUrl}${thumbnail}`, { headers: { cookie } })).status).toBe(200);

      // The link's two (bots/README.md), the same ones from the start to the end, each named, from two addresses: one
      // command connection, one subscriber (bottleneck's and the state's notices).
      const heldAtEnd = await held();
      expect(heldAtEnd.map((client) => client.split('@')[0]).sort()).toEqual(['pictor-subscriber:pictor', 'pictor:pictor']);
      expect(new Set(heldAtEnd.map((client) => client.split('@')[1])).size).toBe(2);
      expect(heldAtEnd.sort()).toEqual(heldAtStart.sort());
      // And no other, however briefly (a start-up check, one per job, per console page, at the stop): every connection
      // Redis accepted since the test's own is one of those two — a list taken now and then would miss one closed since.
      await stop();
      expect((await connectionsReceived(observer)) - acceptedBefore).toBe(2);
    },
    60_000,
  );
});

/** How many connections Redis has accepted since it started (`INFO stats`). */
async function connectionsReceived(redis: Redis): Promise<number> {
  const stats = await redis.info('stats');
  return Number(/^total_connections_received:(\d+)/m.exec(stats)?.[1]);
}
