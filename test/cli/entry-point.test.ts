import { createServer, type Server } from 'node:http';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userDirectory } from '../../src/cli/main.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { makeImage } from '../helpers/images.js';
import { useEmulator } from '../helpers/emulator.js';
import { REPO_ROOT, run, spawnCli, tempDir } from './run-cli.js';

const env = useEmulator();

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
    expect(stderr).toContain('.env');
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 2 for a setting that is not valid', async () => {
    expect((await run(['price'], { PICTOR_TIMEOUT_SECONDS: 'soon' })).code).toBe(2);
    expect((await run(['price'], { PICTOR_LOG_FORMAT: 'xml' })).code).toBe(2);
  });
});

describe('pictor paths start where the user stands', () => {
  it('resolves --image and --out against INIT_CWD when run as the package npm script', async () => {
    const project = await tempDir();
    const sub = join(project, 'sub');
    await mkdir(sub);
    await writeFile(join(project, 'a.png'), await makeImage('png'));
    const npmEnv = { INIT_CWD: sub, npm_package_json: join(REPO_ROOT, 'package.json'), PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY };
    const { code, stderr } = await spawnCli(['edit', '--prompt', 'x', '--image', '../a.png', '--out', 'out/'], { cwd: REPO_ROOT, env: npmEnv });
    expect(stderr).not.toContain('cannot read');
    expect(code).toBe(0);
    expect(await readdir(join(sub, 'out'))).toHaveLength(1);
  });

  it('reads .env and a relative PICTOR_DATA_DIR from INIT_CWD too when run as the package npm script', async () => {
    const sub = await tempDir();
    await writeFile(join(sub, '.env'), 'PICTOR_ACCOUNT_DAILY_USD=5\nPICTOR_DATA_DIR=ledger\n');
    const npmEnv = { INIT_CWD: sub, npm_package_json: join(REPO_ROOT, 'package.json'), PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY };
    const { code } = await spawnCli(['generate', '--prompt', 'x', '--quality', 'low', '--out', 'out/'], { cwd: REPO_ROOT, env: npmEnv });
    expect(code).toBe(0);
    expect(await readdir(join(sub, 'ledger'))).not.toHaveLength(0);
    await expect(readdir(join(REPO_ROOT, 'ledger'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('shows the absolute path of an image it cannot read', async () => {
    const dir = await tempDir();
    const { stderr } = await run(['edit', '--prompt', 'x', '--image', 'missing.png'], {}, { cwd: dir });
    expect(stderr).toContain(join(dir, 'missing.png'));
  });

  it('uses INIT_CWD only in the npm script itself, not in a process started elsewhere with it inherited', () => {
    const npmEnv = { INIT_CWD: '/home/user/sub', npm_package_json: '/repo/package.json' };
    expect(userDirectory(npmEnv, '/repo')).toBe('/home/user/sub');
    expect(userDirectory(npmEnv, '/elsewhere')).toBe('/elsewhere');
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
