import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runConsole } from '../../../src/cli/commands/console.js';
import type { CliContext } from '../../../src/cli/context.js';
import { readCoreConfig } from '../../../src/config.js';
import { silentLogger } from '../../../src/internal.js';
import { FileQuotaStore } from '../../../src/spend/FileQuotaStore.js';
import { run } from '../run-cli.js';

function context(env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  const ctx: CliContext = { stdout: (l) => out.push(l), stderr: (l) => err.push(l), env, connect: () => Promise.reject(new Error('unused')), client: (c) => c.client };
  return { ctx, out, err };
}

describe('pictor console', () => {
  it('serves the CLI’s and n8n’s ledger alone, printing its address and a link that logs in once, until stopped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-console-cli-'));
    try {
      const ledger = new FileQuotaStore({ dir });
      await ledger.open();
      expect(await ledger.reserve({ jobId: 'n1', userKey: 'n8n:wf', scopeKey: 'n8n', estimateUsd: 0.1, limits: {}, now: Date.now() })).toEqual({ ok: true });
      await ledger.markSent('n1');
      await ledger.settle('n1', 0.042);
      await ledger.close();
      const env = { PICTOR_DATA_DIR: dir, PICTOR_BASE_URL: 'http://127.0.0.1:9', PICTOR_API_KEY: 'k' };
      const { ctx, out } = context(env);
      const stop = new AbortController();
      const running = runConsole(['--port', '0'], ctx, readCoreConfig(env), silentLogger(), stop.signal);
      await expect.poll(() => out.length).toBe(2);
      expect(out[0]).toMatch(new RegExp(`^Pictor console at http://127\\.0\\.0\\.1:\\d+ \\(the account's file ledger in ${dir}\\)\\.$`));
      const link = /^Log in: (\S+) /.exec(out[1]!)![1]!;
      const login = await fetch(link, { redirect: 'manual' });
      expect(login.status).toBe(303);
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const spend = await (await fetch(new URL('/spend', link), { headers: { cookie } })).text();
      expect(spend).toContain('data-figure="surface-month:n8n">$0.0420');
      stop.abort();
      expect(await running).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses to listen beyond this machine without a token, naming PICTOR_CONSOLE_TOKEN (exit 2)', async () => {
    const { code, stderr } = await run(['console', '--host', '0.0.0.0', '--port', '0']);
    expect(code).toBe(2);
    expect(stderr).toContain('PICTOR_CONSOLE_TOKEN must be set for the console to listen on 0.0.0.0');
  });

  it('explains itself with --help', async () => {
    const { code, stdout } = await run(['console', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: pictor console [--port P] [--host H] [--emulator]');
  });
});
