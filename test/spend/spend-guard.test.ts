import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { decodeImages, PictorClient } from '../../src/index.js';
import { FileQuotaStore, SpendGuard } from '../../src/internal.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { useEmulator } from '../helpers/emulator.js';
import { useTempDirs } from '../helpers/runner-harness.js';

// The emulator poses as the real service here: its jobs are the account's.
const emu = useEmulator({ identifyAsEmulator: false });
const newDir = useTempDirs();

async function pictor(argv: string[], environment: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, environment, { stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

async function spentByAccount(dir: string): Promise<number> {
  const store = new FileQuotaStore({ dir });
  try {
    return await store.spentToday('account', Date.now());
  } finally {
    await store.close();
  }
}

describe('the CLI through the spend guard', () => {
  it('refuses a job past the account’s daily cap with budget_account_daily, naming the cap, what is left and when it resets, and sends nothing', async () => {
    const data = await newDir();
    const out = await newDir();
    const env = { PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: data, PICTOR_ACCOUNT_DAILY_USD: '0.01' };
    const args = ['generate', '--prompt', 'a harbour', '--quality', 'low', '--size', '1024x1024', '--out', `${out}/`];

    expect((await pictor(args, env)).code).toBe(0);
    expect(await spentByAccount(data)).toBeCloseTo(0.00636, 9);

    const refused = await pictor([...args, '--json'], env);
    expect(refused.code).toBe(1);
    const answer = JSON.parse(refused.stdout);
    expect(answer).toMatchObject({ ok: false, code: 'budget_account_daily', limitUsd: 0.01 });
    expect(answer.leftUsd).toBeCloseTo(0.00364, 9);
    expect(answer.resetsAt).toMatch(/T00:00:00\.000Z$/);
    expect(refused.stderr).toMatch(/Nothing was sent/);
    expect(emu.emulator.requests).toHaveLength(1);
  });

  it('charges a streamed job what it really cost, and the monthly cap holds too', async () => {
    const data = await newDir();
    const out = await newDir();
    const env = { PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: data, PICTOR_ACCOUNT_MONTHLY_USD: '0.015' };
    const args = ['generate', '--prompt', 'a harbour', '--quality', 'low', '--size', '1024x1024', '--stream', '--partial-images', '1', '--out', `${out}/`];
    expect((await pictor(args, env)).code).toBe(0);
    expect((await pictor(args, env)).code).toBe(0);
    expect(await spentByAccount(data)).toBeCloseTo(2 * 0.00636, 9);
    const refused = await pictor([...args, '--json'], env);
    expect(JSON.parse(refused.stdout)).toMatchObject({ code: 'budget_account_monthly' });
    expect(emu.emulator.requests).toHaveLength(2);
  });

  it('releases the reservation when the service refuses the request, so nothing is counted', async () => {
    const data = await newDir();
    const env = { PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: 'wrong-key', PICTOR_DATA_DIR: data, PICTOR_ACCOUNT_DAILY_USD: '1' };
    const { code } = await pictor(['generate', '--prompt', 'x', '--quality', 'low', '--out', `${await newDir()}/`], env);
    expect(code).toBe(1);
    expect(await spentByAccount(data)).toBe(0);
  });

  it('records a paid job in the ledger even when no account cap is set and no Redis is shared', async () => {
    const data = join(await newDir(), 'made-on-first-job');
    const env = { PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: data };
    expect((await pictor(['generate', '--prompt', 'x', '--quality', 'low', '--out', `${await newDir()}/`], env)).code).toBe(0);
    expect(await spentByAccount(data)).toBeGreaterThan(0);
  });
});

describe('the spend guard as the client’s request hook', () => {
  it('does not send a request whose "sent" mark could not be recorded, and gives its reservation back', async () => {
    const dir = await newDir();
    class BrokenMark extends FileQuotaStore {
      override markSent(): Promise<void> {
        return Promise.reject(new Error('disk full'));
      }
    }
    const store = new BrokenMark({ dir });
    try {
      const guard = new SpendGuard({ store, limits: { accountDailyUsd: 1 }, userKey: 'cli:test', scopeKey: 'cli' });
      const client = new PictorClient({ baseURL: emu.url, apiKey: DEV_API_KEY, onRequest: guard.onRequest });
      await expect(client.generate({ prompt: 'x', quality: 'low' })).rejects.toThrow('disk full');
      expect(emu.emulator.requests).toHaveLength(0);
      expect(await store.spentToday('account', Date.now())).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('hands on the bytes the client decoded to check each image, streamed or not: nothing is decoded again', async () => {
    const dir = await newDir();
    const store = new FileQuotaStore({ dir });
    try {
      const guard = new SpendGuard({ store, limits: {}, userKey: 'cli:test', scopeKey: 'cli' });
      const client = new PictorClient({ baseURL: emu.url, apiKey: DEV_API_KEY, onRequest: guard.onRequest });
      const results = [
        await client.generate({ prompt: 'x', n: 2, quality: 'low' }),
        await client.generateStream({ prompt: 'y', n: 2, quality: 'low', partial_images: 1 }).finalResult(),
      ];
      const from = vi.spyOn(Buffer, 'from');
      try {
        for (const result of results) expect(decodeImages(result)).toHaveLength(2);
        expect(from.mock.calls.filter((args) => (args as unknown[])[1] === 'base64')).toHaveLength(0);
      } finally {
        from.mockRestore();
      }
    } finally {
      await store.close();
    }
  });

  it('keeps the estimate of a streamed job whose reader stops after the request was sent', async () => {
    const dir = await newDir();
    const store = new FileQuotaStore({ dir });
    try {
      emu.emulator.configure({ latencyMs: 2000 });
      const guard = new SpendGuard({ store, limits: {}, userKey: 'cli:test', scopeKey: 'cli' });
      const client = new PictorClient({ baseURL: emu.url, apiKey: DEV_API_KEY, onRequest: guard.onRequest });
      const stream = client.generateStream({ prompt: 'x', quality: 'low', size: '1024x1024', partial_images: 1 });
      for await (const _event of stream) break; // the first partial arrived: the request was sent, the reader leaves
      expect(await store.spentToday('account', Date.now())).toBeCloseTo(0.00636, 9);
    } finally {
      await store.close();
    }
  });

  it('releases a job cancelled while it waits to retry an attempt the service refused (429): nothing reached the service that bills', async () => {
    const dir = await newDir();
    const store = new FileQuotaStore({ dir });
    try {
      const guard = new SpendGuard({ store, limits: {}, userKey: 'cli:someone', scopeKey: 'cli' });
      const client = new PictorClient({ baseURL: emu.url, apiKey: DEV_API_KEY, onRequest: guard.onRequest });
      emu.emulator.injectFault('rate_limited', { retryAfterMs: 60_000 });
      const controller = new AbortController();
      const job = client.generate({ prompt: 'a harbour', quality: 'low' }, { signal: controller.signal, timeoutMs: 120_000, onRetry: () => controller.abort() });
      await expect(job).rejects.toMatchObject({ code: 'aborted' });
      expect(emu.emulator.requests).toHaveLength(1);
      expect(await store.activeJobs()).toEqual([]);
      expect(await store.usage({})).toEqual([]);
      expect(await store.spentToday('account', Date.now())).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('releases a job cancelled while it waits to retry an attempt the service answered with a 5xx: nothing reached the service that bills', async () => {
    const dir = await newDir();
    const store = new FileQuotaStore({ dir });
    try {
      const guard = new SpendGuard({ store, limits: {}, userKey: 'cli:someone', scopeKey: 'cli' });
      const client = new PictorClient({ baseURL: emu.url, apiKey: DEV_API_KEY, onRequest: guard.onRequest });
      emu.emulator.injectFault('service_unavailable', { retryAfterMs: 60_000 });
      const controller = new AbortController();
      const job = client.generate({ prompt: 'a harbour', quality: 'low' }, { signal: controller.signal, timeoutMs: 120_000, onRetry: () => controller.abort() });
      await expect(job).rejects.toMatchObject({ code: 'aborted' });
      expect(emu.emulator.requests).toHaveLength(1);
      expect(await store.activeJobs()).toEqual([]);
      expect(await store.usage({})).toEqual([]);
      expect(await store.spentToday('account', Date.now())).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('charges the estimate of a job cancelled after its retried attempt went out: the second attempt may be billed', async () => {
    const dir = await newDir();
    const store = new FileQuotaStore({ dir });
    try {
      emu.emulator.configure({ latencyMs: 60_000 });
      const guard = new SpendGuard({ store, limits: {}, userKey: 'cli:someone', scopeKey: 'cli' });
      const client = new PictorClient({ baseURL: emu.url, apiKey: DEV_API_KEY, onRequest: guard.onRequest });
      emu.emulator.injectFault('service_unavailable', { retryAfterMs: 10 });
      const controller = new AbortController();
      const job = client.generate({ prompt: 'a harbour', quality: 'low', size: '1024x1024' }, { signal: controller.signal, timeoutMs: 120_000 });
      await vi.waitFor(() => expect(emu.emulator.requests).toHaveLength(2));
      controller.abort();
      await expect(job).rejects.toMatchObject({ code: 'aborted' });
      expect(await store.activeJobs()).toEqual([]);
      expect(await store.spentToday('account', Date.now())).toBeCloseTo(0.00636, 9);
      expect(await store.usage({})).toMatchObject([{ basis: 'estimate' }]);
    } finally {
      await store.close();
    }
  });
});
