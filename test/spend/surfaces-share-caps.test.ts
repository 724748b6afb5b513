import { afterAll, describe, expect, it } from 'vitest';
import { JobRunner, type JobRefusedError } from '../../bots/runner/index.js';
import { main } from '../../src/cli/main.js';
import { FileQuotaStore, RedisQuotaStore, type QuotaStore } from '../../src/internal.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { useEmulator } from '../helpers/emulator.js';
import { requester, useTempDirs } from '../helpers/runner-harness.js';
import { deleteKeys, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { PictorImage } from '../../nodes/nodes/PictorImage/PictorImage.node.js';
import { createHarness } from '../nodes/execute-harness.js';
import { NodeHelpers, NodeOperationError } from '../nodes/n8n-workflow.js';

// The emulator poses as the real service here: its jobs are the account's.
const emu = useEmulator({ identifyAsEmulator: false });
const newDir = useTempDirs();
const redis = testRedis();
const prefix = uniquePrefix('surfaces');
afterAll(async () => {
  if (redis.url) await deleteKeys(redis.url, prefix);
});

const LOW = 0.00636;

async function cli(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string }> {
  const out: string[] = [];
  const args = ['generate', '--prompt', 'a harbour', '--quality', 'low', '--size', '1024x1024', '--json', '--out', `${await newDir()}/`];
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

/** One item through the n8n node, its credential holding the same cap and ledger: `completed` or the item's error code. */
async function n8nItem(credentials: Record<string, unknown>): Promise<string> {
  const [out] = await createHarness({
    n8n: { NodeHelpers, NodeOperationError },
    nodeType: new PictorImage(),
    parameters: { operation: 'generate', prompt: 'a lighthouse', quality: 'low', size: '1024x1024' },
    items: [{ json: {} }],
    credentials: { apiKey: DEV_API_KEY, baseUrl: emu.url, ...credentials },
    onError: 'continueRegularOutput',
  }).run();
  const item = out![0]!;
  return item.binary?.data ? 'completed' : String(item.json.code);
}

describe('one account cap for the CLI, the chat bots and the n8n node', () => {
  it.skipIf(redis.skipReason)('holds across all three through one Redis: what the CLI spent, the bots and the node cannot spend again', async () => {
    const cap = 2.5 * LOW;
    const env = { PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, REDIS_URL: redis.url, PICTOR_REDIS_PREFIX: prefix, PICTOR_ACCOUNT_DAILY_USD: String(cap) };
    expect((await cli(env)).code).toBe(0);
    const store = await RedisQuotaStore.connect({ url: redis.url!, prefix });
    try {
      expect(await chatJob(store, cap)).toBe('completed');
      expect(await chatJob(store, cap)).toBe('budget_account_daily');
      const refused = await cli(env);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout)).toMatchObject({ code: 'budget_account_daily' });
      expect(await store.spentToday('account', Date.now())).toBeCloseTo(2 * LOW, 9);
      expect(await n8nItem({ redisUrl: redis.url, redisPrefix: prefix, accountDailyUsd: String(cap) })).toBe('budget_account_daily');
    } finally {
      await store.close();
    }
  });

  it.skipIf(redis.skipReason)('lets exactly one of the CLI, a chat job and an n8n item racing for the last image through one Redis win', async () => {
    const racePrefix = uniquePrefix('surfaces-race');
    const cap = 1.5 * LOW;
    const env = { PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, REDIS_URL: redis.url, PICTOR_REDIS_PREFIX: racePrefix, PICTOR_ACCOUNT_DAILY_USD: String(cap) };
    const store = await RedisQuotaStore.connect({ url: redis.url!, prefix: racePrefix });
    try {
      const before = emu.emulator.stats().requests;
      const outcomes = await Promise.all([
        cli(env).then((r) => (r.code === 0 ? 'completed' : String((JSON.parse(r.stdout) as { code: string }).code))),
        chatJob(store, cap),
        n8nItem({ redisUrl: redis.url, redisPrefix: racePrefix, accountDailyUsd: String(cap) }),
      ]);
      expect(outcomes.filter((o) => o === 'completed')).toHaveLength(1);
      for (const refused of outcomes.filter((o) => o !== 'completed')) expect(refused).toMatch(/^budget_(exceeded|account_daily)$/);
      expect(emu.emulator.stats().requests - before).toBe(1);
      expect(await store.spentToday('account', Date.now())).toBeCloseTo(LOW, 9);
    } finally {
      await store.close();
      await deleteKeys(redis.url!, racePrefix);
    }
  });

  it('holds across all three through the ledger file in one data folder', async () => {
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
    expect(JSON.parse((await cli(env)).stdout)).toMatchObject({ code: 'budget_account_daily' });
    // Last: the node keeps its store of this ledger open for the rest of the process, as in n8n.
    expect(await n8nItem({ ledgerFolder: dir, accountDailyUsd: String(cap) })).toBe('budget_account_daily');
  });
});
