import { once } from 'node:events';
import net from 'node:net';
import { join } from 'node:path';
import { Agent, interceptors, Pool, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { decodeImages, PictorClient, PRICE_TABLE } from '../../src/index.js';
import { FileQuotaStore, SpendGuard, type SpendLimits } from '../../src/internal.js';
import type { SpendWatch } from '../../src/spend/spend-guard.js';
import type { HookedRequest } from '../../src/client/request-hook.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { useEmulator } from '../helpers/emulator.js';
import { misbehavingServer } from '../client/misbehaving-server.js';
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

const stores: FileQuotaStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

/** Every guard of the test: the caller gets its result or error without waiting for the settle, so a test that reads the ledger waits for it. */
const guards: SpendGuard[] = [];
const everySettle = () => Promise.all(guards.map((guard) => guard.settlesUnderWay()));

/** A ledger in a folder of its own, closed after the test. */
async function ledger(Store: typeof FileQuotaStore = FileQuotaStore): Promise<FileQuotaStore> {
  const store = new Store({ dir: await newDir() });
  stores.push(store);
  return store;
}

/** A client of the emulator whose every request goes through a spend guard on `store`, as the CLI's do. */
function guardedClient(store: FileQuotaStore, { userKey = 'cli:test', limits = {} }: { userKey?: string; limits?: SpendLimits } = {}): PictorClient {
  const guard = new SpendGuard({ store, limits, userKey, scopeKey: 'cli' });
  guards.push(guard);
  return new PictorClient({ baseURL: emu.url, apiKey: DEV_API_KEY, onRequest: guard.onRequest });
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
    class BrokenMark extends FileQuotaStore {
      override markSent(): Promise<void> {
        return Promise.reject(new Error('disk full'));
      }
    }
    const store = await ledger(BrokenMark);
    const client = guardedClient(store, { limits: { accountDailyUsd: 1 } });
    await expect(client.generate({ prompt: 'x', quality: 'low' })).rejects.toThrow('disk full');
    await everySettle();
    expect(emu.emulator.requests).toHaveLength(0);
    expect(await store.spentToday('account', Date.now())).toBe(0);
  });

  it('hands on the bytes the client decoded to check each image, streamed or not: nothing is decoded again', async () => {
    const client = guardedClient(await ledger());
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
  });

  it('keeps the estimate of a streamed job whose reader stops after the request was sent', async () => {
    const store = await ledger();
    emu.emulator.configure({ latencyMs: 2000 });
    const client = guardedClient(store);
    const stream = client.generateStream({ prompt: 'x', quality: 'low', size: '1024x1024', partial_images: 1 });
    for await (const _event of stream) break; // the first partial arrived: the request was sent, the reader leaves
    await everySettle();
    expect(await store.spentToday('account', Date.now())).toBeCloseTo(0.00636, 9);
  });

  for (const { fault, answered } of [
    { fault: 'rate_limited', answered: 'refused (429)' },
    { fault: 'service_unavailable', answered: 'answered with a 5xx' },
  ] as const) {
    it(`releases a job cancelled while it waits to retry an attempt the service ${answered}: nothing reached the service that bills`, async () => {
      const store = await ledger();
      const client = guardedClient(store, { userKey: 'cli:someone' });
      emu.emulator.injectFault(fault, { retryAfterMs: 60_000 });
      const controller = new AbortController();
      const job = client.generate({ prompt: 'a harbour', quality: 'low' }, { signal: controller.signal, timeoutMs: 120_000, onRetry: () => controller.abort() });
      await expect(job).rejects.toMatchObject({ code: 'aborted' });
      await everySettle();
      expect(emu.emulator.requests).toHaveLength(1);
      expect(await store.activeJobs()).toEqual([]);
      expect(await store.usage({})).toEqual([]);
      expect(await store.spentToday('account', Date.now())).toBe(0);
    });
  }

  it('charges the estimate of a job cancelled after its retried attempt went out: the second attempt may be billed', async () => {
    const store = await ledger();
    emu.emulator.configure({ latencyMs: 60_000 });
    const client = guardedClient(store, { userKey: 'cli:someone' });
    emu.emulator.injectFault('service_unavailable', { retryAfterMs: 10 });
    const controller = new AbortController();
    const job = client.generate({ prompt: 'a harbour', quality: 'low', size: '1024x1024' }, { signal: controller.signal, timeoutMs: 120_000 });
    // The retry goes out after the 503, a reservation written to disk and a new connection: on a busy machine that
    // takes longer than vi.waitFor's default second, so the wait is bounded by the test's own time, not by that.
    await vi.waitFor(() => expect(emu.emulator.requests).toHaveLength(2), { timeout: 15_000 });
    controller.abort();
    await expect(job).rejects.toMatchObject({ code: 'aborted' });
    await everySettle();
    expect(await store.activeJobs()).toEqual([]);
    expect(await store.spentToday('account', Date.now())).toBeCloseTo(0.00636, 9);
    expect(await store.usage({})).toMatchObject([{ basis: 'estimate' }]);
  });

  it('releases a job whose time ran out before any byte of its body left: the client says nothing left, and nothing is charged', async () => {
    // The total timeout's own clock is faked and moved on once the service has taken the connection: no wait on time.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    const store = await ledger();
    // A service that takes the TCP connection and never answers the TLS handshake: no byte of the request leaves.
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => sockets.add(socket.on('error', () => {})));
    const taken = once(silent, 'connection');
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const origin = `https://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    const pool = new Pool(origin);
    try {
      const guard = new SpendGuard({ store, limits: {}, userKey: 'cli:someone', scopeKey: 'cli' });
      guards.push(guard);
      const client = new PictorClient({ baseURL: origin, apiKey: DEV_API_KEY, maxRetries: 0, timeoutMs: 60_000, dispatcher: pool, onRequest: guard.onRequest });
      const job = client.generate({ prompt: 'a harbour', quality: 'low' });
      await taken;
      vi.advanceTimersByTime(60_000);
      // undici lets the request go once its handshake ends: the service drops it, after the timeout struck.
      for (const socket of sockets) socket.destroy();
      await expect(job).rejects.toMatchObject({ code: 'timeout', mayBeBilled: false });
      await everySettle();
      vi.useRealTimers();
      expect(await store.activeJobs()).toEqual([]);
      expect(await store.usage({})).toEqual([]);
      expect(await store.spentToday('account', Date.now())).toBe(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await Promise.all([pool.close(), new Promise((resolve) => silent.close(resolve))]);
    }
  });


  it('releases a job cancelled before any byte of its body left: the client says nothing left, and nothing is charged', async () => {
    const store = await ledger();
    // A service that takes the TCP connection and never answers the TLS handshake: no byte of the request leaves.
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => sockets.add(socket.on('error', () => {})));
    const taken = once(silent, 'connection');
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const origin = `https://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    const pool = new Pool(origin);
    try {
      const guard = new SpendGuard({ store, limits: {}, userKey: 'cli:someone', scopeKey: 'cli' });
      guards.push(guard);
      const watches: SpendWatch[] = [];
      const onRequest = async (request: HookedRequest) => {
        const watch = await guard.onRequest(request);
        watches.push(watch);
        return watch;
      };
      const client = new PictorClient({ baseURL: origin, apiKey: DEV_API_KEY, maxRetries: 0, dispatcher: pool, onRequest });
      const controller = new AbortController();
      const job = client.generate({ prompt: 'a harbour', quality: 'low' }, { signal: controller.signal });
      await taken;
      controller.abort();
      // undici lets the request go once its handshake ends: the service drops it, after the cancel.
      for (const socket of sockets) socket.destroy();
      await expect(job).rejects.toMatchObject({ code: 'aborted', mayBeBilled: false });
      await everySettle();
      expect(await Promise.all(watches.map((watch) => watch.settled))).toEqual([expect.objectContaining({ action: 'released', usd: 0, released: 'not_sent' })]);
      expect(await store.activeJobs()).toEqual([]);
      expect(await store.usage({})).toEqual([]);
      expect(await store.spentToday('account', Date.now())).toBe(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await Promise.all([pool.close(), new Promise((resolve) => silent.close(resolve))]);
    }
  });

  for (const [name, dispatcher] of [
    ['a pool', (origin: string) => new Pool(origin)],
    ['an agent composed with the retry interceptor', () => new Agent().compose(interceptors.retry())],
  ] as const) {
    it(`releases a job cancelled while its "sent" mark was being recorded, through ${name}: the request never went out`, async () => {
      const store = await ledger();
      const controller = new AbortController();
      const markSent = store.markSent.bind(store);
      vi.spyOn(store, 'markSent').mockImplementation(async (jobId) => {
        controller.abort();
        await markSent(jobId);
      });
      const through: Dispatcher = dispatcher(emu.url);
      try {
        const guard = new SpendGuard({ store, limits: {}, userKey: 'cli:someone', scopeKey: 'cli' });
        guards.push(guard);
        const client = new PictorClient({ baseURL: emu.url, apiKey: DEV_API_KEY, maxRetries: 0, dispatcher: through, onRequest: guard.onRequest });
        const before = emu.emulator.requests.length;
        await expect(client.generate({ prompt: 'a harbour', quality: 'low', size: '1024x1024' }, { signal: controller.signal })).rejects.toMatchObject({
          code: 'aborted',
          mayBeBilled: false,
        });
        await everySettle();
        expect(emu.emulator.requests).toHaveLength(before);
        expect(await store.activeJobs()).toEqual([]);
        expect(await store.usage({})).toEqual([]);
        expect(await store.spentToday('account', Date.now())).toBe(0);
      } finally {
        await through.close();
      }
    });

    it(`charges the estimate of a job cancelled after its body left, through ${name}`, async () => {
      const store = await ledger();
      // A service that reads the whole body and never answers.
      let bodyRead!: () => void;
      const read = new Promise<void>((resolve) => (bodyRead = resolve));
      const server = await misbehavingServer(async (req) => {
        await req.body();
        bodyRead();
      });
      const through: Dispatcher = dispatcher(server.url);
      try {
        const guard = new SpendGuard({ store, limits: {}, userKey: 'cli:someone', scopeKey: 'cli' });
        guards.push(guard);
        const client = new PictorClient({ baseURL: server.url, apiKey: DEV_API_KEY, maxRetries: 0, dispatcher: through, onRequest: guard.onRequest });
        const controller = new AbortController();
        const job = client.generate({ prompt: 'a harbour', quality: 'low', size: '1024x1024' }, { signal: controller.signal });
        await read;
        controller.abort();
        await expect(job).rejects.toMatchObject({ code: 'aborted', mayBeBilled: true });
        await everySettle();
        expect(await store.activeJobs()).toEqual([]);
        expect(await store.usage({})).toMatchObject([{ costUsd: PRICE_TABLE['1024x1024'].low, basis: 'estimate', outcome: 'cancelled' }]);
        expect(await store.spentToday('account', Date.now())).toBeCloseTo(PRICE_TABLE['1024x1024'].low, 9);
      } finally {
        await through.close();
        await server.close();
      }
    });
  }

  for (const [name, dispatcher] of [
    ['a pool', (origin: string) => new Pool(origin)],
    ['an agent composed with the retry interceptor', () => new Agent().compose(interceptors.retry())],
    ['an agent composed with the dns interceptor', () => new Agent().compose(interceptors.dns())],
  ] as const) {
    it(`charges the estimate of a job whose time ran out after its body left, through ${name}`, async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      onTestFinished(() => void vi.useRealTimers());
      const store = await ledger();
      // A service that reads the whole body and never answers.
      let bodyRead!: () => void;
      const read = new Promise<void>((resolve) => (bodyRead = resolve));
      const server = await misbehavingServer(async (req) => {
        await req.body();
        bodyRead();
      });
      const through: Dispatcher = dispatcher(server.url);
      try {
        const guard = new SpendGuard({ store, limits: {}, userKey: 'cli:someone', scopeKey: 'cli' });
        guards.push(guard);
        const client = new PictorClient({ baseURL: server.url, apiKey: DEV_API_KEY, maxRetries: 0, timeoutMs: 60_000, dispatcher: through, onRequest: guard.onRequest });
        const job = client.generate({ prompt: 'a harbour', quality: 'low', size: '1024x1024' });
        await read;
        vi.advanceTimersByTime(60_000);
        await expect(job).rejects.toMatchObject({ code: 'timeout', mayBeBilled: true });
        await everySettle();
        vi.useRealTimers();
        expect(await store.activeJobs()).toEqual([]);
        expect(await store.usage({})).toMatchObject([{ costUsd: PRICE_TABLE['1024x1024'].low, basis: 'estimate' }]);
        expect(await store.spentToday('account', Date.now())).toBeCloseTo(PRICE_TABLE['1024x1024'].low, 9);
      } finally {
        await through.close();
        await server.close();
      }
    });
  }
});
