import { execFile, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { type ChildOutput, outputOf } from '../helpers/child-output.js';
import { useEmulator } from '../helpers/emulator.js';
import { makeImage } from '../helpers/images.js';
import { REPO_ROOT, tempDir } from './run-cli.js';

/**
 * The `pictor` command as installed: the bundle scripts/build-cli.mjs makes
 * (a throwaway copy, so a test never meets a stale dist/). The other CLI
 * tests run the sources; these check that the bundle is the same program.
 */
const env = useEmulator();
const outdir = join(tmpdir(), `pictor-cli-bundle-${process.pid}`);
const bin = join(outdir, 'pictor.js');
const loadsFile = join(outdir, 'loads.txt');

// Records every file the process loads through the module loader (commands, chunks, packages).
const RECORD_LOADS = `data:text/javascript,${encodeURIComponent(`
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(
  "import { appendFileSync } from 'node:fs';" +
  "export async function load(url, context, next) { if (url.startsWith('file:')) appendFileSync(process.env.RECORD_LOADS_TO, url + '\\\\n'); return next(url, context); }"
));`)}`;

function runBundle(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<ChildOutput> {
  return outputOf(
    spawn(process.execPath, ['--import', RECORD_LOADS, bin, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, RECORD_LOADS_TO: loadsFile, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/** Reads the request body, then drops the connection without answering: the body has left, so it may be billed. */
let dropping: { server: Server; url: string; requests: number };
beforeAll(async () => {
  await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'scripts', 'build-cli.mjs'), '--outdir', outdir]);
  const server = createServer((req, res) => {
    // Image requests only: a HEAD is the client asking whether this is a Pictor emulator.
    if (req.method === 'POST') dropping.requests++;
    req.resume();
    req.on('end', () => res.socket?.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  dropping = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: 0 };
}, 60_000);
afterAll(async () => {
  await new Promise<void>((resolve) => dropping.server.close(() => resolve()));
  await rm(outdir, { recursive: true, force: true });
});

describe('the built pictor command', () => {
  it('generates an image against a service reading only its own files, no package from node_modules', async () => {
    const out = await tempDir();
    await rm(loadsFile, { force: true });
    const { code, stderr } = await runBundle(['generate', '--prompt', 'a lighthouse', '--quality', 'low', '--out', `${out}/`], {
      PICTOR_BASE_URL: env.url,
      PICTOR_API_KEY: DEV_API_KEY,
    });
    expect(stderr).not.toContain('pictor:');
    expect(code).toBe(0);
    expect(await readdir(out)).toHaveLength(1);
    const loaded = (await readFile(loadsFile, 'utf8')).trim().split('\n');
    expect(loaded.length).toBeGreaterThan(1);
    expect(loaded.filter((url) => !url.startsWith(`file://${outdir}/`))).toEqual([]);
  });

  it('streams a generation with partial images', async () => {
    const out = await tempDir();
    const { code, stderr } = await runBundle(['generate', '--prompt', 'x', '--quality', 'low', '--stream', '--partial-images', '2', '--out', `${out}/`], {
      PICTOR_BASE_URL: env.url,
      PICTOR_API_KEY: DEV_API_KEY,
    });
    expect(stderr).not.toContain('pictor:');
    expect(code).toBe(0);
    expect((await readdir(out)).length).toBeGreaterThan(1);
  });

  it('edits an image (a multipart upload) against a service', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.png'), await makeImage('png'));
    const { code, stdout, stderr } = await runBundle(['edit', '--prompt', 'x', '--image', join(dir, 'a.png'), '--out', join(dir, 'out/'), '--json'], {
      PICTOR_BASE_URL: env.url,
      PICTOR_API_KEY: DEV_API_KEY,
    });
    expect(stderr).not.toContain('pictor:');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ ok: true });
    const edits = env.emulator.requests.filter((r) => r.path === '/v1/images/edits');
    expect(edits.map((r) => [r.status, r.images.length])).toEqual([[200, 1]]);
    expect(await readdir(join(dir, 'out'))).toHaveLength(1);
  });

  it('does not send a request again once its body has left and the connection broke', async () => {
    const { code, stdout } = await runBundle(['generate', '--prompt', 'x', '--json'], { PICTOR_BASE_URL: dropping.url, PICTOR_API_KEY: 'k-123456', PICTOR_MAX_RETRIES: '2' });
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ ok: false });
    expect(dropping.requests).toBe(1);
  });

  it('says which command is unknown and exits 2, like the sources', async () => {
    const { code, stderr } = await runBundle(['paint']);
    expect(code).toBe(2);
    expect(stderr).toContain('unknown command "paint"');
  });
});
