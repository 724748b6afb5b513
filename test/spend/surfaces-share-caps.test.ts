import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JobRunner, type JobRefusedError } from '../../bots/runner/index.js';
import { main } from '../../src/cli/main.js';
import { FileQuotaStore, RedisQuotaStore, type QuotaStore } from '../../src/index.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { useEmulator } from '../helpers/emulator.js';
import { requester, useTempDirs } from '../helpers/runner-harness.js';
import { deleteKeys, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const emu = useEmulator();
const newDir = useTempDirs();
const redis = testRedis();
const prefix = uniquePrefix('surfaces');
afterAll(async () => {
  if (redis.url) await deleteKeys(redis.url, prefix);
});

const LOW = 0.00636;

async function cli(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string }> {
  const out: string[] = [];
  const args = ['generate', '--prompt', 'a harbour', '--quality', 'low', '--size', '1024x1024', '--json', '--out', `${await mkdtemp(join(tmpdir(), 'pictor-surfaces-'))}/`];
  const code = await main(args, env, { stdout: (l) => out.push(l), stderr: () => {} });
  return { code, stdout: out.join('\n') };
}

/** A chat job through the bots' runner on `store`, with the account's cap on top of no user cap. */
async function chatJob(store: QuotaStore, accountDailyUsd: number): Promise<string> {
  const runner = new JobRunner({ client: emu.client(), store, limits: { accountDailyUsd }, partialImages: 0, minUpdateIntervalMs: 0 });
  try {
    const handle = await runner.submit({ kind: 'generate', prompt: 'a boat', options: { quality: 'low', size: '1024x1024' }, requester: requester() }, () => {});
    return (await handle.done).type;
  } catch (error) {
    return (error as JobRefusedError).code;
  } finally {
    await runner.shutdown({ graceMs: 0 });
  }
}

describe('one account cap for the CLI and the chat bots', () => {
  it.skipIf(redis.skipReason)('holds across both through one Redis: what the CLI spent, the bots cannot spend again', async () => {
    const cap = 2.5 * LOW;
    const env = { PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, REDIS_URL: redis.url, PICTOR_REDIS_PREFIX: prefix, PICTOR_ACCOUNT_DAILY_USD: String(cap) };
    expect((await cli(env)).code).toBe(0);
    const store = await RedisQuotaStore.connect({ url: redis.url!, prefix });
    try {
      expect(await chatJob(store, cap)).toBe('completed');
      expect(await chatJob(store, cap)).toBe('budget_account_daily');
      const refused = await cli(env);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout)).toMatchObject({ code: 'budget_exceeded', cap: 'budget_account_daily' });
      expect(await store.spentToday('account', Date.now())).toBeCloseTo(2 * LOW, 9);
    } finally {
      await store.close();
    }
  });

  it('holds across both through the ledger file in one data folder', async () => {
    const dir = await newDir();
    const cap = 2.5 * LOW;
    const env = { PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: dir, PICTOR_ACCOUNT_DAILY_USD: String(cap) };
    expect((await cli(env)).code).toBe(0);
    const store = new FileQuotaStore({ dir });
    try {
      expect(await chatJob(store, cap)).toBe('completed');
      expect(await chatJob(store, cap)).toBe('budget_account_daily');
    } finally {
      await store.close();
    }
    expect(JSON.parse((await cli(env)).stdout)).toMatchObject({ code: 'budget_exceeded', cap: 'budget_account_daily' });
  });
});
