import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PictorClient, PRICE_TABLE } from '../../src/index.js';
import { FileQuotaStore, SpendGuard, type QuotaStore } from '../../src/internal.js';
import type { JobSettlement } from '../../src/spend/job-ledger.js';
import type { SpendWatch } from '../../src/spend/spend-guard.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { useEmulator } from '../helpers/emulator.js';

const emu = useEmulator({ identifyAsEmulator: false });
const LOW = PRICE_TABLE['1024x1024'].low;

const dirs: string[] = [];
const stores: FileQuotaStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A file ledger whose settles wait (its lock held by another process) until `open()`. */
async function heldLedger() {
  const dir = await mkdtemp(join(tmpdir(), 'pictor-guard-'));
  dirs.push(dir);
  const store = new FileQuotaStore({ dir });
  stores.push(store);
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  const held = new Proxy(store, {
    get(target, key) {
      if (key === 'settle') return async (...args: Parameters<QuotaStore['settle']>) => (await opened, target.settle(...args));
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store, held, open };
}

describe('the spend guard while the ledger holds its settle', () => {
  for (const stream of [false, true]) {
    it(`hands the caller the paid image${stream ? ' of a stream' : ''} at once, and the settle charges it once the ledger answers`, async () => {
      const { store, held, open } = await heldLedger();
      const guard = new SpendGuard({ store: held, limits: {}, userKey: 'cli:ann', scopeKey: 'cli' });
      const watches: SpendWatch[] = [];
      const client = new PictorClient({ baseURL: emu.url, apiKey: DEV_API_KEY, onRequest: async (request) => keep(watches, await guard.onRequest(request)) });
      const request = { prompt: 'a harbour', quality: 'low', size: '1024x1024' } as const;

      let images = 0;
      if (stream) {
        for await (const event of client.generateStream({ ...request, partial_images: 0 })) if (event.type === 'image_generation.completed') images++;
      } else {
        images = (await client.generate(request)).data.length;
      }

      expect(images).toBe(1);
      const ended: JobSettlement[] = [];
      void watches[0]!.settled!.then((settlement) => ended.push(settlement));
      await Promise.resolve();
      expect(ended).toEqual([]);
      expect(await store.activeJobs()).toEqual([expect.objectContaining({ sent: true })]);

      open();
      await guard.settlesUnderWay();

      expect(ended).toEqual([expect.objectContaining({ action: 'settled', usd: LOW, recorded: true })]);
      expect(await store.activeJobs()).toEqual([]);
      expect(await store.usage({})).toEqual([expect.objectContaining({ costUsd: LOW, basis: 'table', outcome: 'completed' })]);
    });
  }
});

function keep(watches: SpendWatch[], watch: SpendWatch): SpendWatch {
  watches.push(watch);
  return watch;
}

describe("the spend guard's watch of a job", () => {
  it('says how the ledger ended the job from the moment the caller has its result, not before the job ended', async () => {
    const { held, open } = await heldLedger();
    const guard = new SpendGuard({ store: held, limits: {}, userKey: 'cli:ann', scopeKey: 'cli' });
    const watches: SpendWatch[] = [];
    const client = new PictorClient({
      baseURL: emu.url,
      apiKey: DEV_API_KEY,
      onRequest: async (request) => {
        const watch = keep(watches, await guard.onRequest(request));
        // Reserved, not ended: no settle yet.
        expect(watch.settled).toBeUndefined();
        return watch;
      },
    });
    await client.generate({ prompt: 'a harbour', quality: 'low' });
    const { settled } = watches[0]!;
    expect(settled).toBeInstanceOf(Promise);
    open();
    expect(await settled).toMatchObject({ action: 'settled', usd: LOW, recorded: true });
    // The same answer each time it is asked.
    expect(watches[0]!.settled).toBe(settled);
  });

  it('has a settle for a job cancelled before it was sent (a release), and gives no watch to a job refused before it was reserved', async () => {
    const { store } = await heldLedger();
    const guard = new SpendGuard({ store, limits: { userDailyUsd: LOW * 1.5 }, userKey: 'cli:ann', scopeKey: 'cli' });
    const watches: SpendWatch[] = [];
    const client = new PictorClient({ baseURL: emu.url, apiKey: DEV_API_KEY, onRequest: async (request) => keep(watches, await guard.onRequest(request)) });
    const cancelled = new AbortController();
    cancelled.abort();
    await expect(client.generate({ prompt: 'a harbour', quality: 'low' }, { signal: cancelled.signal })).rejects.toMatchObject({ code: 'aborted' });
    expect(await watches[0]!.settled).toMatchObject({ action: 'released', usd: 0, released: 'not_sent' });

    await expect(client.generate({ prompt: 'a harbour', quality: 'low', n: 2 })).rejects.toMatchObject({ code: 'budget_user_daily' });
    expect(watches).toHaveLength(1);
  });
});
