import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEV_API_KEY } from '../../../src/emulator/index.js';
import { FileQuotaStore } from '../../../src/internal.js';
import { useEmulator } from '../../helpers/emulator.js';
import { run, tempDir } from '../run-cli.js';
import { newestUsageFile, writeUsageDays } from '../../helpers/usage-days.js';

// The emulator poses as the real service here: its jobs are the account's.
const emu = useEmulator({ identifyAsEmulator: false });
const LOW = 0.00636;
const today = () => new Date().toISOString().slice(0, 10);

/** A data folder whose ledger holds what two `pictor generate` runs under an account cap spent. */
async function ledgerWithTwoJobs(prompts = ['a lighthouse', 'a harbour']): Promise<{ env: NodeJS.ProcessEnv }> {
  const env = {
    PICTOR_BASE_URL: emu.url,
    PICTOR_API_KEY: DEV_API_KEY,
    PICTOR_DATA_DIR: await tempDir(),
    PICTOR_ACCOUNT_MONTHLY_USD: '10',
    PICTOR_USAGE_PROMPTS: '1',
  };
  for (const [i, prompt] of prompts.entries()) {
    const result = await run(['generate', '--prompt', prompt, '--quality', 'low', '--size', '1024x1024', '--n', String(i + 1), '--out', `${await tempDir()}/`], env);
    expect(result.code, result.stderr).toBe(0);
  }
  return { env };
}

/** A ledger as a CLI killed with kill -9 leaves it: a job it had sent (and one still queued) reserved under its name. */
async function ledgerLeftByKilledProcess(dir: string): Promise<void> {
  const pid = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());
  const owner = `${hostname()}:${pid}:killed`;
  const now = Date.now();
  const reservation = (usd: number, sent: boolean) => ({ userKey: 'cli:local', scopeKey: 'cli', usd, day: today(), month: today().slice(0, 7), at: now, owner, sent });
  await writeFile(
    join(dir, 'quota-ledger.json'),
    JSON.stringify({
      version: 2,
      spent: {},
      reservations: { sent: reservation(0.3, true), queued: reservation(0.2, false) },
      owners: { [owner]: { pid, host: hostname(), renewedAt: now } },
      uncertain: {},
      lastJobAt: {},
    }),
  );
}

describe('pictor usage', () => {
  it("ends a killed process's reservations before it reads, as the caps count them: the sent job at its estimate, uncertain", async () => {
    const dir = await tempDir();
    await ledgerLeftByKilledProcess(dir);
    const report = async () => JSON.parse((await run(['usage', '--json'], { PICTOR_DATA_DIR: dir })).stdout) as { total: { jobs: number; usd: number; uncertainUsd: number } };
    expect((await report()).total).toMatchObject({ jobs: 1, usd: expect.closeTo(0.3, 9), uncertainUsd: expect.closeTo(0.3, 9) });
    const ledger = JSON.parse(await readFile(join(dir, 'quota-ledger.json'), 'utf8')) as { reservations: object };
    expect(ledger.reservations).toEqual({});
    // What the caps count is what it shows, and a second look charges nothing again.
    const store = new FileQuotaStore({ dir });
    try {
      expect(await store.spentThisMonth('account', Date.now())).toBeCloseTo(0.3, 9);
    } finally {
      await store.close();
    }
    expect((await report()).total).toMatchObject({ jobs: 1, usd: expect.closeTo(0.3, 9) });
  });

  it('totals what the CLI spent this month, equal to the sum of the settled costs, as JSON', async () => {
    const { env } = await ledgerWithTwoJobs();
    const { code, stdout } = await run(['usage', '--json'], env);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { total: { jobs: number; images: number; usd: number }; rows: { key: string; usd: number }[]; by: string };
    expect(report.total).toMatchObject({ jobs: 2, images: 3, usd: expect.closeTo(3 * LOW, 9), uncertainUsd: 0 });
    expect(report.by).toBe('day');
    expect(report.rows.find((r) => r.key === today())?.usd).toBeCloseTo(3 * LOW, 9);
    const store = new FileQuotaStore({ dir: env.PICTOR_DATA_DIR! });
    try {
      expect(await store.spentThisMonth('account', Date.now())).toBeCloseTo(report.total.usd, 9);
    } finally {
      await store.close();
    }
  });

  it('says how many damaged lines of the usage records it skipped, on stderr and as a JSON field, rather than totalling less in silence', async () => {
    const { env } = await ledgerWithTwoJobs();
    const usagePath = join(env.PICTOR_DATA_DIR!, 'usage');
    const file = await newestUsageFile(usagePath, '');
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[0] = '{"jobId":"damaged';
    await writeFile(file, lines.join('\n'));

    const json = await run(['usage', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ total: { jobs: 1 }, damagedLines: 1 });
    const text = await run(['usage'], env);
    expect(text.code).toBe(0);
    expect(text.stderr).toContain(`1 damaged line in ${usagePath} was skipped`);
    const clean = await ledgerWithTwoJobs();
    expect((await run(['usage'], clean.env)).stderr).not.toContain('damaged');
  });

  it('counts only the damaged lines written within the days asked for: one between two records of an older month is not said', async () => {
    const { env } = await ledgerWithTwoJobs();
    const file = await newestUsageFile(env.PICTOR_DATA_DIR!);
    const rest = (await readFile(file, 'utf8')).split('\n');
    const old = (jobId: string, at: number) => JSON.stringify({ ...JSON.parse(rest[0]!), jobId, time: at, day: new Date(at).toISOString().slice(0, 10), month: new Date(at).toISOString().slice(0, 7) });
    await rm(file);
    await writeUsageDays(env.PICTOR_DATA_DIR!, [old('old-1', Date.UTC(2020, 0, 3)), '{"jobId":"old-2","dam', old('old-3', Date.UTC(2020, 0, 4)), ...rest].join('\n'));

    const json = await run(['usage', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ total: { jobs: 2 }, damagedLines: 0 });
    expect((await run(['usage'], env)).stderr).not.toContain('damaged');
    const then = await run(['usage', '--json', '--since', '2020-01-01', '--until', '2020-01-31'], env);
    expect(JSON.parse(then.stdout)).toMatchObject({ total: { jobs: 2 }, damagedLines: 1 });
  });

  it('groups by surface and user, largest spend first', async () => {
    const { env } = await ledgerWithTwoJobs();
    const bySurface = JSON.parse((await run(['usage', '--by', 'surface', '--json'], env)).stdout) as { rows: { key: string; jobs: number }[] };
    expect(bySurface.rows).toEqual([expect.objectContaining({ key: 'cli', jobs: 2 })]);
    const byUser = JSON.parse((await run(['usage', '--by', 'user', '--json'], env)).stdout) as { rows: { key: string }[] };
    expect(byUser.rows[0]!.key).toMatch(/^cli:/);
  });

  it('writes one CSV row per job, quoting a prompt with commas, quotes and a line break, and defusing a leading =', async () => {
    const { env } = await ledgerWithTwoJobs(['a "quoted", two-line\nprompt', '=HYPERLINK("x")']);
    const { code, stdout } = await run(['usage', '--csv'], env);
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toBe('time,day,month,surface,user,scope,operation,n,size,quality,cost_usd,basis,reserved_usd,request_id,prompt,job_id');
    expect(stdout).toContain('"a ""quoted"", two-line\nprompt"');
    expect(stdout).toContain(`"'=HYPERLINK(""x"")"`);
    expect(stdout).toMatch(/,cli,cli:[^,]+,cli,generate,1,1024x1024,low,0\.00636,table,,/);
  });

  it('names in --help every column --csv writes, in the order it writes them', async () => {
    const { env } = await ledgerWithTwoJobs();
    const header = (await run(['usage', '--csv'], env)).stdout.split('\n')[0]!;
    const { code, stdout } = await run(['usage', '--help']);
    expect(code).toBe(0);
    const listed = /--csv\s+one row per job, with the columns ([^.]+)\./.exec(stdout)?.[1]?.replace(/\s+/g, ' ');
    expect(listed).toBe(header.split(',').join(', '));
  });

  it('draws a bar per day on a terminal, and no bars elsewhere', async () => {
    const { env } = await ledgerWithTwoJobs();
    const onTerminal = await run(['usage'], env, { stdoutIsTerminal: true });
    expect(onTerminal.stdout).toMatch(new RegExp(`${today()}\\s+2\\s+3\\s+\\$0\\.0191\\s+█+`));
    expect((await run(['usage'], env)).stdout).not.toContain('█');
  });

  it('says nothing was recorded yet when there is no ledger, and creates none', async () => {
    const dir = await tempDir();
    const { code, stdout } = await run(['usage'], { PICTOR_DATA_DIR: `${dir}/none` });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Nothing recorded yet/);
    expect(existsSync(`${dir}/none`)).toBe(false);
  });

  it('says nothing was recorded yet in a data folder that exists but holds no ledger (a fresh container’s /data), not that it does not exist', async () => {
    const dir = await tempDir();
    const account = await run(['usage'], { PICTOR_DATA_DIR: dir });
    expect(account.stdout).toMatch(new RegExp(`^Nothing recorded yet in the account's ledger in ${dir}\\. `));
    expect(account.stdout).toContain('pictor usage --emulator');
    const emulator = await run(['usage', '--emulator'], { PICTOR_DATA_DIR: dir });
    expect(emulator.stdout).toMatch(new RegExp(`^Nothing recorded yet in the emulator's ledger in ${dir}/emulator\\. `));
    expect(`${account.stdout}${emulator.stdout}`).not.toContain('does not exist');
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses bad dates, a period that ends before it starts, an unknown grouping and two formats, naming the flag (exit 2)', async () => {
    const env = { PICTOR_DATA_DIR: await tempDir() };
    expect(await run(['usage', '--since', '2026-02-30'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('--since must be a UTC day') });
    expect(await run(['usage', '--since', '2026-11-10', '--until', '2026-11-01'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('is after --until') });
    expect(await run(['usage', '--by', 'model'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('--by must be one of day, user, scope, surface') });
    expect(await run(['usage', '--json', '--csv'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('--json and --csv') });
  });
});
