import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runConsole } from '../../../src/cli/commands/console.js';
import type { CliContext } from '../../../src/cli/context.js';
import { readCoreConfig } from '../../../src/config.js';
import { silentLogger } from '../../../src/internal.js';
import { FileQuotaStore } from '../../../src/spend/FileQuotaStore.js';
import type { Alert } from '../../../src/console/index.js';
import { waitOnRealClock } from '../../helpers/real-clock-wait.js';
import { CLI_ENTRY, REPO_ROOT, run } from '../run-cli.js';

function context(env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  let printedLine = () => {};
  /** Resolves once `ready` holds, checked as each line is printed: a wait on the output, not on the clock. */
  const printed = (ready: () => boolean) =>
    new Promise<void>((resolve) => {
      printedLine = () => void (ready() && resolve());
      printedLine();
    });
  const ctx: CliContext = {
    stdout: (l) => (out.push(l), printedLine()),
    stderr: (l) => (err.push(l), printedLine()),
    env,
    connect: () => Promise.reject(new Error('unused')),
    client: (c) => c.client,
  };
  return { ctx, out, err, printed };
}

/** Records one settled job in the file ledger of `dir` from a process of its own, as the bots or n8n would; its exit code. */
function recordJobElsewhere(dir: string): Promise<number | null> {
  const store = pathToFileURL(join(REPO_ROOT, 'src/spend/FileQuotaStore.ts')).href;
  const script = [
    `import { FileQuotaStore } from ${JSON.stringify(store)};`,
    `const ledger = new FileQuotaStore({ dir: ${JSON.stringify(dir)} });`,
    'await ledger.open();',
    "const reserved = await ledger.reserve({ jobId: 'j1', userKey: 'n8n:wf', scopeKey: 'n8n', estimateUsd: 0.1, limits: {}, now: Date.now() });",
    "if (!reserved.ok) process.exit(3);",
    "await ledger.markSent('j1');",
    "await ledger.settle('j1', 0.042);",
    'await ledger.close();',
  ].join('\n');
  const child = spawn(process.execPath, ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href, '--input-type=module', '-e', script], { cwd: REPO_ROOT, stdio: 'inherit' });
  return new Promise((resolve) => child.once('exit', resolve));
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
      const { ctx, out, printed } = context(env);
      const stop = new AbortController();
      const running = runConsole(['--port', '0'], ctx, readCoreConfig(env), silentLogger(), stop.signal);
      await Promise.race([printed(() => out.length >= 2), running]);
      expect(out).toHaveLength(2);
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

  it.each(['99999', '65536', 'http'])('refuses --port %s naming --port, not a variable that was not set (exit 2)', async (port) => {
    const { code, stderr } = await run(['console', '--port', port]);
    expect(code).toBe(2);
    expect(stderr).toContain(`--port must be a port number from 0 to 65535 (got "${port}")`);
    expect(stderr).not.toContain('PICTOR_CONSOLE_PORT');
  });

  it.each(['--port', '--host'])('refuses %s given without a value rather than taking the default (exit 2)', async (flag) => {
    const { code, stderr } = await run(['console', flag, ' ']);
    expect(code).toBe(2);
    expect(stderr).toContain(`${flag} was given without a value`);
  });

  it('refuses a --host that is not a host naming --host, not a variable that was not set (exit 2)', async () => {
    const { code, stderr } = await run(['console', '--host', 'a b', '--port', '0']);
    expect(code).toBe(2);
    expect(stderr).toContain('--host');
    expect(stderr).not.toContain('PICTOR_CONSOLE_HOST');
  });

  it('refuses to listen beyond this machine without a token, naming PICTOR_CONSOLE_TOKEN and the --host given (exit 2)', async () => {
    const { code, stderr } = await run(['console', '--host', '0.0.0.0', '--port', '0']);
    expect(code).toBe(2);
    expect(stderr).toContain('PICTOR_CONSOLE_TOKEN must be set for the console to listen on 0.0.0.0');
    expect(stderr).toContain('or leave --host unset to listen on this machine only');
    expect(stderr).not.toContain('PICTOR_CONSOLE_HOST');
  });

  it('says the same of PICTOR_CONSOLE_HOST when the host comes from it, not from --host (exit 2)', async () => {
    const { code, stderr } = await run(['console', '--port', '0'], { PICTOR_CONSOLE_HOST: '0.0.0.0' });
    expect(code).toBe(2);
    expect(stderr).toContain('or leave PICTOR_CONSOLE_HOST unset to listen on this machine only');
    expect(stderr).not.toContain('--host');
  });

  it('logs what it does at info by default, as the long-running server it is: a change of the alert rules is a line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-console-log-'));
    const child = spawn(process.execPath, ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href, CLI_ENTRY, 'console', '--port', '0'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PICTOR_DATA_DIR: dir, PICTOR_CONSOLE_ALLOW_CHANGES: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await expect.poll(() => /^Log in: (\S+) /m.exec(stdout)?.[1], { timeout: 20_000 }).toBeDefined();
      const link = /^Log in: (\S+) /m.exec(stdout)![1]!;
      const cookie = (await fetch(link, { redirect: 'manual' })).headers.get('set-cookie')!.split(';')[0]!;
      const alerts = await (await fetch(new URL('/alerts', link), { headers: { cookie } })).text();
      const csrf = /name="_csrf" value="([^"]+)"/.exec(alerts)![1]!;
      const saved = await fetch(new URL('/alerts/rules', link), { method: 'POST', body: new URLSearchParams({ _csrf: csrf, thresholds: '40, 90' }), headers: { cookie }, redirect: 'manual' });
      expect(saved.status).toBe(303);
      await expect.poll(() => stderr, { timeout: 10_000 }).toContain('pictor: the owner changed the alert rules');
    } finally {
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses a data folder that does not exist, naming PICTOR_DATA_DIR, and makes none (exit 2)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-console-missing-'));
    try {
      const missing = join(dir, 'mistyped');
      const { code, stderr } = await run(['console', '--port', '0'], { PICTOR_DATA_DIR: missing });
      expect(code).toBe(2);
      expect(stderr).toContain(`no ledger found in ${missing}: the folder does not exist. Is PICTOR_DATA_DIR the folder the bots or n8n write`);
      expect(existsSync(missing)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('serves a folder with no ledger in it with a warning on every page and in the log, until a job is recorded there', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-console-empty-'));
    try {
      await mkdir(join(dir, 'elsewhere'));
      const env = { PICTOR_DATA_DIR: join(dir, 'elsewhere'), PICTOR_BASE_URL: 'http://127.0.0.1:9', PICTOR_API_KEY: 'k' };
      const { ctx, out, printed } = context(env);
      const warnings: string[] = [];
      const logger = { ...silentLogger(), warn: (_fields: object, message?: string) => void warnings.push(message ?? '') };
      const stop = new AbortController();
      const running = runConsole(['--port', '0'], ctx, readCoreConfig(env), logger, stop.signal);
      await Promise.race([printed(() => out.length >= 2), running]);
      expect(out).toHaveLength(2);
      const said = `no ledger found in ${join(dir, 'elsewhere')}: is PICTOR_DATA_DIR the folder the bots or n8n write?`;
      expect(warnings.some((w) => w.startsWith(said))).toBe(true);
      const link = /^Log in: (\S+) /.exec(out[1]!)![1]!;
      const cookie = (await fetch(link, { redirect: 'manual' })).headers.get('set-cookie')!.split(';')[0]!;
      for (const path of ['/spend', '/jobs', '/settings', '/alerts']) {
        expect(await (await fetch(new URL(path, link), { headers: { cookie } })).text(), path).toContain(`<p class="problem" role="alert" data-warning="ledger">${said}`);
      }
      // A job recorded there by another process (the bots, n8n): the warning is gone from every page.
      expect(await recordJobElsewhere(join(dir, 'elsewhere'))).toBe(0);
      for (const path of ['/spend', '/jobs', '/settings', '/alerts']) {
        expect(await (await fetch(new URL(path, link), { headers: { cookie } })).text(), path).not.toContain('data-warning="ledger"');
      }
      stop.abort();
      expect(await running).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('sends an alert as soon as another process settles a job in its file ledger, not at the clock’s next check', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-console-watch-'));
    const alerts: Alert[] = [];
    const arrived = new EventEmitter();
    const hook = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString('utf8')));
      req.on('end', () => {
        alerts.push(JSON.parse(text) as Alert);
        res.writeHead(200).end();
        arrived.emit('change');
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    try {
      const env = {
        PICTOR_DATA_DIR: dir,
        PICTOR_BASE_URL: 'http://127.0.0.1:9',
        PICTOR_API_KEY: 'k',
        // The job elsewhere settles $0.042: what is left of the cap cannot take one more image.
        PICTOR_ACCOUNT_DAILY_USD: '0.08',
        PICTOR_ALERT_WEBHOOK_URL: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`,
        PICTOR_ALERT_WEBHOOK_SECRET: 'a-webhook-secret-for-the-test',
        // The clock's check is an hour away: only the job's write can bring the alert in time.
        PICTOR_ALERT_CHECK_SECONDS: '3600',
      };
      const { ctx, out, printed } = context(env);
      const stop = new AbortController();
      const running = runConsole(['--port', '0'], ctx, readCoreConfig(env), silentLogger(), stop.signal);
      await Promise.race([printed(() => out.some((l) => l.startsWith('Alerts: on'))), running]);
      expect(await recordJobElsewhere(dir)).toBe(0);
      const alert = await waitOnRealClock(() => alerts[0], 'the alert', { timeoutMs: 10_000, changes: arrived });
      expect(alert.cap).toMatchObject({ owner: 'account', trigger: 'full', limitUsd: 0.08, usedUsd: 0.042 });
      stop.abort();
      expect(await running).toBe(0);
    } finally {
      await new Promise((resolve) => hook.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('explains itself with --help', async () => {
    const { code, stdout } = await run(['console', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: pictor console [--port P] [--host H] [--emulator]');
  });
});
