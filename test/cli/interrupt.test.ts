import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { interruptReport } from '../../src/cli/interrupt.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { useEmulator } from '../helpers/emulator.js';
import { waitUntil } from '../helpers/runner-harness.js';
import { CLI_ENTRY, REPO_ROOT, tempDir } from './run-cli.js';

const env = useEmulator();
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

describe('Ctrl+C during a generation', () => {
  it('says whether the job may have been billed and which images were written', () => {
    expect(interruptReport({ phase: 'waiting', files: [] })).toEqual(['pictor: interrupted before the request was sent: nothing was billed.']);
    expect(interruptReport({ phase: 'sent', files: [] })).toEqual([
      'pictor: interrupted after the request was sent: the service may finish the job and bill it; check your usage before trying again.',
      'No image had arrived yet, so none was written.',
    ]);
    expect(interruptReport({ phase: 'sent', files: ['/tmp/out/fox.partial-1.png'] })).toEqual([
      'pictor: interrupted after the request was sent: the service may finish the job and bill it; check your usage before trying again.',
      'Images written before the interruption (1):',
      '  /tmp/out/fox.partial-1.png',
    ]);
  });

  it('exits 130 after a request was sent, saying it may be billed and naming the partial image already written', async () => {
    // Partial images at 3 s and 6 s, the image at 9 s: interrupted between the first partial and the end.
    env.emulator.configure({ latencyMs: 9_000 });
    const dir = await tempDir();
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'generate', '--prompt', 'a slow fox', '--stream', '--partial-images', '2', '--out', `${dir}/fox.png`], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitUntil(() => stderr.includes('fox.partial-1.png'), 'the first partial image is written', 30_000);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('pictor: interrupted after the request was sent: the service may finish the job and bill it');
    expect(stderr).toContain(`  ${dir}/fox.partial-1.png`);
  }, 60_000);

  it('cancels a request it had sent before exiting 130: the job is charged as a cancel (basis estimate) and no reservation is left', async () => {
    // The image takes a minute: the request is at the service, unanswered, when Ctrl+C comes.
    env.emulator.configure({ latencyMs: 60_000 });
    const data = await tempDir();
    const out = await tempDir();
    const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI_ENTRY, 'generate', '--prompt', 'a slow fox', '--quality', 'low', '--out', `${out}/`], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_DATA_DIR: data },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitUntil(() => env.emulator.requests.length === 1, 'the service has the request', 30_000);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('pictor: interrupted after the request was sent');

    // The emulator's jobs go to its own ledger, inside the data folder.
    const store = new FileQuotaStore({ dir: join(data, 'emulator') });
    try {
      expect(await store.activeJobs()).toEqual([]);
      const records = await store.usage({});
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ outcome: 'cancelled', basis: 'estimate', images: 0, quality: 'low', costUsd: 0.00636 });
    } finally {
      await store.close();
    }
  }, 60_000);
});
