import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEV_API_KEY } from '../../../src/emulator/index.js';
import { FileQuotaStore } from '../../../src/internal.js';
import { useEmulator } from '../../helpers/emulator.js';
import { run, tempDir } from '../run-cli.js';

// The emulator poses as the real service here: its jobs are the account's.
const emu = useEmulator({ identifyAsEmulator: false });
/** A Pictor emulator as `pictor emulator` or `npm start` runs one: it says what it is. */
const pictorEmulator = useEmulator();
const LOW = 0.00636;

interface Report {
  ledger: string;
  total: { jobs: number; usd: number };
  rows: { key: string; jobs: number; usd: number }[];
}

const generate = async (env: NodeJS.ProcessEnv) =>
  run(['generate', '--prompt', 'a lighthouse', '--quality', 'low', '--size', '1024x1024', '--out', `${await tempDir()}/`], env);

describe('the CLI ledger', () => {
  it('records every paid job with no cap and no Redis, in $XDG_STATE_HOME/pictor, and pictor usage finds it from any folder', async () => {
    const state = await tempDir();
    const env = { PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, XDG_STATE_HOME: state };
    expect((await generate(env)).code).toBe(0);
    expect(existsSync(join(state, 'pictor', 'usage'))).toBe(true);
    const report = JSON.parse((await run(['usage', '--json'], env, { cwd: await tempDir() })).stdout) as Report;
    expect(report).toMatchObject({ ledger: 'account', total: { jobs: 1, usd: LOW } });
    const text = (await run(['usage'], env)).stdout;
    expect(text).toContain(`from the account's ledger in ${join(state, 'pictor')}`);
  });

  it('falls back to ~/.local/state/pictor without XDG_STATE_HOME, and PICTOR_DATA_DIR still wins', async () => {
    const home = await tempDir();
    expect((await generate({ PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, XDG_STATE_HOME: '', HOME: home })).code).toBe(0);
    expect(existsSync(join(home, '.local', 'state', 'pictor', 'usage'))).toBe(true);
    const dataDir = await tempDir();
    expect((await generate({ PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, HOME: home, PICTOR_DATA_DIR: dataDir })).code).toBe(0);
    expect(existsSync(join(dataDir, 'usage'))).toBe(true);
  });

  it('keeps jobs on the embedded emulator out of the account’s ledger and its cap, and shows them with --emulator', async () => {
    const dataDir = await tempDir();
    const env = { PICTOR_DATA_DIR: dataDir, PICTOR_ACCOUNT_DAILY_USD: String(LOW) };
    // Two emulator jobs under a cap that only fits one: the emulator's ledger has the cap too, the account's is untouched.
    expect((await generate(env)).code).toBe(0);
    const refused = await generate(env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("This is the emulator's own ledger, where the account's caps are rehearsed: nothing was spent");
    const account = JSON.parse((await run(['usage', '--json'], env)).stdout) as Report;
    expect(account.total.jobs).toBe(0);
    const emulator = JSON.parse((await run(['usage', '--json', '--emulator'], env)).stdout) as Report;
    expect(emulator).toMatchObject({ ledger: 'emulator', total: { jobs: 1, usd: LOW } });
    // A real job still fits the account's cap.
    expect((await generate({ ...env, PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY })).code).toBe(0);
  });

  it("keeps jobs sent through PICTOR_BASE_URL to a Pictor emulator (npm start's Try: line) out of the account's ledger, and says what they would cost", async () => {
    const dataDir = await tempDir();
    const env = { PICTOR_BASE_URL: pictorEmulator.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: dataDir, PICTOR_ACCOUNT_DAILY_USD: String(LOW) };
    const job = await generate(env);
    expect(job.code).toBe(0);
    expect(job.stderr).toContain('PICTOR_BASE_URL is a Pictor emulator');
    expect(job.stdout).toMatch(/^Would cost on the real service: \$0\.0064 \(an emulator made it: nothing was spent\)$/m);
    expect(job.stdout).not.toMatch(/^Cost:/m);
    const account = JSON.parse((await run(['usage', '--json'], env)).stdout) as Report;
    expect(account.total.jobs).toBe(0);
    const emulator = JSON.parse((await run(['usage', '--json', '--emulator'], env)).stdout) as Report;
    expect(emulator).toMatchObject({ ledger: 'emulator', total: { jobs: 1, usd: LOW } });
    // The account's cap is untouched: a job of the real service still fits.
    expect((await generate({ ...env, PICTOR_BASE_URL: emu.url })).code).toBe(0);
  });

  it('records embedded-emulator jobs with no cap and no Redis too, so pictor usage --emulator shows them', async () => {
    const dataDir = await tempDir();
    expect((await generate({ PICTOR_DATA_DIR: dataDir })).code).toBe(0);
    const emulator = JSON.parse((await run(['usage', '--json', '--emulator'], { PICTOR_DATA_DIR: dataDir })).stdout) as Report;
    expect(emulator).toMatchObject({ ledger: 'emulator', total: { jobs: 1, usd: LOW } });
  });

  it('counts a job reserved at 23:59:59 and settled after midnight on the day it was reserved, as the ledger does', async () => {
    const dataDir = await tempDir();
    const day = Date.UTC(2026, 9, 31);
    const reservedAt = day + 24 * 60 * 60_000 - 1000; // 2026-10-31 23:59:59, the last second of a month too
    const store = new FileQuotaStore({ dir: dataDir, clock: () => reservedAt + 5000 }); // settled at 00:00:04 the next day
    try {
      await store.reserve({ jobId: 'late', userKey: 'cli:me', scopeKey: 'cli', estimateUsd: 0.1, limits: {}, now: reservedAt, job: { operation: 'generate', n: 1, size: '1024x1024', quality: 'low' } });
      await store.settle('late', 0.05);
      expect(await store.spentToday('account', reservedAt)).toBe(0.05);
    } finally {
      await store.close();
    }
    const env = { PICTOR_DATA_DIR: dataDir };
    const byDay = JSON.parse((await run(['usage', '--since', '2026-10-31', '--until', '2026-11-01', '--json'], env)).stdout) as Report;
    expect(byDay.rows).toEqual([expect.objectContaining({ key: '2026-10-31', jobs: 1, usd: 0.05 }), expect.objectContaining({ key: '2026-11-01', jobs: 0 })]);
    const november = JSON.parse((await run(['usage', '--since', '2026-11-01', '--until', '2026-11-30', '--json'], env)).stdout) as Report;
    expect(november.total.jobs).toBe(0);
    const csv = (await run(['usage', '--since', '2026-10-01', '--until', '2026-10-31', '--csv'], env)).stdout;
    expect(csv).toMatch(/^2026-11-01T00:00:04\.000Z,2026-10-31,2026-10,cli,/m);
  });

  it('refuses to run a job on a malformed cap-overrides.json or a usage folder that is a file, naming it (exit 2)', async () => {
    const damaged = await tempDir();
    await writeFile(join(damaged, 'cap-overrides.json'), '{"version":1,"scopes":');
    const env = { PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: damaged };
    const first = await generate(env);
    expect(first.code).toBe(2);
    expect(first.stderr).toContain(join(damaged, 'cap-overrides.json'));
    const folder = await tempDir();
    await writeFile(join(folder, 'usage'), '');
    const second = await generate({ ...env, PICTOR_DATA_DIR: folder });
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(join(folder, 'usage'));
    // pictor usage checks the same files.
    expect((await run(['usage'], { PICTOR_DATA_DIR: folder })).code).toBe(2);
    expect(await readFile(join(damaged, 'cap-overrides.json'), 'utf8')).toBe('{"version":1,"scopes":');
  });
});
