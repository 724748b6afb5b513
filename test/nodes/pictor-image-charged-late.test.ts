import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { PictorImage } from '../../nodes/nodes/PictorImage/PictorImage.node.js';
import { ledgerFor } from '../../nodes/nodes/PictorImage/spend-registry.js';
import { createEmulator, DEV_API_KEY, type Emulator, type EmulatorServer } from '../../src/emulator/index.js';
import { utcDay } from '../../src/spend/index.js';
import { createHarness, type HarnessOptions } from './execute-harness.js';
import { NodeHelpers, NodeOperationError, type INodeExecutionData } from './n8n-workflow.js';

/**
 * nodes/README.md, the `charged` field of an error's item: `null` "when the ledger has not taken it within 5 seconds
 * (a busy or unreachable ledger: it is tried again, and the images are never held for it)". Absent for a cap's refusal.
 * The node's own file ledger is held silent by holding its settle; time is fake (only setTimeout), so the 5 seconds are
 * the node's own wait, stepped through on purpose.
 */
let emulator: Emulator;
let server: EmulatorServer;
const folders: string[] = [];

beforeAll(async () => {
  // Posing as the real service: its jobs are the account's.
  emulator = createEmulator({ identifyAsEmulator: false });
  server = await emulator.listen({ port: 0 });
});
afterAll(async () => {
  await emulator.close();
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});
beforeEach(() => {
  emulator.configure({ latencyMs: 0, defaultPartialImages: 0 });
  emulator.reset();
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const node = new PictorImage();
const LOW = { operation: 'generate', quality: 'low', size: '1024x1024' };
/** The table price of one low 1024x1024 image. */
const ONE_IMAGE_USD = 0.00636;

async function ledgerFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'pictor-n8n-charged-'));
  folders.push(folder);
  return folder;
}

function run(prompt: string, credentials: Record<string, unknown>, options: Partial<HarnessOptions> = {}) {
  return createHarness({
    n8n: { NodeHelpers, NodeOperationError },
    nodeType: node,
    parameters: () => ({ ...LOW, prompt, n: 2, options: { stream: true } }),
    items: [{ json: {} } satisfies INodeExecutionData],
    credentials: { apiKey: DEV_API_KEY, baseUrl: server.url, ...credentials },
    onError: 'continueRegularOutput',
    ...options,
  }).run();
}

type LedgerFile = { spent: Record<string, Record<string, number>>; reservations: Record<string, unknown> };

async function ledgerFile(folder: string): Promise<LedgerFile> {
  return JSON.parse(await readFile(join(folder, 'quota-ledger.json'), 'utf8')) as LedgerFile;
}

describe('the Pictor Image node when its ledger does not take a failed request’s settle', () => {
  it('outputs the image that came and the error’s item with charged null after 5 seconds, then charges the ledger once when it answers', async () => {
    const folder = await ledgerFolder();
    const store = await ledgerFor({ limits: {}, ledgerFolder: folder, ledger: 'account' });
    // The ledger's settle does not answer until `answer()`; every call of it is counted.
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let entered!: () => void;
    const settleEntered = new Promise<void>((resolve) => (entered = resolve));
    const { settle } = store;
    const settles = vi.spyOn(store, 'settle').mockImplementation(async (jobId, usd, info) => {
      entered();
      await answered;
      return settle.call(store, jobId, usd, info);
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    emulator.injectFault('stream_error_event');

    let out: INodeExecutionData[] | undefined;
    const running = run('two lighthouses', { accountDailyUsd: '1', ledgerFolder: folder }).then(([items]) => (out = items));
    await settleEntered;
    // One turn of the event loop: the node has taken the request's failure and waits for the ledger.
    await new Promise((resolve) => setImmediate(resolve));
    // Just short of the 5 seconds the node waits: still waiting for the ledger.
    await vi.advanceTimersByTimeAsync(4_999);
    expect(out).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await vi.waitFor(() => expect(out).toBeDefined(), { timeout: 5_000 });
    await running;

    expect(out).toHaveLength(2);
    expect(out![0]!.binary?.data).toBeDefined();
    expect(out![0]!.json.cost).toMatchObject({ usd: ONE_IMAGE_USD });
    expect(out![1]!.json).toMatchObject({ code: 'server_error', itemIndex: 0 });
    expect(out![1]!.json).toHaveProperty('charged', null);
    // Not taken yet: the job still holds its reservation and nothing is spent.
    const before = await ledgerFile(folder);
    expect(Object.keys(before.reservations)).toHaveLength(1);
    expect(before.spent[utcDay(Date.now())]?.account ?? 0).toBe(0);

    // The ledger answers after further tries have timed out: the charge lands, once.
    await vi.advanceTimersByTimeAsync(20_000);
    answer();
    vi.useRealTimers();
    await vi.waitFor(async () => expect((await ledgerFile(folder)).reservations).toEqual({}), { timeout: 5_000 });
    expect((await ledgerFile(folder)).spent[utcDay(Date.now())]?.account).toBeCloseTo(ONE_IMAGE_USD, 9);
    expect(settles).toHaveBeenCalledTimes(1);
  });

  it('says no charged on the item of a cap’s refusal, and returns it without waiting for the ledger', async () => {
    const folder = await ledgerFolder();
    const store = await ledgerFor({ limits: {}, ledgerFolder: folder, ledger: 'account' });
    const settles = vi.spyOn(store, 'settle');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    // Two images at most 0.0127 USD: over a cap of 0.01 before anything is sent. No fake time passes, so an item that
    // waited for the ledger would never come.
    let out: INodeExecutionData[] | undefined;
    void run('two lighthouses over the cap', { accountDailyUsd: '0.01', ledgerFolder: folder }).then(([items]) => (out = items));
    await vi.waitFor(() => expect(out, 'the refusal’s item, without fake time passing').toBeDefined(), { timeout: 5_000 });
    expect(out).toHaveLength(1);
    expect(out![0]!.json).toMatchObject({ code: 'budget_account_daily', itemIndex: 0 });
    expect(out![0]!.json).not.toHaveProperty('charged');
    expect(emulator.requests).toHaveLength(0);
    expect(settles).not.toHaveBeenCalled();
  });
});

describe('the Pictor Image node without On Error when the ledger holds a failed item’s charge', () => {
  it('fails the node at once, without waiting for the ledger to take the charge it would not show', async () => {
    const folder = await ledgerFolder();
    const store = await ledgerFor({ limits: {}, ledgerFolder: folder, ledger: 'account' });
    // The ledger's settle does not answer until `answer()`.
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const { settle } = store;
    vi.spyOn(store, 'settle').mockImplementation(async (jobId, usd, info) => {
      await answered;
      return settle.call(store, jobId, usd, info);
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    emulator.injectFault('stream_error_event');

    // No fake time passes, so a node that waited for the ledger (up to 5 seconds) would never fail.
    let failure: unknown;
    void run('two lighthouses', { accountDailyUsd: '1', ledgerFolder: folder }, { onError: undefined }).then(
      () => (failure = 'no failure'),
      (error: unknown) => (failure = error),
    );
    await vi.waitFor(() => expect(failure, 'the node’s failure, without fake time passing').toBeDefined(), { timeout: 5_000 });
    expect(failure).toMatchObject({ context: { code: 'server_error', itemIndex: 0 } });
    expect((failure as { context: Record<string, unknown> }).context).not.toHaveProperty('charged');

    // The ledger answers later: the charge still lands.
    answer();
    vi.useRealTimers();
    await vi.waitFor(async () => expect((await ledgerFile(folder)).reservations).toEqual({}), { timeout: 5_000 });
    expect((await ledgerFile(folder)).spent[utcDay(Date.now())]?.account).toBeCloseTo(ONE_IMAGE_USD, 9);
  });

  it('stops the items still queued, so none is sent while the ledger holds that charge', async () => {
    const folder = await ledgerFolder();
    const store = await ledgerFor({ limits: {}, ledgerFolder: folder, ledger: 'account' });
    // The jobs in item order, as they are reserved; the first one's settle does not answer until `answer()`.
    const jobs: string[] = [];
    const { reserve, settle } = store;
    vi.spyOn(store, 'reserve').mockImplementation(async (input) => {
      jobs.push(input.jobId);
      return reserve.call(store, input);
    });
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const ended: { jobId: string; how: string }[] = [];
    vi.spyOn(store, 'settle').mockImplementation(async (jobId, usd, info) => {
      ended.push({ jobId, how: 'settled' });
      if (jobId === jobs[0]) await answered;
      return settle.call(store, jobId, usd, info);
    });
    const { release } = store;
    vi.spyOn(store, 'release').mockImplementation(async (jobId) => {
      ended.push({ jobId, how: 'released' });
      return release.call(store, jobId);
    });
    // The first item breaks after its first image; the second waits for the one request slot.
    emulator.injectFault('stream_error_event');
    const prompts = ['first breaks', 'second queued'];
    const running = createHarness({
      n8n: { NodeHelpers, NodeOperationError },
      nodeType: node,
      parameters: (i) => (i === 0 ? { ...LOW, prompt: prompts[0], n: 2, options: { stream: true, maxConcurrent: 1 } } : { ...LOW, prompt: prompts[1], options: { maxConcurrent: 1 } }),
      items: prompts.map((): INodeExecutionData => ({ json: {} })),
      credentials: { apiKey: DEV_API_KEY, baseUrl: server.url, accountDailyUsd: '1', ledgerFolder: folder },
    }).run();
    const failed = running.then(
      () => undefined,
      (error: unknown) => error,
    );

    // The second item's job ends while the first one's charge is still unknown (its settle held): released, never sent.
    await vi.waitFor(() => expect(ended.map((e) => e.jobId)).toContain(jobs[1]), { timeout: 5_000 });
    expect(ended.find((e) => e.jobId === jobs[1])?.how).toBe('released');
    answer();
    expect(await failed).toMatchObject({ context: { code: 'server_error', itemIndex: 0 } });
    expect(emulator.requests.map((r) => r.fields?.prompt)).toEqual([prompts[0]]);
  });
});
