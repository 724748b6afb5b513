import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { DEV_API_KEY } from '../../../src/emulator/index.js';
import { PRICE_TABLE, estimatePrice } from '../../../src/index.js';
import { FileQuotaStore } from '../../../src/internal.js';
import { useEmulator } from '../../helpers/emulator.js';
import { makeImage } from '../../helpers/images.js';
import { misbehavingServer } from '../../client/misbehaving-server.js';
import { run, tempDir } from '../run-cli.js';

// The emulator poses as the real service here: its jobs are the account's.
const env = useEmulator({ identifyAsEmulator: false });
const LOW = PRICE_TABLE['1024x1024'].low;
const ESTIMATE_PER_IMAGE = estimatePrice({ operation: 'generate', size: '1024x1024', quality: 'low', n: 1 }).perImageUsd;

const stores: FileQuotaStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

/** Runs `pictor generate` of two low-quality images against the emulator, with an account cap (so a ledger counts it). */
async function generateTwo(extra: string[], baseUrl = env.url) {
  const out = await tempDir();
  const data = await tempDir();
  const result = await run(['generate', '--prompt', 'a lighthouse', '--n', '2', '--quality', 'low', '--out', out, '--json', ...extra], {
    PICTOR_BASE_URL: baseUrl,
    PICTOR_API_KEY: DEV_API_KEY,
    PICTOR_ACCOUNT_DAILY_USD: '10',
    PICTOR_DATA_DIR: data,
    PICTOR_MAX_RETRIES: '0',
  });
  const store = new FileQuotaStore({ dir: data });
  stores.push(store);
  const files = (await readdir(out)).filter((f) => f.endsWith('.png') && !f.includes('partial'));
  return { ...result, files: files.map((f) => join(out, f)), usage: await store.usage({}), spent: await store.spentToday('account', Date.now()) };
}

const codeOf = (stdout: string) => (JSON.parse(stdout.trim().split('\n').at(-1)!) as { code?: string }).code;

describe('pictor generate when the job fails after some images', () => {
  it('writes image 1 of 2 when an error event follows it, exits 1, and charges that image at table price', async () => {
    env.emulator.injectFault('stream_error_event');

    const { code, stdout, files, usage } = await generateTwo(['--stream', '--partial-images', '0']);

    expect(code).toBe(1);
    expect(codeOf(stdout)).toBe('server_error');
    expect(files).toHaveLength(1);
    expect(usage).toEqual([expect.objectContaining({ costUsd: LOW, basis: 'table' })]);
  });

  it('writes image 1 of 2 when the connection resets after it, and charges it plus the estimate of the missing one', async () => {
    env.emulator.injectFault('reset_mid_stream');

    const { code, stdout, files, usage } = await generateTwo(['--stream', '--partial-images', '0']);

    expect(code).toBe(1);
    expect(codeOf(stdout)).toBe('stream_broken');
    expect(files).toHaveLength(1);
    expect(usage).toEqual([expect.objectContaining({ costUsd: LOW + ESTIMATE_PER_IMAGE, basis: 'estimate' })]);
  });

  it('keeps the one image of a 200 with 1 of 2, and charges it as may-be-billed instead of releasing it', async () => {
    env.emulator.injectFault('short_result');

    const { code, stdout, files, usage, spent } = await generateTwo([]);

    expect(code).toBe(1);
    expect(codeOf(stdout)).toBe('bad_response');
    expect(files).toHaveLength(1);
    expect(spent).toBeCloseTo(LOW + ESTIMATE_PER_IMAGE, 9);
    expect(usage).toEqual([expect.objectContaining({ basis: 'estimate' })]);
  });

  it('keeps the whole image of a cut-off JSON body, and charges the job as may-be-billed', async () => {
    env.emulator.injectFault('cut_off_body');

    const { code, stdout, files, spent } = await generateTwo([]);

    expect(code).toBe(1);
    expect(codeOf(stdout)).toBe('bad_response');
    expect(files).toHaveLength(1);
    expect(spent).toBeCloseTo(LOW + ESTIMATE_PER_IMAGE, 9);
  });

  it.each([
    ['', []],
    [' to a streamed request (written once, as it came)', ['--stream', '--partial-images', '0']],
  ])('keeps the whole image of a JSON body that broke off after it%s, fails with the break’s own code, and charges the job as may-be-billed', async (_how, extra) => {
    const b64 = Buffer.from(await makeImage('png', 8, 8)).toString('base64');
    const cut = `{"created":1,"data":[{"b64_json":"${b64}"},{"b64_json":"${b64.slice(0, 20)}`;
    const server = await misbehavingServer(async (req) => {
      await req.body();
      req.socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${cut.length + 5000}\r\n\r\n${cut}`);
    });
    onTestFinished(() => server.close());

    const { code, stdout, stderr, files, spent } = await generateTwo(extra, server.url);

    expect(code).toBe(1);
    expect(codeOf(stdout)).toBe('stream_broken');
    expect(files).toHaveLength(1);
    expect(stderr).toMatch(/the job failed after 1 of 2 images; wrote the one that arrived/);
    expect(spent).toBeCloseTo(LOW + ESTIMATE_PER_IMAGE, 9);
  });

  it.each(['type', 'created_at', 'size', 'quality', 'output_format', 'background', 'usage'])(
    'accepts streamed images whose completed events lack %s, writes them, and charges them',
    async (field) => {
      env.emulator.injectFault('missing_fields', { fields: [field] });

      const { code, files, usage } = await generateTwo(['--stream', '--partial-images', '0']);

      expect(code).toBe(0);
      expect(files).toHaveLength(2);
      expect(usage).toEqual([expect.objectContaining({ costUsd: 2 * LOW, basis: 'table' })]);
    },
  );

  it('accepts a result that lacks every label but its images', async () => {
    env.emulator.injectFault('missing_fields');

    const { code, files, usage } = await generateTwo([]);

    expect(code).toBe(0);
    expect(files).toHaveLength(2);
    expect(usage).toEqual([expect.objectContaining({ costUsd: 2 * LOW, basis: 'table' })]);
  });
});
