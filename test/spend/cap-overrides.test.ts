import { mkdir, stat, readFile, writeFile } from 'node:fs/promises';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { effectiveLimits, FileQuotaStore, scopeLimits, RedisQuotaStore, type QuotaStore } from '../../src/internal.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { useTempDirs } from '../helpers/runner-harness.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const NOON = Date.UTC(2030, 5, 15, 12, 0, 0);
const newDir = useTempDirs();
const redis = testRedis();

describe('the caps that apply to a scope', () => {
  const at = { by: 'discord:admin', at: NOON };

  it('are the operator’s, each lowered to what a chat admin set, never raised above it', () => {
    const operator = { userDailyUsd: 1, scopeMonthlyUsd: 20, accountDailyUsd: 5, userConcurrentJobs: 2 };
    expect(effectiveLimits(operator, { userDailyUsd: { usd: 0.5, ...at }, scopeMonthlyUsd: { usd: 30, ...at } })).toEqual({
      userDailyUsd: 0.5,
      scopeMonthlyUsd: 20,
      accountDailyUsd: 5,
      userConcurrentJobs: 2,
    });
  });

  it('take a chat admin’s cap as it is where the operator set none, and the operator’s where the admin set none', () => {
    expect(effectiveLimits({ userDailyUsd: 1 }, { scopeDailyUsd: { usd: 40, ...at } })).toEqual({ userDailyUsd: 1, scopeDailyUsd: 40 });
    expect(effectiveLimits({ userDailyUsd: 1 }, {})).toEqual({ userDailyUsd: 1 });
  });

  it('of a person’s own scope (a DM, a user install) are the operator’s with the DM caps as its scope caps, whatever a chat admin set; another scope’s are lowered by its admins', () => {
    const operator = { userDailyUsd: 1, scopeDailyUsd: 20, scopeMonthlyUsd: 200, accountDailyUsd: 5 };
    const dmCaps = { dailyUsd: 0.5, monthlyUsd: undefined };
    const own = { userDailyUsd: { usd: 0.25, ...at }, scopeDailyUsd: { usd: 2, ...at } };
    expect(scopeLimits('discord:dm:111', operator, dmCaps, own)).toEqual({ userDailyUsd: 1, scopeDailyUsd: 0.5, scopeMonthlyUsd: undefined, accountDailyUsd: 5 });
    expect(scopeLimits('discord:222', operator, dmCaps, own)).toEqual(effectiveLimits(operator, own));
    expect(scopeLimits('slack:T1', operator, dmCaps, {})).toEqual(operator);
  });
});

/** The same contract for both stores: set, read back from a new store on the same ledger, clear. */
function behavesLikeALedgerOfCaps(open: () => Promise<{ store: QuotaStore; reopen: () => Promise<QuotaStore> }>) {
  it('keeps what a chat admin set for a scope, with who and when, for a new store on the same ledger', async () => {
    const { store, reopen } = await open();
    expect(await store.setCapOverride('discord:g1', 'userDailyUsd', 2.5, 'discord:admin', NOON)).toEqual({ previousUsd: undefined });
    expect(await store.setCapOverride('discord:g1', 'userDailyUsd', 1.25, 'discord:admin2', NOON + 1)).toEqual({ previousUsd: 2.5 });
    await store.setCapOverride('discord:g1', 'scopeMonthlyUsd', 0, 'discord:admin', NOON);
    const again = await reopen();
    expect(await again.capOverrides('discord:g1')).toEqual({
      userDailyUsd: { usd: 1.25, by: 'discord:admin2', at: NOON + 1 },
      scopeMonthlyUsd: { usd: 0, by: 'discord:admin', at: NOON },
    });
    // Another scope is untouched.
    expect(await again.capOverrides('discord:g2')).toEqual({});
  });

  it('clears a cap, answering what it was', async () => {
    const { store } = await open();
    await store.setCapOverride('slack:T1', 'scopeDailyUsd', 3, 'slack:U1', NOON);
    expect(await store.setCapOverride('slack:T1', 'scopeDailyUsd', undefined, 'slack:U1', NOON)).toEqual({ previousUsd: 3 });
    expect(await store.capOverrides('slack:T1')).toEqual({});
    expect(await store.setCapOverride('slack:T1', 'scopeDailyUsd', undefined, 'slack:U1', NOON)).toEqual({ previousUsd: undefined });
  });

  it('refuses a negative or non-numeric amount, and the account’s caps', async () => {
    const { store } = await open();
    await expect(store.setCapOverride('slack:T1', 'userDailyUsd', -1, 'slack:U1', NOON)).rejects.toThrow(RangeError);
    await expect(store.setCapOverride('slack:T1', 'userDailyUsd', Number.NaN, 'slack:U1', NOON)).rejects.toThrow(RangeError);
    // The account's caps are never a chat admin's.
    await expect(store.setCapOverride('slack:T1', 'accountDailyUsd' as never, 1, 'slack:U1', NOON)).rejects.toThrow(RangeError);
    expect(await store.capOverrides('slack:T1')).toEqual({});
  });
}

describe('FileQuotaStore: caps chat admins set', () => {
  const stores: FileQuotaStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  const fileStore = (dir: string) => {
    const store = new FileQuotaStore({ dir });
    stores.push(store);
    return store;
  };

  behavesLikeALedgerOfCaps(async () => {
    const dir = await newDir();
    const store = fileStore(dir);
    return {
      store,
      reopen: async () => {
        await store.close();
        return fileStore(dir);
      },
    };
  });

  it('writes them to cap-overrides.json beside the ledger, readable by its owner only', async () => {
    const store = fileStore(await newDir());
    await store.setCapOverride('discord:g1', 'userMonthlyUsd', 9, 'discord:admin', NOON);
    const file = JSON.parse(await readFile(store.capOverridesPath, 'utf8')) as unknown;
    expect(file).toEqual({ version: 1, scopes: { 'discord:g1': { userMonthlyUsd: { usd: 9, by: 'discord:admin', at: NOON } } } });
    expect((await stat(store.capOverridesPath)).mode & 0o777).toBe(0o600);
  });

  it('fails with an error naming a damaged file rather than dropping the caps in it', async () => {
    const store = fileStore(await newDir());
    await writeFile(store.capOverridesPath, '{"version":1,"scopes":');
    await expect(store.capOverrides('discord:g1')).rejects.toThrow(store.capOverridesPath);
  });

  it('fails with an error naming a file it cannot read (a folder in its place) rather than taking it for none set', async () => {
    const store = fileStore(await newDir());
    await mkdir(store.capOverridesPath);
    await expect(store.capOverrides('discord:g1')).rejects.toMatchObject({
      code: 'ledger_unreadable',
      message: expect.stringContaining(`${store.capOverridesPath} cannot be read (the chat admins' caps)`),
    });
  });
});

describe.skipIf(redis.skipReason)(`RedisQuotaStore: caps chat admins set ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  let url: string;
  const prefixes: string[] = [];
  const clients: Redis[] = [];
  const stores: RedisQuotaStore[] = [];

  beforeAll(() => {
    url = requireRedisUrl(redis);
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    for (const client of clients.splice(0)) client.disconnect();
  });
  afterAll(async () => {
    if (url) for (const prefix of prefixes) await deleteKeys(url, prefix);
  });

  /** A store on its own connection, as another process would have. */
  const redisStore = async (prefix: string) => {
    const client = await connectRedis(url);
    clients.push(client);
    const store = new RedisQuotaStore({ redis: client, prefix });
    stores.push(store);
    return store;
  };

  behavesLikeALedgerOfCaps(async () => {
    const prefix = uniquePrefix('caps');
    prefixes.push(prefix);
    const store = await redisStore(prefix);
    return { store, reopen: () => redisStore(prefix) };
  });

  it('keeps them in the hash <prefix>:quota:caps:<scope>, in nano-dollars', async () => {
    const prefix = uniquePrefix('caps');
    prefixes.push(prefix);
    const store = await redisStore(prefix);
    await store.setCapOverride('slack:T1', 'userDailyUsd', 2.5, 'slack:U1', NOON);
    expect(await clients[0]!.hgetall(`${prefix}:quota:caps:slack:T1`)).toEqual({ userDailyUsd: '2500000000', 'userDailyUsd:by': 'slack:U1', 'userDailyUsd:at': String(NOON) });
  });
});
