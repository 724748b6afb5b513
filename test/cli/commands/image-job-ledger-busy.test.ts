import { readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEV_API_KEY } from '../../../src/emulator/index.js';
import { PRICE_TABLE } from '../../../src/index.js';
import { FileQuotaStore } from '../../../src/internal.js';
import { useEmulator } from '../../helpers/emulator.js';
import { run, tempDir } from '../run-cli.js';
import { spyOnInstance } from '../../helpers/instance-spy.js';

// The emulator poses as the real service here: its jobs are the account's.
const env = useEmulator({ identifyAsEmulator: false });
const LOW = PRICE_TABLE['1024x1024'].low;

const stores: FileQuotaStore[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

/**
 * `pictor generate` of one low image while every settle waits (the ledger's lock held by another live process) until
 * `free()`; `process.exit` only recorded (here it says the report). Resolves once the image is written and said.
 */
async function generateWhileTheLedgerIsBusy() {
  let free = () => {};
  const freed = new Promise<void>((resolve) => (free = resolve));
  const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
  const out = await tempDir();
  const data = await tempDir();
  const settle = FileQuotaStore.prototype.settle;
  spyOnInstance(FileQuotaStore.prototype, 'settle', (store) => store.path.startsWith(data)).mockImplementation(async function (this: FileQuotaStore, ...args) {
    await freed;
    return settle.apply(this, args);
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const running = run(
    ['generate', '--prompt', 'a lighthouse', '--quality', 'low', '--size', '1024x1024', '--out', out],
    { PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: data, PICTOR_ACCOUNT_DAILY_USD: '10' },
    { stdout: (line) => stdout.push(line), stderr: (line) => stderr.push(line) },
  );
  await vi.waitFor(() => expect(stdout.join('\n')).toMatch(/^Wrote 1 image/), { timeout: 15_000 });
  const [file] = (await readdir(out)).filter((name) => name.endsWith('.png'));
  expect(file).toBeDefined();
  return { free, exit, running, data, stdout, stderr, path: join(out, file!) };
}

describe('pictor generate while another process holds the ledger when the job is settled', () => {
  it('writes the paid image and says so at once, a Ctrl+C then lists it, and the charge lands once the ledger is free', async () => {
    const { free, exit, running, data, stdout, stderr, path } = await generateWhileTheLedgerIsBusy();
    expect(stdout.join('\n')).toContain(path);

    // A second Ctrl+C exits the process at once: here it only says its report.
    process.emit('SIGINT');
    process.emit('SIGINT');
    expect(exit).toHaveBeenCalledWith(130);
    expect(stderr).toContain('Images written before the interruption (1):');
    expect(stderr).toContain(`  ${path}`);
    expect(stderr.join('\n')).not.toContain('No image had arrived yet');

    free();
    expect((await running).code).toBe(0);
    const store = new FileQuotaStore({ dir: data });
    stores.push(store);
    expect(await store.usage({})).toEqual([expect.objectContaining({ costUsd: LOW, basis: 'table', outcome: 'completed' })]);
    expect(await store.spentToday('account', Date.now())).toBeCloseTo(LOW, 9);
  });

  it('exits after one Ctrl+C once the paid image is written, waiting for the ledger no longer than after a cancel, and says so', async () => {
    const { free, exit, running, stderr, path } = await generateWhileTheLedgerIsBusy();

    process.emit('SIGINT');
    expect(stderr.join('\n')).toContain('the images are written; waiting 2 s at most');
    // The exit timer of a cancel, not the ledger's retries (about 35 s): the exit comes while the ledger still holds.
    await vi.waitFor(() => expect(exit).toHaveBeenCalledWith(130), { timeout: 10_000 });
    expect(stderr).toContain(`  ${path}`);

    free();
    await running;
  });
});

describe('pictor generate saving the paid image', () => {
  it.each([
    ['plain', []],
    ['streamed', ['--stream', '--partial-images', '0']],
  ])('puts the image in place before the ledger’s settle begins (%s): a process killed in between keeps the image, charged by the next run', async (_how, extra) => {
    const out = await tempDir();
    const data = await tempDir();
    // What the output folder holds the moment the settle is asked for: it may wait for a busy ledger, or never end (a kill).
    const atSettle: string[][] = [];
    const settle = FileQuotaStore.prototype.settle;
    spyOnInstance(FileQuotaStore.prototype, 'settle', (store) => store.path.startsWith(data)).mockImplementation(async function (this: FileQuotaStore, ...args) {
      atSettle.push(readdirSync(out));
      return settle.apply(this, args);
    });
    const { code } = await run(['generate', '--prompt', 'a lighthouse', '--quality', 'low', '--size', '1024x1024', '--out', `${out}/`, ...extra], {
      PICTOR_BASE_URL: env.url,
      PICTOR_API_KEY: DEV_API_KEY,
      PICTOR_DATA_DIR: data,
    });
    expect(code).toBe(0);
    expect(atSettle).toEqual([[expect.stringMatching(/^a-lighthouse-.*\.png$/)]]);
  });
});
