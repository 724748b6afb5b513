import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { PictorImage } from '../../nodes/nodes/PictorImage/PictorImage.node.js';
import { defaultLedgerFolder, jobLedgerFor, ledgerFor } from '../../nodes/nodes/PictorImage/spend-registry.js';
import { createEmulator, DEV_API_KEY, type Emulator, type EmulatorServer } from '../../src/emulator/index.js';
import { FileLockBusyError } from '../../src/spend/file-lock.js';
import { LedgerBusyError, QuotaStoreClosedError, utcDay, utcMonth } from '../../src/spend/index.js';
import { spawnCli } from '../cli/run-cli.js';
import { misbehavingServer } from '../client/misbehaving-server.js';
import { makeImage } from '../helpers/images.js';
import { createHarness, type HarnessOptions } from './execute-harness.js';
import { NodeHelpers, NodeOperationError, type INodeExecutionData } from './n8n-workflow.js';

/**
 * The node spends the account's money like the CLI and the bots: through the
 * core's spend guard, against the Account Daily/Monthly Cap of its
 * credential, counted in a ledger (here the file ledger in the credential's
 * Ledger Folder; the Redis ledger is in pictor-image-redis.test.ts).
 */
let emulator: Emulator;
let server: EmulatorServer;
const folders: string[] = [];

beforeAll(async () => {
  // Posing as the real service: its jobs are the account's.
  emulator = createEmulator({ moderationMarker: 'forbidden', identifyAsEmulator: false });
  server = await emulator.listen({ port: 0 });
});
afterAll(async () => {
  await emulator.close();
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});
beforeEach(() => {
  emulator.configure({ latencyMs: 0 });
  emulator.reset();
});

const node = new PictorImage();
const LOW = { operation: 'generate', quality: 'low', size: '1024x1024' };
/** The table price of one low 1024x1024 image. */
const ONE_IMAGE_USD = 0.00636;

async function ledgerFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'pictor-n8n-ledger-'));
  folders.push(folder);
  return folder;
}

function run(prompts: string[], credentials: Record<string, unknown>, options: Partial<HarnessOptions> = {}) {
  return createHarness({
    n8n: { NodeHelpers, NodeOperationError },
    nodeType: node,
    parameters: (i) => ({ ...LOW, prompt: prompts[i] }),
    items: prompts.map((): INodeExecutionData => ({ json: {} })),
    credentials: { apiKey: DEV_API_KEY, baseUrl: server.url, ...credentials },
    onError: 'continueRegularOutput',
    ...options,
  }).run();
}

type LedgerFile = { spent: Record<string, Record<string, number>>; reservations: Record<string, unknown> };

/**
 * The ledger once the execution's settles have landed: the node outputs its items without waiting for them (a busy
 * ledger never holds a paid image back), so a reservation may still be there for a moment after `run` returns.
 */
async function ledgerOf(folder: string): Promise<LedgerFile> {
  const read = async () => JSON.parse(await readFile(join(folder, 'quota-ledger.json'), 'utf8')) as LedgerFile;
  try {
    return await vi.waitFor(async () => {
      const ledger = await read();
      expect(ledger.reservations).toEqual({});
      return ledger;
    });
  } catch {
    // A reservation that stays (a test that leaves one on purpose): the ledger as it is.
    return read();
  }
}

describe('the Pictor Image node under an account cap', () => {
  it('refuses the item that would pass the Account Daily Cap with code budget_account_daily, naming the cap and what is left, and sends nothing for it', async () => {
    const folder = await ledgerFolder();
    // Room for one image, not two. Every item is reserved before it waits for its turn, in item order.
    const [out] = await run(['first under the cap', 'second over the cap'], { accountDailyUsd: '0.01', ledgerFolder: folder });
    expect(out![0]!.binary?.data).toBeDefined();
    expect(out![1]!.json).toMatchObject({
      code: 'budget_account_daily',
      limitUsd: 0.01,
      leftUsd: expect.closeTo(0.01 - ONE_IMAGE_USD, 6),
      resetsAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/),
      description: expect.stringContaining('Nothing was sent'),
      itemIndex: 1,
    });
    expect(emulator.requests.map((r) => r.fields?.prompt)).toEqual(['first under the cap']);
  });

  it('settles what a request cost in the ledger, under the workflow and the whole account', async () => {
    const folder = await ledgerFolder();
    await run(['a paid fox'], { accountMonthlyUsd: '5', ledgerFolder: folder }, { workflowId: 'wf-42' });
    const ledger = await ledgerOf(folder);
    const now = Date.now();
    expect(ledger.spent[utcDay(now)]).toMatchObject({ 'n8n:wf-42': ONE_IMAGE_USD, n8n: ONE_IMAGE_USD, account: ONE_IMAGE_USD });
    expect(ledger.spent[utcMonth(now)]).toMatchObject({ account: ONE_IMAGE_USD });
    expect(ledger.reservations).toEqual({});
  });

  it("keeps the jobs of a Pictor emulator (it says so) in the emulator's ledger, not the account's", async () => {
    const folder = await ledgerFolder();
    const pictorEmulator = createEmulator();
    const at = await pictorEmulator.listen({ port: 0 });
    try {
      const credentials = { baseUrl: at.url, accountDailyUsd: '0.01', ledgerFolder: folder };
      const [out] = await run(['a rehearsed fox'], credentials);
      expect(out![0]!.binary?.data).toBeDefined();
    } finally {
      await pictorEmulator.close();
    }
    expect(existsSync(join(folder, 'quota-ledger.json'))).toBe(false);
    const rehearsal = await ledgerOf(join(folder, 'emulator'));
    expect(rehearsal.spent[utcDay(Date.now())]?.account).toBe(ONE_IMAGE_USD);
    // The account's cap is untouched: a job of the real service still fits.
    const [real] = await run(['a paid fox'], { accountDailyUsd: '0.01', ledgerFolder: folder });
    expect(real![0]!.binary?.data).toBeDefined();
  });

  it('without On Error, lets a request already at the service finish and counts it, stops the items still waiting, then fails the node', async () => {
    const folder = await ledgerFolder();
    // The first image takes a while; the second item is refused at once, while the first is at the service; the other two
    // wait for their turn under Images per Minute (a burst of 3 lets two go at once, the third a second later).
    emulator.configure({ latencyMs: 300 });
    const prompts = ['a slow fox', 'a forbidden fox', 'a waiting fox', 'another waiting fox'];
    const error: unknown = await run(prompts, { accountDailyUsd: '5', ledgerFolder: folder }, {
      onError: undefined,
      parameters: (i) => ({ ...LOW, prompt: prompts[i], options: { imagesPerMinute: 3 } }),
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ context: { itemIndex: 1, code: 'moderation_blocked' } });
    expect(emulator.requests.map((r) => [r.fields?.prompt, r.status])).toEqual([
      ['a slow fox', 200],
      ['a forbidden fox', 400],
    ]);
    const ledger = await ledgerOf(folder);
    expect(ledger.spent[utcDay(Date.now())]?.account).toBe(ONE_IMAGE_USD);
    expect(ledger.reservations).toEqual({});
    expect((error as { description: string }).description).toMatch(/1 other item got its images from the service: it is paid/);
  });

  it('without On Error, does not send an item still waiting for the ledger to mark it sent when another item fails meanwhile', async () => {
    const folder = await ledgerFolder();
    // The node's own ledger store for this folder (one per folder and process): its second item is held while the ledger
    // marks it sent until the first item, refused by the service, has ended and the node has taken that failure.
    const store = await ledgerFor({ limits: {}, ledgerFolder: folder, ledger: 'account' });
    const reserved: string[] = [];
    let firstEnded!: () => void;
    const firstEnd = new Promise<void>((resolve) => (firstEnded = resolve));
    const { reserve, markSent, release, settle } = store;
    const spies = [
      vi.spyOn(store, 'reserve').mockImplementation((input) => (reserved.push(input.jobId), reserve.call(store, input))),
      vi.spyOn(store, 'markSent').mockImplementation(async (jobId) => {
        if (jobId === reserved[1]) {
          await firstEnd;
          await new Promise((resolve) => setImmediate(resolve));
        }
        return markSent.call(store, jobId);
      }),
      vi.spyOn(store, 'release').mockImplementation(async (jobId) => {
        await release.call(store, jobId);
        if (jobId === reserved[0]) firstEnded();
      }),
      vi.spyOn(store, 'settle').mockImplementation(async (jobId, usd, info) => {
        const charged = await settle.call(store, jobId, usd, info);
        if (jobId === reserved[0]) firstEnded();
        return charged;
      }),
    ];
    try {
      // Items are reserved in item order: the forbidden one first.
      const error: unknown = await run(['a forbidden fox', 'a fox in the ledger queue'], { accountDailyUsd: '5', ledgerFolder: folder }, { onError: undefined }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ context: { itemIndex: 0, code: 'moderation_blocked' } });
      expect(emulator.requests.map((r) => [r.fields?.prompt, r.status])).toEqual([['a forbidden fox', 400]]);
      const ledger = await ledgerOf(folder);
      expect(ledger.spent[utcDay(Date.now())]?.account ?? 0).toBe(0);
      expect(ledger.reservations).toEqual({});
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('releases the reservation of a request the service refused, so it costs nothing and leaves the cap to the next execution', async () => {
    const folder = await ledgerFolder();
    const credentials = { accountDailyUsd: '0.01', ledgerFolder: folder };
    const [refused] = await run(['a forbidden fox'], credentials);
    expect(refused![0]!.json.code).toBe('moderation_blocked');
    const [next] = await run(['an allowed fox'], credentials);
    expect(next![0]!.binary?.data).toBeDefined();
    expect((await ledgerOf(folder)).spent[utcDay(Date.now())]?.account).toBe(ONE_IMAGE_USD);
  });

  it('fails every item before sending anything when a cap in the credential is not a number, naming the field', async () => {
    const [out] = await run(['a fox'], { accountDailyUsd: 'five dollars', ledgerFolder: await ledgerFolder() });
    expect(out![0]!.json.error).toMatch(/Account Daily Cap \(USD\) "five dollars" is not a number of US dollars/);
    expect(emulator.requests).toHaveLength(0);
  });

  it('never shows a key pasted into the Base URL or a cap field in the item’s error, while a plain wrong value is still quoted', async () => {
    const keys = ['sk-proj-AbCd1234EfGh5678IjKl9012MnOpQrSt', 'Zq8vR2mT5xW9kL3nP7bY4cF6hJ1dG0sA']; // an OpenAI-style key, one of no known shape
    for (const key of keys) {
      for (const [field, credentials] of [
        ['baseUrl', { baseUrl: key }],
        ['baseUrl', { baseUrl: `ftp://pictor:${key}@files.example.com` }],
        ['accountDailyUsd', { accountDailyUsd: key }],
        ['accountMonthlyUsd', { accountMonthlyUsd: key }],
      ] as const) {
        const [out] = await run(['a fox'], credentials);
        expect(out![0]!.json).toMatchObject({ code: 'validation_error', field });
        expect(JSON.stringify(out)).not.toContain(key);
      }
    }
    const [address] = await run(['a fox'], { baseUrl: 'api.example.com' });
    expect(address![0]!.json.error).toContain('"api.example.com"');
    expect(emulator.requests).toHaveLength(0);
  });

  it('fails an item of a credential with a cap of "$5" with code validation_error and field accountDailyUsd, like any bad input', async () => {
    const [out] = await run(['a fox', 'a hare'], { accountDailyUsd: '$5', accountMonthlyUsd: '1,000' });
    expect(out!.map((item) => item.json)).toEqual(
      [0, 1].map((itemIndex) => ({
        error: expect.stringMatching(/^Pictor API credential: the Account Daily Cap \(USD\) "\$5" is not a number of US dollars/),
        code: 'validation_error',
        description: expect.stringContaining('Nothing was sent'),
        field: 'accountDailyUsd',
        itemIndex,
      })),
    );
    const [monthly] = await run(['a fox'], { accountMonthlyUsd: '1,000' });
    expect(monthly![0]!.json).toMatchObject({ code: 'validation_error', field: 'accountMonthlyUsd' });
    expect(emulator.requests).toHaveLength(0);
  });

  it('fails the node on a credential cap of "$5" without On Error, with an error naming the field and carrying validation_error', async () => {
    const error = await run(['a fox'], { accountDailyUsd: '$5' }, { onError: undefined }).then(
      () => undefined,
      (thrown: unknown) => thrown as NodeOperationError,
    );
    expect(error).toBeInstanceOf(NodeOperationError);
    expect(error!.message).toMatch(/Account Daily Cap \(USD\) "\$5"/);
    expect(error!.context).toMatchObject({ code: 'validation_error', parameter: 'accountDailyUsd', itemIndex: 0 });
    expect(emulator.requests).toHaveLength(0);
  });

  it('fails the item with ledger_unreadable, sending nothing, when cap-overrides.json is malformed or its usage folder is a file', async () => {
    const damaged = await ledgerFolder();
    await writeFile(join(damaged, 'cap-overrides.json'), '{"version":1,"scopes":');
    const [first] = await run(['a fox on a damaged ledger'], { accountDailyUsd: '1', ledgerFolder: damaged });
    expect(first![0]!.json).toMatchObject({ code: 'ledger_unreadable' });
    expect(String(first![0]!.json.error)).toContain(join(damaged, 'cap-overrides.json'));
    const folder = await ledgerFolder();
    await writeFile(join(folder, 'usage'), '');
    const [second] = await run(['a fox without usage records'], { accountDailyUsd: '1', ledgerFolder: folder });
    expect(second![0]!.json).toMatchObject({ code: 'ledger_unreadable' });
    expect(String(second![0]!.json.error)).toContain(join(folder, 'usage'));
    expect(emulator.requests).toHaveLength(0);
  });

  it('fails the item with ledger_busy, saying nothing was sent and to run it again, when another process holds the ledger', async () => {
    const folder = await ledgerFolder();
    const store = await ledgerFor({ limits: {}, ledgerFolder: folder, ledger: 'account' });
    // The ledger's lock held past the 10 s a commit waits, without holding it for real.
    vi.spyOn(store, 'reserve').mockRejectedValue(new LedgerBusyError(new FileLockBusyError(join(folder, 'quota-ledger.json.lock'), 'process 42 on host-a', 10_000)));
    const [out] = await run(['a fox on a busy ledger'], { accountDailyUsd: '1', ledgerFolder: folder });
    expect(out![0]!.json).toMatchObject({ code: 'ledger_busy', itemIndex: 0 });
    expect(out![0]!.json.description).toMatch(/^Nothing was sent.*run it again.*route the items with code ledger_busy back to this node/);
    expect(emulator.requests).toHaveLength(0);
    vi.restoreAllMocks();
  });

  it('puts back the backup of a damaged cap-overrides.json and runs the item', async () => {
    const folder = await ledgerFolder();
    await writeFile(join(folder, 'cap-overrides.json.bak'), '{"version":1,"scopes":{}}');
    await writeFile(join(folder, 'cap-overrides.json'), '{"version":1,"scopes":');
    const [out] = await run(['a fox on a restored ledger'], { accountDailyUsd: '1', ledgerFolder: folder });
    expect(out![0]!.binary?.data).toBeDefined();
    expect(await readFile(join(folder, 'cap-overrides.json'), 'utf8')).toBe('{"version":1,"scopes":{}}');
  });

  it('keeps no ledger without a cap and without Redis', async () => {
    const folder = await ledgerFolder();
    await run(['an uncounted fox'], { ledgerFolder: folder });
    await expect(readFile(join(folder, 'quota-ledger.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('takes a Ledger Folder typed as ~/… in the home folder of the user n8n runs as, never in a folder named ~', async () => {
    const home = await ledgerFolder();
    const before = process.env.HOME;
    process.env.HOME = home;
    try {
      await run(['a fox counted at home'], { accountDailyUsd: '1', ledgerFolder: '~/.n8n/pictor' });
    } finally {
      process.env.HOME = before;
    }
    expect((await ledgerOf(join(home, '.n8n', 'pictor'))).spent[utcDay(Date.now())]?.account).toBe(ONE_IMAGE_USD);
    expect(existsSync(join(process.cwd(), '~'))).toBe(false);
  });

  it('refuses a relative Ledger Folder with validation_error naming ledgerFolder, before anything is sent', async () => {
    const [out] = await run(['a fox', 'another fox'], { accountDailyUsd: '1', ledgerFolder: 'pictor-ledger' });
    expect(out!.map((item) => [item.json.code, item.json.field, item.json.itemIndex])).toEqual([
      ['validation_error', 'ledgerFolder', 0],
      ['validation_error', 'ledgerFolder', 1],
    ]);
    expect(out![0]!.json.error).toMatch(/^Pictor API credential: the Ledger Folder "pictor-ledger" is not an absolute path/);
    expect(existsSync(join(process.cwd(), 'pictor-ledger'))).toBe(false);
    expect(emulator.stats().requests).toBe(0);
  });

  it("keeps its ledger in n8n's own folder by default", () => {
    expect(defaultLedgerFolder({ N8N_USER_FOLDER: '/srv/n8n' })).toBe(join('/srv/n8n', '.n8n', 'pictor'));
  });

  it("shows its jobs in pictor usage given that folder as PICTOR_DATA_DIR, and not in the CLI's own default ledger", async () => {
    const n8nUserFolder = await ledgerFolder();
    const folder = defaultLedgerFolder({ N8N_USER_FOLDER: n8nUserFolder });
    await run(['a counted fox'], { accountDailyUsd: '1', ledgerFolder: folder }, { workflowId: 'wf-7' });
    // Another process, as the owner runs it (this one keeps the node's ledger open).
    const usage = async (env: NodeJS.ProcessEnv) => {
      const { code, stdout, stderr } = await spawnCli(['usage', '--by', 'user', '--json'], { env });
      expect(code, stderr).toBe(0);
      return JSON.parse(stdout) as { total: { jobs: number; usd: number }; rows: { key: string }[] };
    };
    const pointed = await usage({ PICTOR_DATA_DIR: folder });
    expect(pointed.total).toMatchObject({ jobs: 1, usd: expect.closeTo(ONE_IMAGE_USD, 9) });
    expect(pointed.rows.map((r) => r.key)).toEqual(['n8n:wf-7']);
    expect((await usage({})).total.jobs).toBe(0);
  });

  it('keeps the jobs of a Pictor emulator in <Ledger Folder>/emulator, shown by pictor usage --emulator and not by pictor usage', async () => {
    const folder = await ledgerFolder();
    const pictorEmulator = createEmulator();
    const at = await pictorEmulator.listen({ port: 0 });
    try {
      await run(['a rehearsed fox'], { baseUrl: at.url, accountDailyUsd: '1', ledgerFolder: folder }, { workflowId: 'wf-8' });
    } finally {
      await pictorEmulator.close();
    }
    const usage = async (...args: string[]) => {
      const { code, stdout, stderr } = await spawnCli(['usage', ...args, '--by', 'user', '--json'], { env: { PICTOR_DATA_DIR: folder } });
      expect(code, stderr).toBe(0);
      return JSON.parse(stdout) as { total: { jobs: number }; rows: { key: string }[] };
    };
    const rehearsed = await usage('--emulator');
    expect(rehearsed.total.jobs).toBe(1);
    expect(rehearsed.rows.map((r) => r.key)).toEqual(['n8n:wf-8']);
    expect((await usage()).total.jobs).toBe(0);
  });
});

describe('the Pictor Image node when a request fails after some images', () => {
  it('outputs image 1 of 2 that came before an error event, then the error’s item, and charges that image', async () => {
    const folder = await ledgerFolder();
    emulator.configure({ latencyMs: 0, defaultPartialImages: 0 });
    emulator.injectFault('stream_error_event');
    const [out] = await run(['two lighthouses'], { accountDailyUsd: '1', ledgerFolder: folder }, {
      parameters: () => ({ ...LOW, prompt: 'two lighthouses', n: 2, options: { stream: true } }),
    });
    expect(out).toHaveLength(2);
    expect(out![0]!.binary?.data).toBeDefined();
    expect(out![1]!.json).toMatchObject({ code: 'server_error', itemIndex: 0 });
    expect(out![1]!.json.description).toBe('The service reported a failure in the middle of its streamed answer; such a failure is not retried. Try again later.');
    const ledger = await ledgerOf(folder);
    expect(ledger.spent[utcDay(Date.now())]!.account).toBeCloseTo(ONE_IMAGE_USD, 9);
  });

  it.each([
    ['', {}],
    [' to a streamed request (once)', { stream: true }],
  ])('outputs image 1 of 2 that came whole before a JSON answer broke off%s, then the failure’s own item, and charges that image and the estimate of the other', async (_how, stream) => {
    const folder = await ledgerFolder();
    const b64 = Buffer.from(await makeImage('png', 8, 8)).toString('base64');
    const cut = `{"created":1,"data":[{"b64_json":"${b64}"},{"b64_json":"${b64.slice(0, 20)}`;
    const broken = await misbehavingServer(async (req) => {
      await req.body();
      req.socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${cut.length.toString(16)}\r\n${cut}\r\n`);
    });
    try {
      const [out] = await run(['two lighthouses'], { baseUrl: broken.url, accountDailyUsd: '1', ledgerFolder: folder }, {
        parameters: () => ({ ...LOW, prompt: 'two lighthouses', n: 2, options: { maxRetries: 0, ...stream } }),
      });
      expect(out).toHaveLength(2);
      expect(Buffer.from(out![0]!.binary!.data!.data, 'base64').toString('base64')).toBe(b64);
      expect(out![0]!.json.cost).toMatchObject({ usd: ONE_IMAGE_USD });
      const spent = (await ledgerOf(folder)).spent[utcDay(Date.now())]!.account!;
      expect(spent).toBeCloseTo(2 * ONE_IMAGE_USD, 9);
      expect(out![1]!.json).toMatchObject({ code: 'stream_broken', itemIndex: 0, charged: spent });
    } finally {
      await broken.close();
    }
  });

  it('outputs the one image of a 200 with 1 of 2, and keeps the job charged as may-be-billed (not released)', async () => {
    const folder = await ledgerFolder();
    emulator.injectFault('short_result');
    const [out] = await run(['two lighthouses'], { accountDailyUsd: '1', ledgerFolder: folder }, {
      parameters: () => ({ ...LOW, prompt: 'two lighthouses', n: 2 }),
    });
    expect(out).toHaveLength(2);
    expect(out![0]!.binary?.data).toBeDefined();
    expect(out![1]!.json).toMatchObject({ code: 'bad_response' });
    expect(`${out![1]!.json.error} ${out![1]!.json.description}`.match(/billed/g), 'the billing sentence, once').toHaveLength(1);
    const ledger = await ledgerOf(folder);
    expect(ledger.spent[utcDay(Date.now())]!.account).toBeGreaterThan(ONE_IMAGE_USD);
  });

  it('says on the error’s item what the ledger charged for the whole job, beyond the cost of the image that came', async () => {
    const folder = await ledgerFolder();
    emulator.injectFault('short_result');
    const [out] = await run(['two lighthouses'], { accountDailyUsd: '1', ledgerFolder: folder }, {
      parameters: () => ({ ...LOW, prompt: 'two lighthouses', n: 2 }),
    });
    const spent = (await ledgerOf(folder)).spent[utcDay(Date.now())]!.account!;
    expect(out![0]!.json.cost).toMatchObject({ usd: ONE_IMAGE_USD });
    expect(out![1]!.json).toMatchObject({ code: 'bad_response', charged: spent });
    expect(out![1]!.json.charged).toBeGreaterThan(ONE_IMAGE_USD);
  });

  it('says on the error’s item of a stream that failed after one image that the ledger charged that image, with the error output too', async () => {
    const folder = await ledgerFolder();
    emulator.configure({ latencyMs: 0, defaultPartialImages: 0 });
    emulator.injectFault('stream_error_event');
    const [out] = await run(['two lighthouses'], { accountDailyUsd: '1', ledgerFolder: folder }, {
      parameters: () => ({ ...LOW, prompt: 'two lighthouses', n: 2, options: { stream: true } }),
      onError: 'continueErrorOutput',
    });
    expect(out![1]!.json).toMatchObject({ code: 'server_error', charged: ONE_IMAGE_USD });
  });

  it('says charged 0 on the item of a request the service refused, and nothing about a charge for one refused before it was sent', async () => {
    const folder = await ledgerFolder();
    const [blocked] = await run(['a forbidden fox'], { accountDailyUsd: '0.007', ledgerFolder: folder });
    expect(blocked![0]!.json).toMatchObject({ code: 'moderation_blocked', charged: 0 });
    const [made] = await run(['a calm sea'], { accountDailyUsd: '0.007', ledgerFolder: folder });
    expect(made![0]!.binary?.data).toBeDefined();
    const [refused] = await run(['over the cap now'], { accountDailyUsd: '0.007', ledgerFolder: folder });
    expect(refused![0]!.json.code).toBe('budget_account_daily');
    expect(refused![0]!.json).not.toHaveProperty('charged');
  });
});

describe('the Pictor Image node from one execution to the next (a loop near a cap)', () => {
  it('has a settle the ledger refused once taken before the next execution’s item is reserved, so that item is not refused on the estimate still reserved', async () => {
    const folder = await ledgerFolder();
    const store = await ledgerFor({ limits: {}, ledgerFolder: folder, ledger: 'account' });
    const jobLedger = await jobLedgerFor({ limits: {}, ledgerFolder: folder, ledger: 'account' });
    // What the ledger was asked, in order: the first settle is refused (a busy ledger), later ones land.
    const asked: string[] = [];
    const { settle, reserve } = store;
    let busy = true;
    let refusing!: () => void;
    const refused = new Promise<void>((resolve) => (refusing = resolve));
    const settles = vi.spyOn(store, 'settle').mockImplementation(async (...args) => {
      if (busy) {
        busy = false;
        asked.push('settle refused');
        refusing();
        throw new Error('the ledger is busy');
      }
      asked.push('settle');
      return settle.apply(store, args);
    });
    const reserves = vi.spyOn(store, 'reserve').mockImplementation(async (input) => {
      const reserved = await reserve.call(store, input);
      asked.push(`reserve ${input.job?.quality}: ${reserved.ok ? 'ok' : reserved.code}`);
      return reserved;
    });
    // Each job's `begin` in the node's one job ledger for this folder, told as it is called.
    const { begin } = jobLedger;
    const begun: (() => void)[] = [];
    const begins = vi.spyOn(jobLedger, 'begin').mockImplementation((input) => {
      begun.splice(0).forEach((told) => told());
      return begin.call(jobLedger, input);
    });
    // Time is fake (only setTimeout): the ledger's retry of the refused settle, and the next item's wait for it, come
    // only as the test steps through them.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      // Quality auto is reserved at the high price (0.22366 USD); the service makes a medium image (0.05618 USD). The cap
      // leaves room for a low image (0.00636 USD) next to what the first cost, not next to its estimate.
      const credentials = { accountDailyUsd: '0.225', ledgerFolder: folder };
      const [first] = await run(['an auto fox'], credentials, { parameters: () => ({ ...LOW, quality: 'auto', prompt: 'an auto fox' }) });
      expect(first![0]!.binary?.data).toBeDefined();
      await refused;
      const nextBegun = new Promise<void>((resolve) => begun.push(resolve));
      const running = run(['a low fox right after'], credentials);
      // The next item's reservation waits for the first one's settle, retried only once its (fake) 200 ms have passed.
      await nextBegun;
      await new Promise((resolve) => setImmediate(resolve));
      expect(reserves).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(200);
      // No more time passes: the next item's 1 s wait cannot run out, it ends only as the retried settle lands.
      const [next] = await running;
      expect(next![0]!.json.code).toBeUndefined();
      expect(next![0]!.binary?.data).toBeDefined();
      // (The second item's own settle may follow.)
      expect(asked.slice(0, 4)).toEqual(['reserve auto: ok', 'settle refused', 'settle', 'reserve low: ok']);
    } finally {
      vi.useRealTimers();
    }
    try {
      const ledger = await ledgerOf(folder);
      expect(ledger.spent[utcDay(Date.now())]?.account).toBeCloseTo(0.05618 + ONE_IMAGE_USD, 9);
    } finally {
      settles.mockRestore();
      reserves.mockRestore();
      begins.mockRestore();
    }
  });
});

describe('the Pictor Image node when something unexpected fails an item', () => {
  it('gives the item code internal_error for an error that is not one of Pictor’s, and keeps the code of one that is', async () => {
    const folder = await ledgerFolder();
    const store = await ledgerFor({ limits: {}, ledgerFolder: folder, ledger: 'account' });
    const reserves = vi.spyOn(store, 'reserve').mockRejectedValueOnce(new TypeError('something broke inside')).mockRejectedValueOnce(new QuotaStoreClosedError());
    try {
      const [unexpected] = await run(['an unexpected fox'], { accountDailyUsd: '1', ledgerFolder: folder });
      expect(unexpected![0]!.json).toMatchObject({ error: 'something broke inside', code: 'internal_error', itemIndex: 0 });
      const [closed] = await run(['a fox for a closed ledger'], { accountDailyUsd: '1', ledgerFolder: folder });
      expect(closed![0]!.json).toMatchObject({ code: 'quota_store_closed', itemIndex: 0 });
      expect(emulator.requests).toHaveLength(0);
    } finally {
      reserves.mockRestore();
    }
  });
});

/** Runs the node with n8n's prepareBinaryData failing on its `failing`-th call (n8n's binary data store refusing a file: a full disk). */
function runWithStoreFailing(failing: number, prompts: string[], credentials: Record<string, unknown>, options: Partial<HarnessOptions> = {}) {
  const harness = createHarness({
    n8n: { NodeHelpers, NodeOperationError },
    nodeType: node,
    parameters: (i) => ({ ...LOW, prompt: prompts[i] }),
    items: prompts.map((): INodeExecutionData => ({ json: {} })),
    credentials: { apiKey: DEV_API_KEY, baseUrl: server.url, ...credentials },
    onError: 'continueRegularOutput',
    ...options,
  });
  const n8n = harness.context.helpers;
  const store = n8n.prepareBinaryData.bind(n8n);
  let calls = 0;
  n8n.prepareBinaryData = async (...args: Parameters<typeof store>) => {
    calls += 1;
    if (calls === failing) throw new Error('ENOSPC: no space left on device, write binaryData/x');
    return store(...args);
  };
  return harness.run();
}

describe('the Pictor Image node when n8n cannot store an image the service made', () => {
  it('outputs every image n8n stored, then one item with code output_not_written saying how many paid images were not stored', async () => {
    const folder = await ledgerFolder();
    const [out] = await runWithStoreFailing(2, ['three lighthouses'], { accountDailyUsd: '1', ledgerFolder: folder }, {
      parameters: () => ({ ...LOW, prompt: 'three lighthouses', n: 3 }),
    });
    expect(out).toHaveLength(3);
    expect(out!.slice(0, 2).map((item) => item.json.imageIndex)).toEqual([0, 2]);
    expect(out![0]!.binary?.data).toBeDefined();
    const spent = (await ledgerOf(folder)).spent[utcDay(Date.now())]!.account!;
    expect(spent).toBeCloseTo(3 * ONE_IMAGE_USD, 9);
    expect(out![2]!.json).toMatchObject({ code: 'output_not_written', imagesNotStored: 1, itemIndex: 0, charged: spent });
    expect(out![2]!.binary).toBeUndefined();
  });

  it('keeps the service’s own code on the item of a request that failed after its images, when n8n could not store them either', async () => {
    const folder = await ledgerFolder();
    emulator.injectFault('short_result');
    const [out] = await runWithStoreFailing(1, ['two lighthouses'], { accountDailyUsd: '1', ledgerFolder: folder }, {
      parameters: () => ({ ...LOW, prompt: 'two lighthouses', n: 2 }),
    });
    expect(out).toHaveLength(1);
    expect(out![0]!.json).toMatchObject({ code: 'bad_response', imagesNotStored: 1, itemIndex: 0 });
  });

  it('without On Error, fails the node with code output_not_written and says the images were paid for', async () => {
    const folder = await ledgerFolder();
    const error: unknown = await runWithStoreFailing(1, ['a lighthouse'], { accountDailyUsd: '1', ledgerFolder: folder }, { onError: undefined }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(NodeOperationError);
    expect(error).toMatchObject({ context: { itemIndex: 0, code: 'output_not_written' } });
    expect(`${(error as NodeOperationError).message} ${(error as NodeOperationError).description}`).toMatch(/paid/);
  });
});
