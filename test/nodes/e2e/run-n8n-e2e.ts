/**
 * End-to-end test of the n8n node with a REAL n8n 2.8.4 (run: npm run test:n8n).
 *
 * 1. Installs n8n into .cache/n8n-2.8.4/ if it is not there yet (the recipe of
 *    wire-format.md: n8n + two @opentelemetry pins, xlsx override, legacy peers).
 * 2. Builds and packs nodes/ (`npm pack`).
 * 3. Starts the emulator on a free loopback port. Then twice, once per way
 *    n8n finds a package (a folder named by N8N_CUSTOM_EXTENSIONS, and n8n's
 *    community-packages folder <user folder>/.n8n/nodes), in a fresh isolated
 *    N8N_USER_FOLDER: installs the tarball as a user would (runtime
 *    dependencies only; n8n-workflow comes from n8n), imports a Pictor API
 *    credential and a workflow (Manual Trigger → Generate 3 images → Limit 1 →
 *    Edit with a second prompt), and runs it headless with
 *    `n8n execute --rawOutput`.
 * 4. Checks that every binary decodes to an image of the requested size and
 *    format, and what the emulator received.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { createEmulator, DEV_API_KEY, type Emulator } from '../../../src/emulator/index.js';

const N8N_VERSION = '2.8.4';
const root = resolve(import.meta.dirname, '../../..');
const nodesDir = join(root, 'nodes');
const n8nDir = join(root, '.cache', `n8n-${N8N_VERSION}`);
const n8nBin = join(n8nDir, 'node_modules', '.bin', 'n8n');
const installedMarker = join(n8nDir, '.installed');
/** What the last `n8n execute` printed, kept for a look when something fails. */
const lastOutput = join(root, '.cache', 'n8n-e2e-last-output.log');
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command with a time limit; rejects when it fails, with the end of its output. */
function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Ran> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise({ code, stdout, stderr });
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}\n${(stdout + stderr).slice(-4000)}`));
    });
  });
}

async function ensureN8n(): Promise<void> {
  if (existsSync(installedMarker) && existsSync(n8nBin)) {
    console.log(`n8n ${N8N_VERSION} already installed in ${n8nDir}`);
    return;
  }
  console.log(`installing n8n ${N8N_VERSION} into ${n8nDir} (a few minutes, once)…`);
  await mkdir(n8nDir, { recursive: true });
  await writeFile(
    join(n8nDir, 'package.json'),
    `${JSON.stringify(
      {
        name: 'pictor-n8n-e2e-runtime',
        private: true,
        description: 'A real n8n for the end-to-end test of nodes/ (installed by test/nodes/e2e/run-n8n-e2e.ts).',
        dependencies: { n8n: N8N_VERSION, '@opentelemetry/core': '2.1.0', '@opentelemetry/api': '1.9.0' },
        overrides: { xlsx: '0.18.5' },
      },
      null,
      2,
    )}\n`,
  );
  await run('npm', ['install', '--legacy-peer-deps', '--no-audit', '--no-fund'], { cwd: n8nDir, timeoutMs: 9 * 60_000 });
  await writeFile(installedMarker, `${new Date().toISOString()}\n`);
  console.log(`n8n installed (${elapsed()})`);
}

/** Builds and packs nodes/ with `npm pack`; returns the tarball. */
async function packPackage(work: string): Promise<string> {
  await run('npm', ['run', 'build'], { cwd: nodesDir, timeoutMs: 120_000 });
  const packed = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: nodesDir, timeoutMs: 120_000 });
  const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  const files = info!.files.map((f) => f.path);
  for (const required of ['package.json', 'dist/nodes/PictorImage/PictorImage.node.js', 'dist/nodes/PictorImage/PictorImage.node.json', 'dist/credentials/PictorApi.credentials.js']) {
    if (!files.includes(required)) throw new Error(`the packed package lacks ${required}`);
  }
  console.log(`packed ${info!.filename} (${files.length} files, ${elapsed()})`);
  return join(work, info!.filename);
}

/** Installs the tarball into `folder` as a user would: runtime dependencies only, n8n-workflow left to n8n. */
async function installPackage(tarball: string, folder: string): Promise<string> {
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'package.json'), '{ "private": true }\n');
  await run('npm', ['install', '--omit=dev', '--legacy-peer-deps', '--ignore-scripts', '--no-audit', '--no-fund', tarball], { cwd: folder, timeoutMs: 180_000 });
  if (existsSync(join(folder, 'node_modules', 'n8n-workflow'))) throw new Error('n8n-workflow was installed with the package; it must come from n8n');
  return join(folder, 'node_modules', 'n8n-nodes-pictor');
}

/**
 * How n8n finds the package: a custom-extensions folder (N8N_CUSTOM_EXTENSIONS,
 * node type CUSTOM.pictorImage), or n8n's community-packages folder
 * (<user folder>/.n8n/nodes, read through the package.json `n8n` field, node
 * type n8n-nodes-pictor.pictorImage), where Settings → Community Nodes installs.
 */
type Route = 'custom-extensions' | 'community-package';

interface BinaryOut {
  data?: string;
  id?: string;
  mimeType: string;
  fileName?: string;
  fileExtension?: string;
}
interface ItemOut {
  json: Record<string, unknown>;
  binary?: Record<string, BinaryOut>;
  pairedItem?: unknown;
}

const results: { name: string; ok: boolean; detail?: string }[] = [];
function check(name: string, ok: boolean, detail?: string): void {
  results.push({ name, ok, ...(detail ? { detail } : {}) });
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${!ok && detail ? `: ${detail}` : ''}`);
}

async function checkImages(label: string, items: ItemOut[] | undefined, expected: { count: number; width: number; height: number; format: string; mime: string }) {
  check(`${label}: ${expected.count} item(s)`, items?.length === expected.count, `got ${items?.length}`);
  for (const [i, item] of (items ?? []).entries()) {
    const binary = item.binary?.data;
    if (!binary?.data) {
      check(`${label} item ${i}: binary data inline`, false, JSON.stringify(binary ?? null).slice(0, 200));
      continue;
    }
    const meta = await sharp(Buffer.from(binary.data, 'base64')).metadata();
    const got = `${meta.width}x${meta.height} ${meta.format} ${binary.mimeType} .${binary.fileExtension}`;
    const want = `${expected.width}x${expected.height} ${expected.format} ${expected.mime} .${binary.fileName?.split('.').pop()}`;
    check(`${label} item ${i}: decodes to ${expected.width}x${expected.height} ${expected.format}`, got === want, `got ${got}, want ${want}`);
    check(`${label} item ${i}: json and pairedItem`, item.json.size === `${expected.width}x${expected.height}` && item.json.format === expected.format && item.pairedItem !== undefined);
  }
}

async function runPass(route: Route, tarball: string, work: string, emulator: Emulator, baseUrl: string): Promise<void> {
  emulator.reset();
  const pass = join(work, route);
  const userFolder = join(pass, 'user');
  await mkdir(userFolder, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    N8N_USER_FOLDER: userFolder,
    N8N_ENCRYPTION_KEY: 'pictor-e2e-encryption-key',
    // Binaries inline in the --rawOutput JSON, so they can be decoded here.
    N8N_DEFAULT_BINARY_DATA_MODE: 'default',
    N8N_DIAGNOSTICS_ENABLED: 'false',
    N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
    N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
    // n8n prints the --rawOutput JSON at log level info: lower levels would hide it.
    N8N_LOG_LEVEL: process.env.PICTOR_E2E_N8N_LOG_LEVEL ?? 'info',
    DB_TYPE: 'sqlite',
  };
  let nodeType: string;
  if (route === 'custom-extensions') {
    env.N8N_CUSTOM_EXTENSIONS = await installPackage(tarball, join(pass, 'extensions'));
    nodeType = 'CUSTOM.pictorImage';
  } else {
    await installPackage(tarball, join(userFolder, '.n8n', 'nodes'));
    nodeType = 'n8n-nodes-pictor.pictorImage';
  }
  const credential = { id: 'pictorE2eCred001', name: 'Pictor emulator', type: 'pictorApi', data: { apiKey: DEV_API_KEY, baseUrl } };
  const credentialRef = { pictorApi: { id: credential.id, name: credential.name } };
  const workflowId = 'pictorE2eFlow001';
  const workflow = {
    id: workflowId,
    name: 'Pictor e2e: generate 3, edit the first',
    active: false,
    settings: { executionOrder: 'v1' },
    nodes: [
      { id: 'a1', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
      {
        id: 'a2',
        name: 'Generate',
        type: nodeType,
        typeVersion: 1,
        position: [220, 0],
        parameters: { operation: 'generate', prompt: 'a lighthouse at dusk', n: 3, size: '1536x1024', quality: 'low', outputFormat: 'webp', options: { imagesPerMinute: 120 } },
        credentials: credentialRef,
      },
      { id: 'a3', name: 'First', type: 'n8n-nodes-base.limit', typeVersion: 1, position: [440, 0], parameters: { maxItems: 1 } },
      {
        id: 'a4',
        name: 'Edit',
        type: nodeType,
        typeVersion: 1,
        position: [660, 0],
        parameters: { operation: 'edit', prompt: 'add a red boat', inputBinaryFields: 'data', size: '1024x1024', outputFormat: 'png', background: 'transparent' },
        credentials: credentialRef,
      },
    ],
    connections: {
      Start: { main: [[{ node: 'Generate', type: 'main', index: 0 }]] },
      Generate: { main: [[{ node: 'First', type: 'main', index: 0 }]] },
      First: { main: [[{ node: 'Edit', type: 'main', index: 0 }]] },
    },
  };
  await writeFile(join(pass, 'credentials.json'), JSON.stringify([credential]));
  await writeFile(join(pass, 'workflow.json'), JSON.stringify(workflow));
  await run(n8nBin, ['import:credentials', `--input=${join(pass, 'credentials.json')}`], { cwd: pass, env, timeoutMs: 120_000 });
  await run(n8nBin, ['import:workflow', `--input=${join(pass, 'workflow.json')}`], { cwd: pass, env, timeoutMs: 120_000 });
  const executed = await run(n8nBin, ['execute', `--id=${workflowId}`, '--rawOutput'], { cwd: pass, env, timeoutMs: 180_000 });
  console.log(`${route}: n8n ran the workflow with node type ${nodeType} (${elapsed()})`);

  await writeFile(lastOutput, `${executed.stdout}\n--- stderr ---\n${executed.stderr}`);
  // n8n prints the run data through its logger, which may colour it.
  // eslint-disable-next-line no-control-regex
  const printed = executed.stdout.replace(/\u001b\[[0-9;]*m/g, '');
  const jsonStart = printed.search(/^\{/m);
  if (jsonStart < 0) throw new Error(`no JSON in the output of n8n execute (all of it is in ${lastOutput})`);
  const output = JSON.parse(printed.slice(jsonStart)) as {
    data: { resultData: { runData: Record<string, { data?: { main: ItemOut[][] }; error?: unknown }[]> } };
  };
  const runData = output.data.resultData.runData;
  const itemsOf = (name: string) => runData[name]?.[0]?.data?.main[0];

  await checkImages(`${route} Generate`, itemsOf('Generate'), { count: 3, width: 1536, height: 1024, format: 'webp', mime: 'image/webp' });
  await checkImages(`${route} Edit`, itemsOf('Edit'), { count: 1, width: 1024, height: 1024, format: 'png', mime: 'image/png' });
  const editJson = itemsOf('Edit')?.[0]?.json ?? {};
  check(
    `${route} Edit: json says edit, prompt and cost basis`,
    editJson.operation === 'edit' && editJson.prompt === 'add a red boat' && (editJson.cost as { basis?: string })?.basis === 'estimate',
  );

  const requests = emulator.requests;
  const generation = requests.find((r) => r.route === 'generations');
  const editRequest = requests.find((r) => r.route === 'edits');
  check(
    `${route} emulator: one generation of n=3 webp`,
    requests.filter((r) => r.route === 'generations').length === 1 && generation?.parsed?.n === 3 && generation.parsed.output_format === 'webp',
  );
  check(
    `${route} emulator: one edit with the first generated image as an image/webp part`,
    requests.filter((r) => r.route === 'edits').length === 1 && editRequest?.images.length === 1 && editRequest.images[0]?.contentType === 'image/webp',
    JSON.stringify(editRequest?.images.map((i) => ({ contentType: i.contentType, filename: i.filename }))),
  );
  check(`${route} emulator: no 429 and nothing failed`, emulator.stats().rateLimited === 0 && requests.every((r) => r.status === 200), JSON.stringify(emulator.stats().byStatus));
}

async function main(): Promise<void> {
  await ensureN8n();
  const work = await mkdtemp(join(tmpdir(), 'pictor-n8n-e2e-'));
  const emulator = createEmulator();
  const server = await emulator.listen({ port: 0 });
  try {
    const tarball = await packPackage(work);
    for (const route of ['custom-extensions', 'community-package'] as const) await runPass(route, tarball, work, emulator, server.url);
  } finally {
    await emulator.close();
    await rm(work, { recursive: true, force: true });
  }
}

const deadline = setTimeout(() => {
  console.error(`n8n e2e: gave up after ${elapsed()}`);
  process.exit(1);
}, 9.5 * 60_000);
deadline.unref();

main().then(
  () => {
    const failed = results.filter((r) => !r.ok).length;
    console.log(`n8n e2e finished in ${elapsed()}`);
    console.log(`e2e: ${results.length - failed} passed, ${failed} failed`);
    process.exit(failed === 0 && results.length > 0 ? 0 : 1);
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    console.log(`e2e: ${results.filter((r) => r.ok).length} passed, ${results.filter((r) => !r.ok).length + 1} failed`);
    process.exit(1);
  },
);
