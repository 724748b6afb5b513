import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userDirectory } from '../../src/cli/main.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { type ChildOutput, outputOf } from '../helpers/child-output.js';
import { makeImage } from '../helpers/images.js';
import { useEmulator } from '../helpers/emulator.js';
import { CLI_ENTRY, run, spawnCli, tempDir } from './run-cli.js';

const env = useEmulator();

/**
 * A project folder named `name` whose `pictor` npm script runs this CLI (from the sources), with a `sub` folder in
 * it, as a clone of Pictor is (name `pictor`) or another project that runs `pictor` in its own script.
 */
async function npmProject(name: string): Promise<{ root: string; sub: string }> {
  const root = await tempDir();
  const sub = join(root, 'sub');
  await mkdir(sub);
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const script = `node --import '${tsx}' '${CLI_ENTRY}'`;
  await writeFile(join(root, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, scripts: { pictor: script } }));
  return { root, sub };
}

/** `npm run pictor -- <args>` in `cwd`, by npm itself, with only the environment given (no settings from this one). */
function npmRunPictor(args: string[], cwd: string): Promise<ChildOutput> {
  return outputOf(
    spawn('npm', ['run', '--silent', 'pictor', '--', ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, XDG_STATE_HOME: join(cwd, '.state'), npm_config_update_notifier: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/** A service that answers every request with `status` and an error whose message is `message`. */
let failing: { server: Server; url: string; requests: number; status: number; message: string };
beforeAll(async () => {
  const server = createServer((req, res) => {
    // Image requests only: a HEAD is the client asking whether this is a Pictor emulator.
    if (req.method === 'POST') failing.requests++;
    req.resume();
    req.on('end', () => {
      res.writeHead(failing.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: failing.message, type: 'server_error', code: null, param: null } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  failing = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: 0, status: 500, message: 'boom' };
});
afterAll(() => new Promise<void>((resolve) => failing.server.close(() => resolve())));

describe('pictor settings errors', () => {
  it('exits 2 with one line when .env is a directory, not a stack trace', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, '.env'));
    const { code, stderr } = await spawnCli(['price'], { cwd: dir });
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain(`${join(dir, '.env')} is a folder, not a file`);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 2 naming the .env file and the line number of a line that is not NAME=value, not its text, and sends nothing', async () => {
    const dir = await tempDir();
    // A comment missing its #: Node would read it and the cap under it as one name, and the job would run past the cap.
    await writeFile(join(dir, '.env'), `PICTOR_BASE_URL=${failing.url}\nPICTOR_API_KEY=sk-test-0123456789\nDaily cap for the team sk-secret-words\nPICTOR_ACCOUNT_DAILY_USD=0.01\n`);
    const before = failing.requests;
    const { code, stderr } = await spawnCli(['generate', '--prompt', 'x', '--out', 'out/'], { cwd: dir });
    expect(code).toBe(2);
    expect(stderr).toContain(join(dir, '.env'));
    expect(stderr).toMatch(/\bline 3\b/);
    expect(stderr).not.toContain('sk-secret-words');
    expect(failing.requests).toBe(before);
  });

  it('exits 2 naming a .env saved as UTF-16 (Windows Notepad\'s "Unicode"), whose cap would be lost, and sends nothing', async () => {
    const dir = await tempDir();
    const text = `PICTOR_BASE_URL=${failing.url}\nPICTOR_API_KEY=sk-test-0123456789\nPICTOR_ACCOUNT_DAILY_USD=0.01\n`;
    await writeFile(join(dir, '.env'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    const before = failing.requests;
    const { code, stderr } = await spawnCli(['generate', '--prompt', 'x', '--out', 'out/'], { cwd: dir });
    expect(code).toBe(2);
    expect(stderr).toContain(`${join(dir, '.env')} was saved as UTF-16`);
    expect(failing.requests).toBe(before);
  });

  it('warns on stderr of a .env name set on two lines, naming the lines, not the values, and goes on', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, '.env'), 'PICTOR_ACCOUNT_DAILY_USD=0.01\nPICTOR_ACCOUNT_DAILY_USD=\n');
    const { code, stderr } = await spawnCli(['price'], { cwd: dir });
    expect(code).toBe(0);
    expect(stderr).toContain(`pictor: warning: .env: PICTOR_ACCOUNT_DAILY_USD is set on lines 1 and 2 of ${join(dir, '.env')}`);
    expect(stderr).not.toContain('0.01');
  });

  it('exits 2 for a setting that is not valid', async () => {
    expect((await run(['price'], { PICTOR_TIMEOUT_SECONDS: 'soon' })).code).toBe(2);
    expect((await run(['price'], { PICTOR_LOG_FORMAT: 'xml' })).code).toBe(2);
  });
});

describe('pictor paths start where the user stands', () => {
  it('npm run pictor from a subfolder takes --image and --out from that folder, and .env and a relative PICTOR_DATA_DIR from the root', async () => {
    const { root, sub } = await npmProject('pictor');
    await writeFile(join(root, '.env'), `PICTOR_BASE_URL=${env.url}\nPICTOR_API_KEY=${DEV_API_KEY}\nPICTOR_DATA_DIR=ledger\n`);
    await writeFile(join(sub, '.env'), 'PICTOR_DATA_DIR=sub-ledger\n');
    await writeFile(join(root, 'a.png'), await makeImage('png'));
    const { code, stderr } = await npmRunPictor(['edit', '--prompt', 'x', '--quality', 'low', '--image', '../a.png', '--out', 'out/'], sub);
    expect(stderr).not.toContain('cannot read');
    expect(code).toBe(0);
    expect(await readdir(join(sub, 'out'))).toHaveLength(1);
    expect(await readdir(join(root, 'ledger'))).not.toHaveLength(0);
    await expect(readdir(join(sub, 'sub-ledger'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readdir(join(sub, 'ledger'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("npm run pictor from a subfolder keeps the root .env's daily cap, whatever a .env in the subfolder says", async () => {
    const { root, sub } = await npmProject('pictor');
    await writeFile(join(root, '.env'), `PICTOR_BASE_URL=${env.url}\nPICTOR_API_KEY=${DEV_API_KEY}\nPICTOR_DATA_DIR=ledger\nPICTOR_ACCOUNT_DAILY_USD=0.001\n`);
    await writeFile(join(sub, '.env'), 'PICTOR_ACCOUNT_DAILY_USD=100\n');
    const { code, stdout } = await npmRunPictor(['generate', '--prompt', 'x', '--quality', 'low', '--out', 'out/', '--json'], sub);
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, code: 'budget_account_daily', limitUsd: 0.001 });
    expect(code).toBe(1);
  });

  it("in another project's npm script, run from its subfolder, --image starts from that project's root, as npm runs every script", async () => {
    const { root, sub } = await npmProject('thumbnails');
    await writeFile(join(root, '.env'), `PICTOR_BASE_URL=${env.url}\nPICTOR_API_KEY=${DEV_API_KEY}\nPICTOR_DATA_DIR=ledger\n`);
    await writeFile(join(root, 'a.png'), await makeImage('png'));
    const { code, stderr } = await npmRunPictor(['edit', '--prompt', 'x', '--quality', 'low', '--image', 'a.png', '--out', 'out/'], sub);
    expect(stderr).not.toContain('cannot read');
    expect(code).toBe(0);
    expect(await readdir(join(root, 'out'))).toHaveLength(1);
  });

  it('runs when the folder npm was started from is gone, its .env read from the root', async () => {
    const { root, sub } = await npmProject('pictor');
    await writeFile(join(root, '.env'), 'PICTOR_ACCOUNT_DAILY_USD=7\n');
    await rm(sub, { recursive: true });
    const npmEnv = { INIT_CWD: sub, npm_package_name: 'pictor', npm_package_json: join(root, 'package.json') };
    const { code, stderr } = await spawnCli(['price', '--quality', 'low'], { cwd: root, env: npmEnv });
    expect(stderr).not.toMatch(/ENOENT|\n\s+at /);
    expect(code).toBe(0);
  });

  it('shows the absolute path of an image it cannot read', async () => {
    const dir = await tempDir();
    const { stderr } = await run(['edit', '--prompt', 'x', '--image', 'missing.png'], {}, { cwd: dir });
    expect(stderr).toContain(join(dir, 'missing.png'));
  });

  it("uses INIT_CWD only in Pictor's own npm script, not in a process started elsewhere with it inherited nor in another project's script", () => {
    const npmEnv = { INIT_CWD: '/home/user/sub', npm_package_name: 'pictor', npm_package_json: '/repo/package.json' };
    expect(userDirectory(npmEnv, '/repo')).toBe('/home/user/sub');
    expect(userDirectory(npmEnv, '/elsewhere')).toBe('/elsewhere');
    expect(userDirectory({ ...npmEnv, npm_package_name: 'thumbnails' }, '/repo')).toBe('/repo');
    expect(userDirectory({}, '/elsewhere')).toBe('/elsewhere');
  });
});

describe('pictor output is for humans', () => {
  it('prints no JSON log lines on retries, only sentences', async () => {
    failing.status = 500;
    const { code, stderr } = await spawnCli(['generate', '--prompt', 'x'], { env: { PICTOR_BASE_URL: failing.url, PICTOR_API_KEY: 'k-123456', PICTOR_MAX_RETRIES: '1' } });
    expect(code).toBe(1);
    expect(stderr).toContain('retry 1 in');
    expect(stderr.split('\n').filter((l) => l.trimStart().startsWith('{'))).toEqual([]);
  });

  it('gives JSON log lines with PICTOR_LOG_FORMAT=json', async () => {
    const { stderr } = await spawnCli(['generate', '--prompt', 'x'], {
      env: { PICTOR_BASE_URL: failing.url, PICTOR_API_KEY: 'k-123456', PICTOR_MAX_RETRIES: '1', PICTOR_LOG_FORMAT: 'json' },
    });
    expect(stderr.split('\n').some((l) => l.startsWith('{') && (JSON.parse(l) as { msg?: string }).msg !== undefined)).toBe(true);
  });

  it('strips escape sequences and control characters the server sends before they reach the terminal', async () => {
    failing.status = 400;
    failing.message = 'bad \u001b[2J\u001b[31mred\u001b]0;pwned\u0007 \r\u0008text';
    const { code, stderr, stdout } = await run(['generate', '--prompt', 'x', '--json'], { PICTOR_BASE_URL: failing.url, PICTOR_API_KEY: 'k-123456' });
    expect(code).toBe(1);
    expect(stderr).toContain('red');
    // eslint-disable-next-line no-control-regex -- looking for control characters is the point
    expect(stderr + stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  it('says a 200 that is not the images asked for may have been billed, and does not send it again', async () => {
    failing.status = 200;
    failing.message = 'not an image result';
    const before = failing.requests;
    const { code, stderr, stdout } = await run(['generate', '--prompt', 'x', '--json'], { PICTOR_BASE_URL: failing.url, PICTOR_API_KEY: 'k-123456' });
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, code: 'bad_response' });
    expect(stderr).toContain('may have been billed');
    expect(stderr.match(/billed/g), 'the billing sentence, once').toHaveLength(1);
    expect(failing.requests - before).toBe(1);
  });
});

describe('pictor when its reader is gone', () => {
  it('ends quietly with its own exit code, for every kind of command (pictor usage | head -1, --csv, --help, a job)', async () => {
    const dataDir = await tempDir();
    const runs = await Promise.all([
      spawnCli(['usage'], { env: { PICTOR_DATA_DIR: dataDir }, stdoutGone: true }),
      spawnCli(['usage', '--csv'], { env: { PICTOR_DATA_DIR: dataDir }, stdoutGone: true }),
      spawnCli(['--help'], { stdoutGone: true }),
      spawnCli(['generate', '--prompt', 'a fox', '--quality', 'low', '--out', `${dataDir}/`], { env: { PICTOR_DATA_DIR: dataDir }, stdoutGone: true }),
    ]);
    for (const { code, stderr } of runs) {
      expect(stderr).not.toMatch(/EPIPE|Error:|\n\s+at /);
      expect(code).toBe(0);
    }
  });
});
