import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startService } from '../../bots/main.js';
import { openBotState } from '../../bots/state/open-state.js';
import { openQuotaStore, silentLogger } from '../../src/internal.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { slackEventsUrl, startUpstream, surfaceEnv, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { everythingKept } from '../helpers/everything-kept.js';
import { warningsKept } from '../helpers/warnings-kept.js';
import { redisMonitor } from '../helpers/redis-monitor.js';
import { finishedJob } from './slack/harness.js';

const defer = useCleanup();
const redis = testRedis();
const MARKER = 'ZEPHYRINE';

describe.each([
  { backend: 'file' as const, skip: undefined },
  { backend: 'redis' as const, skip: redis.skipReason },
])('forget after a switch between the embedded emulator and the real service, with npm start on $backend', ({ backend, skip }) => {
  it.skipIf(skip).each([
    { before: 'the embedded emulator', after: 'the real service' },
    { before: 'the real service', after: 'the embedded emulator' },
  ])('erases the usage records’ prompts the ledger of $before kept, once on $after', async ({ before }) => {
    const slack = await new FakeSlack({ channelWriteIntervalMs: 10 }).start();
    defer(() => slack.close());
    const upstream = await startUpstream(defer, 0, { identifyAsEmulator: false });
    const dataDir = await tempDataDir(defer, 'pictor-forget-switch-');
    const prefix = uniquePrefix('forget-switch');
    const url = backend === 'redis' ? requireRedisUrl(redis) : undefined;
    if (url) defer(() => deleteKeys(url, prefix));
    const base = {
      PICTOR_LOG_LEVEL: 'silent',
      PICTOR_DATA_DIR: dataDir,
      PICTOR_USAGE_PROMPTS: '1',
      PICTOR_PARTIAL_IMAGES: '0',
      PICTOR_EMULATOR_LATENCY_MS: '0',
      ...surfaceEnv({ slack }),
      ...(url && { REDIS_URL: url, PICTOR_REDIS_PREFIX: prefix }),
    };
    const real = { PICTOR_BASE_URL: upstream.url, PICTOR_API_KEY: DEV_API_KEY };
    const start = async (env: Record<string, string>) => {
      const lines: string[] = [];
      const service = await startService(env, (line) => lines.push(line));
      slack.deliverOverHttp(slackEventsUrl(lines.join('\n'))!);
      return service;
    };
    const first = await start(before === 'the real service' ? { ...base, ...real } : base);
    await slack.command({ command: '/imagine', text: `a ${MARKER} fox --quality low`, channel: 'C0SWITCH', user: 'U0FORGET' });
    await finishedJob(slack, 'C0SWITCH');
    await first.stop();
    expect(await everythingKept(dataDir, url, prefix)).toContain(MARKER);

    const second = await start(before === 'the real service' ? base : { ...base, ...real });
    defer(() => second.stop());
    const ack = await slack.command({ command: '/imagine', text: 'forget', channel: 'C0SWITCH', user: 'U0FORGET' });
    const said = await slack.waitFor(() => slack.responses.find((r) => ack.responseUrl.endsWith(r.id)), 'the answer to /imagine forget');
    expect(String(said.body.text)).toContain('Erased your history (1 job)');
    expect(await everythingKept(dataDir, url, prefix)).not.toContain(MARKER);
  }, 60_000);
});

describe('forget of the other ledger, at the same moment or never kept', () => {
  it('erases in the other ledger for two members who forget at the same moment, on the file backend', async () => {
    const dataDir = await tempDataDir(defer, 'pictor-forget-together-');
    const logger = silentLogger();
    // The other ledger was kept: it holds a prompt of the first member.
    const kept = await openQuotaStore({ dataDir, ledger: 'emulator', logger });
    const job = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low', prompt: `a ${MARKER} fox` };
    await kept.reserve({ jobId: 'job-1', userKey: 'slack:U0FIRST', scopeKey: 'slack:T0', estimateUsd: 0.01, limits: {}, now: Date.now(), job });
    await kept.settle('job-1', 0.01);
    await kept.close();
    expect(await everythingKept(dataDir, undefined, '')).toContain(MARKER);

    // The second member's forget reaches the ledger step while the first's has the other ledger open.
    let secondAtLedger!: () => void;
    const secondReached = new Promise<void>((resolve) => (secondAtLedger = resolve));
    const opening: Promise<unknown>[] = [];
    const state = await openBotState({
      dataDir,
      logger,
      ledger: { forgetPrompts: async (userKey) => void (userKey === 'slack:U0SECOND' && secondAtLedger()), takeLegacy: async () => undefined },
      otherLedger: () => {
        const opened = openQuotaStore({ dataDir, ledger: 'emulator', logger, reconcile: false }).then((store) => ({
          forgetPrompts: async (userKey: string) => {
            if (userKey === 'slack:U0FIRST') {
              await secondReached;
              // Whatever the second forget starts on its way from the ledger step is started by now.
              await new Promise((resolve) => setImmediate(resolve));
              await Promise.allSettled(opening.slice(1));
            }
            await store.forgetPrompts(userKey);
          },
          close: () => store.close(),
        }));
        opening.push(opened);
        return opened;
      },
    });
    defer(() => state.close());

    const forgets = await Promise.allSettled([state.forget('slack:U0FIRST'), state.forget('slack:U0SECOND')]);
    expect(forgets.map((f) => f.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(opening).toHaveLength(2);
    expect(await everythingKept(dataDir, undefined, '')).not.toContain(MARKER);
  });

  it('answers the member once the other ledger forgot, without waiting for it to close (a Redis rewrite may run long); the next forget waits for it', async () => {
    const dataDir = await tempDataDir(defer, 'pictor-forget-close-');
    const closes: { release: () => void }[] = [];
    const events: string[] = [];
    let secondAtLedger!: () => void;
    const secondReached = new Promise<void>((resolve) => (secondAtLedger = resolve));
    const state = await openBotState({
      dataDir,
      logger: silentLogger(),
      // The step just before the other ledger's: from there to it, nothing waits for a file or a timer.
      ledger: { forgetPrompts: async (userKey) => void (userKey === 'slack:U0SECOND' && secondAtLedger()), takeLegacy: async () => undefined },
      otherLedger: async () => {
        events.push('opened');
        return {
          forgetPrompts: async (userKey: string) => void events.push(`forgot ${userKey}`),
          // Closes only when the test lets it: a close waiting on Redis's running rewrite.
          close: () => new Promise<void>((resolve) => (ended ? resolve() : closes.push({ release: resolve }))),
        };
      },
    });
    let ended = false;
    defer(() => state.close());
    defer(async () => void ((ended = true), closes.forEach((c) => c.release())));

    await state.forget('slack:U0FIRST');
    expect(events).toEqual(['opened', 'forgot slack:U0FIRST']);
    expect(closes).toHaveLength(1);
    // The second member's forget opens the other ledger only once the first closed it.
    const second = state.forget('slack:U0SECOND');
    await secondReached;
    // Every step it could take without the first's close is taken before the event loop's next turn.
    await new Promise((resolve) => setImmediate(resolve));
    events.push('first closed');
    closes[0]!.release();
    await second;
    expect(events).toEqual(['opened', 'forgot slack:U0FIRST', 'first closed', 'opened', 'forgot slack:U0SECOND']);
  });

  it('closes the other ledger a forget is still closing by the stop’s deadline, and the stop waits for it', async () => {
    const dataDir = await tempDataDir(defer, 'pictor-forget-stop-');
    const untils: (number | undefined)[] = [];
    let closed = false;
    let hurried!: () => void;
    // Closes only once given a deadline: a close waiting on Redis's running rewrite, ended by the stop's.
    const closing = new Promise<void>((resolve) => (hurried = resolve)).then(() => void (closed = true));
    const state = await openBotState({
      dataDir,
      logger: silentLogger(),
      ledger: { forgetPrompts: async () => undefined, takeLegacy: async () => undefined },
      otherLedger: async () => ({
        forgetPrompts: async () => undefined,
        close: (options?: { until?: number | undefined }) => {
          untils.push(options?.until);
          if (options?.until !== undefined) hurried();
          return closing;
        },
      }),
    });
    defer(async () => hurried());

    await state.forget('slack:U0FIRST');
    expect(untils).toEqual([undefined]);
    const until = Date.now() + 60_000;
    await state.close({ until });
    expect(untils).toEqual([undefined, until]);
    expect(closed).toBe(true);
  });

  it('refuses, as closed, a forget’s turn at the other ledger that comes after a stop began, and never opens it again', async () => {
    const dataDir = await tempDataDir(defer, 'pictor-forget-after-stop-');
    const opened: string[] = [];
    let letFirstForget!: () => void;
    const firstMayForget = new Promise<void>((resolve) => (letFirstForget = resolve));
    let firstAtOther!: () => void;
    const firstReached = new Promise<void>((resolve) => (firstAtOther = resolve));
    let secondAtLedger!: () => void;
    const secondReached = new Promise<void>((resolve) => (secondAtLedger = resolve));
    const state = await openBotState({
      dataDir,
      logger: silentLogger(),
      ledger: { forgetPrompts: async (userKey) => void (userKey === 'slack:U0SECOND' && secondAtLedger()), takeLegacy: async () => undefined },
      otherLedger: async () => ({
        forgetPrompts: async (userKey: string) => {
          opened.push(userKey);
          if (userKey !== 'slack:U0FIRST') return;
          firstAtOther();
          await firstMayForget;
        },
        close: async () => undefined,
      }),
    });
    defer(async () => letFirstForget());

    // The first member's forget holds the other ledger open as the stop begins; the second's comes to it after.
    const first = state.forget('slack:U0FIRST');
    await firstReached;
    const stop = state.close();
    // Its refusal is taken as it is made: it may come while the first forget and the stop are still awaited.
    const refused = state.forget('slack:U0SECOND').then(
      () => undefined,
      (error: unknown) => error,
    );
    await secondReached;
    letFirstForget();
    await first;
    await stop;
    expect(await refused).toBeInstanceOf(AggregateError);
    expect(((await refused) as AggregateError).errors.map((e: { code?: string }) => e.code)).toContain('state_closed');
    expect(opened).toEqual(['slack:U0FIRST']);
  });

  it('logs once, and still stops, when the other ledger a forget is closing fails to close (the stop’s close is the same one)', async () => {
    const dataDir = await tempDataDir(defer, 'pictor-forget-stop-fails-');
    const { logger, warnings } = warningsKept();
    let closing: Promise<void> | undefined;
    let closeFails!: (error: Error) => void;
    const state = await openBotState({
      dataDir,
      logger,
      ledger: { forgetPrompts: async () => undefined, takeLegacy: async () => undefined },
      otherLedger: async () => ({
        forgetPrompts: async () => undefined,
        // As RedisQuotaStore's: one close, which a close called again (the stop's, with its deadline) answers too; it
        // fails when its connection cannot be quit.
        close: (options?: { until?: number | undefined }) => {
          closing ??= new Promise<void>((_, reject) => (closeFails = reject));
          if (options?.until !== undefined) closeFails(new Error('the connection could not be quit'));
          return closing;
        },
      }),
    });

    await state.forget('slack:U0FIRST');
    await state.close({ until: Date.now() + 60_000 });
    expect(warnings).toHaveLength(1);
  });

  it.skipIf(redis.skipReason)('looks for the other ledger on Redis without walking the keyspace', async () => {
    const slack = await new FakeSlack({ channelWriteIntervalMs: 10 }).start();
    defer(() => slack.close());
    const dataDir = await tempDataDir(defer, 'pictor-forget-never-kept-');
    const prefix = uniquePrefix('forget-never-kept');
    const url = requireRedisUrl(redis);
    defer(() => deleteKeys(url, prefix));
    const lines: string[] = [];
    const service = await startService(
      { PICTOR_LOG_LEVEL: 'silent', PICTOR_DATA_DIR: dataDir, PICTOR_PARTIAL_IMAGES: '0', PICTOR_EMULATOR_LATENCY_MS: '0', REDIS_URL: url, PICTOR_REDIS_PREFIX: prefix, ...surfaceEnv({ slack }) },
      (line) => lines.push(line),
    );
    defer(() => service.stop());
    slack.deliverOverHttp(slackEventsUrl(lines.join('\n'))!);

    const scans: string[] = [];
    const marker = `${prefix}:seen-by-monitor`;
    let markerSeen = false;
    await redisMonitor(url, defer, (line) => {
      // Other test files share this Redis: only this service's keys (its prefix) count.
      if (/^\+\S+ \[[^\]]*\] "scan" /i.test(line) && line.includes(`${prefix}:`) && line.includes(':quota:')) scans.push(line);
      if (line.includes(`"${marker}"`)) markerSeen = true;
    });
    const ack = await slack.command({ command: '/imagine', text: 'forget', channel: 'C0NEVER', user: 'U0NEVER' });
    const said = await slack.waitFor(() => slack.responses.find((r) => ack.responseUrl.endsWith(r.id)), 'the answer to /imagine forget');
    expect(String(said.body.text)).toContain('Erased your history (0 jobs)');
    // MONITOR shows commands in the order Redis ran them: once it shows this one, it has shown the forget's.
    const probe = new Redis(url);
    defer(async () => void probe.disconnect());
    await probe.get(marker);
    await slack.waitFor(() => markerSeen || undefined, 'the monitor to see the marker');
    expect(scans).toEqual([]);
  }, 60_000);
});
