import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openBotState, type BotState } from '../../../bots/state/index.js';
import { RedisLink, RedisQuotaStore, silentLogger } from '../../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { RecordingLogger } from '../discord/harness.js';
import { finishedJob, jobMessages, startHarness, type Harness } from './harness.js';

/** Closed last first; a harness sharing another's fake leaves it open. */
const harnesses: { h: Harness; keepFake?: boolean }[] = [];
afterEach(async () => {
  for (const { h, keepFake } of harnesses.splice(0).reverse()) await h.close(keepFake ? { fake: true } : {});
});

const generations = (h: Harness) => h.emulator.requests.filter((r) => r.path === '/v1/images/generations');

/** Waits until the bot has dropped a request as one it has seen: nothing of it runs after that. */
async function refusedAsReplay(logger: RecordingLogger): Promise<void> {
  await vi.waitFor(() => expect(logger.entries.map((e) => e.msg)).toContain('refused a replayed Slack request'), { timeout: 15_000 });
}

describe('a replayed signed Slack request', () => {
  it('is dropped after a restart: the signatures seen are kept in the data folder', async () => {
    const before = await startHarness({ emulator: { latencyMs: 10 } });
    await before.fake.command({ command: '/imagine', text: 'a cat --quality low', channel: 'C0REPLAY' });
    await finishedJob(before.fake, 'C0REPLAY');
    await before.close({ fake: true, dataDir: true });

    const logger = new RecordingLogger();
    const after = await startHarness({ emulator: { latencyMs: 10 }, fake: before.fake, dataDir: before.dataDir, bot: { logger } });
    harnesses.push({ h: after });
    const replayed = await after.fake.replayLastDelivery();
    expect(replayed.status).toBe(200);
    await refusedAsReplay(logger);
    expect(generations(after)).toHaveLength(0);
    expect(jobMessages(after.fake, 'C0REPLAY')).toHaveLength(1);
  });
});

const redis = testRedis();

describe.skipIf(redis.skipReason)(`a replayed signed Slack request, two bots on one Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  let url: string;
  const prefixes: string[] = [];
  const opened: (BotState | RedisLink)[] = [];

  beforeAll(() => {
    url = requireRedisUrl(redis);
  });
  afterAll(async () => {
    for (const open of opened.reverse()) await open.close();
    if (url) for (const prefix of prefixes) await deleteKeys(url, prefix);
  });

  /** A process's ledger and state on the shared Redis. */
  async function onRedis(prefix: string) {
    const link = await RedisLink.open({ url, prefix });
    const state = await openBotState({ dataDir: await mkdtemp(join(tmpdir(), 'pictor-replay-')), redis: link, logger: silentLogger() });
    opened.push(link, state);
    return { store: new RedisQuotaStore({ redis: link.commands, prefix }), bot: { state } };
  }

  it('is dropped by the second bot when the first one ran it', async () => {
    const prefix = uniquePrefix('replay');
    prefixes.push(prefix);
    const first = await startHarness({ emulator: { latencyMs: 10 }, ...(await onRedis(prefix)) });
    harnesses.push({ h: first });
    const logger = new RecordingLogger();
    const onSecond = await onRedis(prefix);
    const second = await startHarness({ emulator: { latencyMs: 10 }, fake: first.fake, ...onSecond, bot: { ...onSecond.bot, logger } });
    harnesses.push({ h: second, keepFake: true });

    first.fake.deliverOverHttp(first.bot.url!);
    await first.fake.command({ command: '/imagine', text: 'a cat --quality low', channel: 'C0TWO' });
    await finishedJob(first.fake, 'C0TWO');
    first.fake.deliverOverHttp(second.bot.url!);
    const replayed = await first.fake.replayLastDelivery();
    expect(replayed.status).toBe(200);
    await refusedAsReplay(logger);
    expect(generations(first)).toHaveLength(1);
    expect(generations(second)).toHaveLength(0);
    expect(jobMessages(first.fake, 'C0TWO')).toHaveLength(1);
  });
});
