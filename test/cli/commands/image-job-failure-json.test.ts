import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEV_API_KEY } from '../../../src/emulator/index.js';
import { FileQuotaStore } from '../../../src/internal.js';
import { useEmulator } from '../../helpers/emulator.js';
import { spawnCli, tempDir } from '../run-cli.js';

// The emulator poses as the real service here: its jobs are the account's, charged in the account's ledger.
const env = useEmulator({ identifyAsEmulator: false });

/** `pictor generate --json` of two low-quality images, in its own process; its one stdout line, the files on disk and the ledger's record. */
async function generateTwoJson(extra: string[]) {
  const out = await tempDir();
  const data = await tempDir();
  const child = await spawnCli(['generate', '--prompt', 'a lighthouse', '--n', '2', '--quality', 'low', '--out', out, '--json', ...extra], {
    env: { PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: data, PICTOR_MAX_RETRIES: '0' },
  });
  const lines = child.stdout.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  const written = (await readdir(out)).filter((f) => f.endsWith('.png')).map((f) => join(out, f));
  const store = new FileQuotaStore({ dir: data });
  try {
    const [record] = await store.usage({});
    return { code: child.code, stderr: child.stderr, line: JSON.parse(lines[0]!) as Record<string, unknown>, written, charged: record?.costUsd };
  } finally {
    await store.close();
  }
}

describe('pictor generate --json when the job fails after some images', () => {
  it('names the image it kept from a 200 with 1 of 2 in its failure line, with what the ledger charged', async () => {
    env.emulator.injectFault('short_result');

    const { code, line, written, charged } = await generateTwoJson([]);

    expect(code).toBe(1);
    expect(written).toHaveLength(1);
    expect(line).toMatchObject({ ok: false, code: 'bad_response', operation: 'generate', files: written, partials: [], emulator: false });
    expect(charged).toBeGreaterThan(0);
    expect(line.charged).toBe(charged);
  }, 60_000);

  it('names the streamed image it wrote before an error event in its failure line, with what the ledger charged for it', async () => {
    env.emulator.injectFault('stream_error_event');

    const { code, line, written, charged } = await generateTwoJson(['--stream', '--partial-images', '0']);

    expect(code).toBe(1);
    expect(written).toHaveLength(1);
    expect(line).toMatchObject({ ok: false, code: 'server_error', operation: 'generate', files: written, partials: [], emulator: false });
    expect(charged).toBeGreaterThan(0);
    expect(line.charged).toBe(charged);
  }, 60_000);
});

describe('pictor generate --json when the job is refused before it is sent', () => {
  it('gives a cap refusal no `charged` (nor files): nothing was sent, so no charge is pending', async () => {
    const out = await tempDir();
    const data = await tempDir();

    const child = await spawnCli(['generate', '--prompt', 'a lighthouse', '--quality', 'low', '--out', out, '--json'], {
      env: { PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: data, PICTOR_ACCOUNT_DAILY_USD: '0.001' },
    });

    expect(child.code).toBe(1);
    const line = JSON.parse(child.stdout.trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ ok: false, code: 'budget_account_daily', limitUsd: 0.001 });
    expect(line).not.toHaveProperty('charged');
    expect(line).not.toHaveProperty('files');
    expect(child.stderr).toContain('Nothing was sent.');
    expect(env.emulator.requests).toHaveLength(0);
  }, 60_000);
});
