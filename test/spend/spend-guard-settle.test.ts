import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PictorClient, PRICE_TABLE } from '../../src/index.js';
import { FileQuotaStore, SpendGuard, type QuotaStore } from '../../src/internal.js';
import type { JobSettlement } from '../../src/spend/job-ledger.js';
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
      const ended: JobSettlement[] = [];
      const guard = new SpendGuard({ store: held, limits: {}, userKey: 'cli:ann', scopeKey: 'cli', onEnded: (s) => ended.push(s) });
      const client = new PictorClient({ baseURL: emu.url, apiKey: DEV_API_KEY, onRequest: guard.onRequest });
      const request = { prompt: 'a harbour', quality: 'low', size: '1024x1024' } as const;

      let images = 0;
      if (stream) {
        for await (const event of client.generateStream({ ...request, partial_images: 0 })) if (event.type === 'image_generation.completed') images++;
      } else {
        images = (await client.generate(request)).data.length;
      }

      expect(images).toBe(1);
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
