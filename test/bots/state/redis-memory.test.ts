import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Redis } from 'ioredis';
import { botSpaces, DEFAULT_KEPT_IMAGES_MB, digestKeyOf, openBotState, stateKeyOf, type BotSpaces, type BotState } from '../../../bots/state/index.js';
import type { SpaceDefinition, Space } from '../../../bots/state/StateStore.js';
import { ALLOCATOR_ROUNDING, REDIS_RECORD_BYTES, stateBytesBound, warnIfRedisTooSmall } from '../../../bots/state/redis-memory.js';
import { RedisLink } from '../../../src/internal.js';
import { RedisQuotaStore } from '../../../src/spend/RedisQuotaStore.js';
import { DEFAULT_USAGE_RETENTION_DAYS } from '../../../src/spend/usage-records.js';
import { requireRedisUrl, testRedis } from '../../helpers/shared-limits-redis.js';
import { startThrowawayRedis } from '../../setup/redis-server.js';
import { RecordingLogger } from '../discord/harness.js';

const redisPresent = testRedis();

describe('the bots’ state on a Redis that may evict', () => {
  it.skipIf(redisPresent.skipReason)('says so at start, each fact once: the link the policy that could drop leases and reservations, the state a maxmemory too small for what the bots keep', async () => {
    requireRedisUrl(redisPresent);
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-evicting-'));
    for (const [settings, byLink, byState] of [
      [['--maxmemory-policy', 'volatile-ttl', '--maxmemory', '32mb'], [/maxmemory-policy volatile-ttl/], [/maxmemory leaves too little room/]],
      [['--maxmemory-policy', 'noeviction'], [], []],
    ] as const) {
      const redis = (await startThrowawayRedis('redis-server', 3, settings))!;
      const logger = new RecordingLogger();
      const warned = () => logger.entries.filter((e) => e.level === 'warn').map((e) => e.msg ?? '');
      const link = await RedisLink.open({ url: redis.url, prefix: 'pictor' }, { logger });
      const saidByLink = warned();
      const state = await openBotState({ dataDir, redis: link, logger });
      try {
        const saidByState = warned().slice(saidByLink.length);
        expect(saidByLink).toHaveLength(byLink.length);
        byLink.forEach((pattern, i) => expect(saidByLink[i]).toMatch(pattern));
        expect(saidByState).toHaveLength(byState.length);
        byState.forEach((pattern, i) => expect(saidByState[i]).toMatch(pattern));
      } finally {
        await state.close();
        await link.close();
        await redis.stop();
      }
    }
    await rm(dataDir, { recursive: true, force: true });
  });
});

describe('the spaces bounded by their count alone', () => {
  it('are counted in what maxmemory must leave room for at REDIS_RECORD_BYTES a record, by one rule', () => {
    const spaces = botSpaces();
    const countedAlone = Object.entries(spaces as Record<string, SpaceDefinition>).filter(([, space]) => space.maxBytes === undefined && space.maxCount !== undefined);
    expect(countedAlone.map(([, space]) => space.name)).toEqual(['discord-interactions', 'slack-seen', 'slack-messages', 'audit-ended', 'forgotten']);
    for (const [name, space] of countedAlone) {
      const without = { ...spaces, [name]: { ...space, maxCount: 0 } } as BotSpaces;
      expect(stateBytesBound(spaces) - stateBytesBound(without), space.name).toBe(space.maxCount! * REDIS_RECORD_BYTES);
    }
  });

  it.skipIf(redisPresent.skipReason)('take at most REDIS_RECORD_BYTES a record on Redis, within the count their space binds there too: the audit channel’s job ends, the members’ forget marks, a key taken once (a Slack signature seen, a Slack message taken)', async () => {
    requireRedisUrl(redisPresent);
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-count-bound-'));
    const redis = (await startThrowawayRedis('redis-server', 3, ['--maxmemory-policy', 'noeviction']))!;
    const link = await RedisLink.open({ url: redis.url, prefix: 'pictor' });
    const state = await openBotState({ dataDir, redis: link, logger: new RecordingLogger() });
    try {
      const used = async () => Number(/^used_memory:(\d+)/m.exec(await link.commands.info('memory'))![1]);
      // Each space as the bots' own, bounded at 2 000 records: 3 000 writes keep 2 000.
      const writes: [SpaceDefinition, (space: Space<unknown>, i: number) => Promise<unknown>][] = [
        [state.spaces.auditEnded, (space, i) => space.put(digestKeyOf(`ended:discord:G1:job-${i}`), true)],
        [state.spaces.forgotten, (space, i) => space.put(stateKeyOf(`discord:${1_000_000_000_000_000_000n + BigInt(i)}`), Date.now())],
      ];
      for (const [definition, write] of writes) {
        const space = state.store.space<unknown>({ ...definition, maxCount: 2_000 });
        const before = await used();
        for (let i = 0; i < 3_000; i++) await write(space, i);
        const after = await used();
        let kept = 0;
        for await (const _ of space.keys()) kept++;
        expect(kept, definition.name).toBe(2_000);
        expect((after - before) / kept, definition.name).toBeLessThan(REDIS_RECORD_BYTES);
      }
      // A key taken once is one key with its TTL: less than a record (a signature seen, a Slack message taken).
      const claims: [SpaceDefinition, (i: number) => string][] = [
        [state.spaces.slackSeen, (i) => `v0=signature-${i}`],
        [state.spaces.slackMessages, (i) => `T0123456789:C0123456789:${1_700_000_000 + i}.000100`],
      ];
      for (const [definition, keyOf] of claims) {
        const space = state.store.space(definition);
        const before = await used();
        for (let i = 0; i < 2_000; i++) expect(await space.claimOnce(digestKeyOf(keyOf(i)))).toBe(true);
        expect((await used()) - before, definition.name).toBeLessThan(2_000 * REDIS_RECORD_BYTES);
      }
    } finally {
      await state.close();
      await link.close();
      await redis.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the kept images on Redis', () => {
  it.skipIf(redisPresent.skipReason)('take at most what stateBytesBound counts for them, the allocator’s rounding included: 600×600 and 1024×1024 PNGs', async () => {
    requireRedisUrl(redisPresent);
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-kept-images-'));
    const redis = (await startThrowawayRedis('redis-server', 3, ['--maxmemory-policy', 'noeviction']))!;
    // Read by a connection of its own once the writer's are gone: a big write leaves its connection a query buffer of
    // its size for a while, which is not kept (and which Redis counts among the clients' memory only later).
    const reader = await RedisLink.open({ url: redis.url, prefix: 'pictor' });
    const used = async () => {
      await vi.waitFor(async () => expect(String(await reader.commands.client('LIST')).trim().split('\n')).toHaveLength(1));
      const info = await reader.commands.info('memory');
      return Number(/^used_memory:(\d+)/m.exec(info)![1]) - Number(/^mem_clients_normal:(\d+)/m.exec(info)![1]);
    };
    /** Opens the bots' state on a link of its own, writes, closes both: what a start leaves lasts, the rest goes. */
    const withState = async (write: (state: BotState) => Promise<void>) => {
      const link = await RedisLink.open({ url: redis.url, prefix: 'pictor' });
      const state = await openBotState({ dataDir, redis: link, logger: new RecordingLogger() });
      await write(state).finally(() => state.close().finally(() => link.close()));
    };
    try {
      await withState(async () => undefined);
      // A 600×600 PNG of noise is 1.08 MB, which the allocator gives 1.25 MiB; a 1024×1024 PNG, about 1.6 MB.
      for (const size of [1_080_000, 1_600_000]) {
        const count = 16;
        const before = await used();
        await withState(async (state) => {
          const images = state.store.space<Buffer>(state.spaces.discordImages);
          for (let i = 0; i < count; i++) await images.put(`job${size}-out-${i}`, randomBytes(size));
        });
        const grown = (await used()) - before;
        const bound = stateBytesBound({ discordImages: { ...botSpaces().discordImages, maxBytes: count * size, maxCount: count } } as unknown as BotSpaces);
        expect(grown, `${count} images of ${size} bytes`).toBeGreaterThan(count * size);
        expect(grown, `${count} images of ${size} bytes`).toBeLessThanOrEqual(bound);
      }
    } finally {
      await reader.close();
      await redis.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('what docs/shared-limits.md says the bots’ state may keep', () => {
  const root = join(import.meta.dirname, '../../..');
  const page = () => readFile(join(root, 'docs/shared-limits.md'), 'utf8');
  /** The page's paragraph on what the bots' bounded spaces add up to, on one line. */
  const paragraph = async () => ((await page()).split('\n\n').find((p) => p.startsWith('What it may keep:')) ?? '').replaceAll(/\s+/g, ' ');
  const number = (figure: string | undefined) => Number(figure?.replaceAll(' ', ''));

  it('is the bound the spaces add up to: the kept images by default, as the allocator rounds them, plus the MiB the page names', async () => {
    const [, rounding, keptMb, restMb] = /([\d.]+) × `PICTOR_KEPT_IMAGES_MB` \((\d+) MiB by default\) plus (\d+) MiB at most \(`stateBytesBound`/.exec(await paragraph()) ?? [];
    const spaces = botSpaces();
    expect(Number(rounding)).toBe(ALLOCATOR_ROUNDING);
    expect(number(keptMb)).toBe(DEFAULT_KEPT_IMAGES_MB);
    expect(spaces.discordImages.maxBytes).toBe(DEFAULT_KEPT_IMAGES_MB * 2 ** 20);
    expect(number(restMb)).toBe(Math.round((stateBytesBound(spaces) - ALLOCATOR_ROUNDING * spaces.discordImages.maxBytes) / 2 ** 20));
  });

  it('names the counts of the spaces bounded by their count alone, and the bytes a record of them is counted', async () => {
    const said = /`audit-ended`'s ([\d ]+) records, `forgotten`'s ([\d ]+), and the keys taken once of `slack-messages`, ([\d ]+), and of `slack-seen` and `discord-interactions`, ([\d ]+) each, [^—]+— (\d+) bytes a record/.exec(await paragraph()) ?? [];
    const { auditEnded, forgotten, slackMessages, slackSeen, discordInteractions } = botSpaces();
    expect(said.slice(1).map(number)).toEqual([auditEnded.maxCount, forgotten.maxCount, slackMessages.maxCount, slackSeen.maxCount, REDIS_RECORD_BYTES]);
    expect(discordInteractions.maxCount).toBe(slackSeen.maxCount);
  });

  it('says in the table at most the MiB those counts of REDIS_RECORD_BYTES make', async () => {
    const rows = (await page()).split('\n');
    for (const space of [botSpaces().auditEnded, botSpaces().forgotten, botSpaces().slackMessages]) {
      const row = rows.find((line) => line.startsWith(`| \`${space.name}\``)) ?? '';
      const [, count, mib] = /\| 64 bytes each; ([\d ]+) \(.*: at most ~(\d+) MiB\) \|$/.exec(row) ?? [];
      expect([number(count), number(mib)], space.name).toEqual([space.maxCount, Math.round((space.maxCount * REDIS_RECORD_BYTES) / 2 ** 20)]);
    }
  });

  it.skipIf(redisPresent.skipReason)('names at most what the ledger’s usage stream takes on Redis a settled job (a Discord job’s, without its prompt)', async () => {
    const [, pageBytes] = /the ledger adds under (\d+) bytes per settled job/.exec(await paragraph()) ?? [];
    const redis = (await startThrowawayRedis('redis-server', 3, ['--maxmemory-policy', 'noeviction']))!;
    const link = await RedisLink.open({ url: redis.url, prefix: 'pictor' });
    const ledger = new RedisQuotaStore({ redis: link.commands, prefix: 'pictor' });
    try {
      const jobs = 1_000;
      const snowflake = () => String(1_000_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e15)));
      const [userKey, scopeKey] = [`discord:${snowflake()}`, `discord:${snowflake()}`];
      for (let i = 0; i < jobs; i++) {
        // As the runner names a job (9 random bytes), and the service a request.
        const jobId = randomBytes(9).toString('base64url');
        const job = { operation: 'generate' as const, n: 2, size: '1024x1536', quality: 'medium' };
        expect(await ledger.reserve({ jobId, userKey, scopeKey, estimateUsd: 0.2, limits: {}, now: Date.now(), job })).toEqual({ ok: true });
        await ledger.markSent(jobId);
        await ledger.settle(jobId, 0.084, { requestId: `req_${randomBytes(16).toString('hex')}`, outcome: 'completed', images: 2 });
      }
      const bytes = Number(await link.commands.call('MEMORY', 'USAGE', 'pictor:quota:usage', 'SAMPLES', '0'));
      expect(await link.commands.xlen('pictor:quota:usage')).toBe(jobs);
      expect(bytes / jobs).toBeLessThan(number(pageBytes));
    } finally {
      await ledger.close();
      await link.close();
      await redis.stop();
    }
  });

  it('leaves room, at the maxmemory compose.yaml sets, for the bound and the ledger: no warning at start', async () => {
    const [, pageGib, composeSays, leftMib, perDay] = /A `maxmemory` of ([\d.]+) GiB \(as `compose.yaml` sets, `(\d+mb)`\) covers the defaults' bound with ~(\d+) MiB left for the ledger's usage stream: at under \d+ bytes a job kept 400 days, up to ([\d ]+) settled jobs a day/.exec(await paragraph()) ?? [];
    const [, perJob] = /the ledger adds under (\d+) bytes per settled job/.exec(await paragraph()) ?? [];
    const left = number(pageGib) * 2 ** 30 - stateBytesBound(botSpaces());
    expect(number(leftMib)).toBe(Math.floor(left / 2 ** 20));
    expect(number(perDay)).toBeLessThanOrEqual(left / (number(perJob) * DEFAULT_USAGE_RETENTION_DAYS));
    expect(number(perDay)).toBeGreaterThan(0);
    const [, composeMb] = /"--maxmemory", "(\d+)mb"/.exec(await readFile(join(root, 'compose.yaml'), 'utf8')) ?? [];
    expect(composeSays).toBe(`${composeMb}mb`);
    expect(number(pageGib)).toBe(number(composeMb) / 1024);
    // ioredis's INFO answer as Redis gives it, for the one call the check makes.
    const warnings = async (maxmemory: number) => {
      const redis = { info: async () => `maxmemory:${maxmemory}\r\nmaxmemory_policy:noeviction\r\n` } as unknown as Redis;
      const logger = new RecordingLogger();
      await warnIfRedisTooSmall(redis, botSpaces(), logger);
      return logger.entries.filter((e) => e.level === 'warn');
    };
    expect(await warnings(number(composeMb) * 2 ** 20)).toEqual([]);
    // What the page says of 1 GiB: the defaults' bound is past it, and the check says so at start.
    const [, boundGib, smallGib] = /The defaults' bound is ~([\d.]+) GiB, so a `maxmemory` of (\d+) GiB is too small for them/.exec(await paragraph()) ?? [];
    expect(number(boundGib)).toBe(Math.round((stateBytesBound(botSpaces()) / 2 ** 30) * 10) / 10);
    expect(stateBytesBound(botSpaces())).toBeGreaterThan(number(smallGib) * 2 ** 30);
    expect(await warnings(number(smallGib) * 2 ** 30)).toHaveLength(1);
  });
});
