/**
 * End-to-end test of the n8n node with a REAL n8n 2.8.4 (run: npm run test:n8n).
 *
 * 1. Installs n8n into the user's cache folder (~/.cache/pictor/n8n-2.8.4/, or
 *    $XDG_CACHE_HOME/pictor/…, or PICTOR_N8N_DIR) if it is not there yet, once
 *    per machine rather than once per clone (the recipe of wire-format.md: n8n +
 *    two @opentelemetry pins, xlsx override, legacy peers).
 * 2. Builds and packs nodes/ with the build-and-pack block of nodes/README.md,
 *    run as written in the repository's root.
 * 3. Starts the emulator on a free loopback port. Then twice, once per way
 *    n8n finds a package, in an empty home folder: runs the install block of
 *    nodes/README.md for that way exactly as written (the tarball's path put
 *    in for /path/to/…), imports a Pictor API credential and workflows, and
 *    runs them headless with `n8n execute --rawOutput`:
 *    - custom extensions (N8N_CUSTOM_EXTENSIONS): Generate 3 → Limit 1 → Edit;
 *    - community-packages folder (~/.n8n/nodes): a Code node makes three
 *      items, a prompt expression per item, one refused by moderation, an IF
 *      node branching on `code`; once with On Error → Continue and once with
 *      Continue (using error output); and Read/Write Files from Disk → Edit
 *      (N8N_RESTRICT_FILE_ACCESS_TO set to the folder); an Account Daily Cap
 *      under both On Error modes, and one typed as "$5" (every item fails with
 *      code validation_error, field accountDailyUsd). Then `n8n
 *      export:nodes` must list the tool variant n8n derives from the node.
 * 4. Checks the output of every node (images decoded to the requested size
 *    and format, the failed item's error fields, pairedItem) and what the
 *    emulator received.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import sharp from 'sharp';
import { createEmulator, DEV_API_KEY, type Emulator } from '../../../src/emulator/index.js';
import { withFileLock } from '../../../src/spend/file-lock.js';

const N8N_VERSION = '2.8.4';
const root = resolve(import.meta.dirname, '../../..');
const nodesDir = join(root, 'nodes');
/**
 * Where n8n is installed: 1.7 GB and up to half an hour to install, so once per machine (like a browser that a
 * test runner downloads), not once per clone. `PICTOR_N8N_DIR` names another folder.
 */
const n8nDir = process.env.PICTOR_N8N_DIR?.trim() || join(process.env.XDG_CACHE_HOME?.trim() || join(homedir(), '.cache'), 'pictor', `n8n-${N8N_VERSION}`);
const n8nBin = join(n8nDir, 'node_modules', '.bin', 'n8n');
const installedMarker = join(n8nDir, '.installed');
const sqliteBinding = join(n8nDir, 'node_modules', 'sqlite3', 'build', 'Release', 'node_sqlite3.node');
/** What the last `n8n execute` printed, kept for a look when something fails. */
const lastOutput = join(root, '.cache', 'n8n-e2e-last-output.log');
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command with a time limit; rejects when it fails, with the end of its output. With `stdoutFile` its stdout
 * goes to that file instead of a pipe: a process that exits right after printing a large output (n8n execute's
 * `--rawOutput`) can lose the end of what it wrote to a pipe, never what it wrote to a file.
 */
async function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number; stdoutFile?: string }): Promise<Ran> {
  const file = options.stdoutFile ? await open(options.stdoutFile, 'w') : undefined;
  try {
    const ran = await new Promise<Ran>((resolvePromise, reject) => {
      const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', file ? file.fd : 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
      child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolvePromise({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
      });
    });
    if (options.stdoutFile) ran.stdout = await readFile(options.stdoutFile, 'utf8');
    if (ran.code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${ran.code}\n${(ran.stdout + ran.stderr).slice(-4000)}`);
    return ran;
  } finally {
    await file?.close();
  }
}

/** The committed package.json and lockfile the runtime is installed from: a change to them installs it again. */
const runtimeDir = join(import.meta.dirname, 'n8n-runtime');
const lockDigest = async () =>
  createHash('sha256')
    .update(await readFile(join(runtimeDir, 'package.json')))
    .update(await readFile(join(runtimeDir, 'package-lock.json')))
    .digest('hex');

async function n8nInstalled(): Promise<boolean> {
  if (!existsSync(n8nBin) || !existsSync(sqliteBinding)) return false;
  const marker = await readFile(installedMarker, 'utf8').catch(() => '');
  return marker.trim() === (await lockDigest());
}

/**
 * Installs n8n once per machine. Two clones testing at once share the folder,
 * so the install runs under a lock beside it (held by this process's pid: a
 * run killed mid-install leaves a lock the next one breaks), and a run that
 * waited finds the other's install done.
 */
async function ensureN8n(): Promise<void> {
  if (await n8nInstalled()) {
    console.log(`n8n ${N8N_VERSION} already installed in ${n8nDir}`);
    return;
  }
  await mkdir(dirname(n8nDir), { recursive: true });
  await withFileLock(`${n8nDir}.lock`, installN8n, { timeoutMs: 60 * 60_000 });
}

async function installN8n(): Promise<void> {
  if (await n8nInstalled()) {
    console.log(`n8n ${N8N_VERSION} was installed in ${n8nDir} by another run while this one waited`);
    return;
  }
  console.log(`installing n8n ${N8N_VERSION} into ${n8nDir} from its lockfile (once; a few minutes)…`);
  await mkdir(n8nDir, { recursive: true });
  // The tree is resolved once, when the lockfile is made (see n8n-runtime/README.md): npm ci only downloads and unpacks it.
  for (const file of ['package.json', 'package-lock.json']) await copyFile(join(runtimeDir, file), join(n8nDir, file));
  await run('npm', ['ci', '--prefer-offline', '--legacy-peer-deps', '--no-audit', '--no-fund'], { cwd: n8nDir, timeoutMs: 40 * 60_000 });
  // An install stopped while sqlite3 was building leaves the package without its binding, and npm install then
  // counts it as installed: build it again.
  if (!existsSync(sqliteBinding)) await run('npm', ['rebuild', 'sqlite3'], { cwd: n8nDir, timeoutMs: 15 * 60_000 });
  if (!existsSync(sqliteBinding)) throw new Error(`npm installed n8n but did not build sqlite3's binding (${sqliteBinding}); n8n cannot open its database without it`);
  await writeFile(installedMarker, `${await lockDigest()}\n`);
  console.log(`n8n installed (${elapsed()})`);
}

/**
 * Builds and packs nodes/ by running the README's build-and-pack block as written (the sh block with
 * `npm pack --workspace nodes`), in the repository's root as the README says; moves the tarball it made into `work`.
 */
async function packPackage(work: string): Promise<string> {
  const readme = await readFile(join(nodesDir, 'README.md'), 'utf8');
  const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('npm pack --workspace nodes'));
  if (!block) throw new Error('nodes/README.md has no sh block with npm pack --workspace nodes');
  const { version } = JSON.parse(await readFile(join(nodesDir, 'package.json'), 'utf8')) as { version: string };
  const filename = `n8n-nodes-pictor-${version}.tgz`;
  check(`README build-and-pack block names the tarball it makes (${filename})`, block.includes(filename), block);
  await rm(join(root, filename), { force: true });
  await run('bash', ['-euo', 'pipefail', '-c', block], { cwd: root, timeoutMs: 600_000 });
  const tarball = join(work, filename);
  // Copied, not renamed: the work folder may be on another file system.
  await copyFile(join(root, filename), tarball);
  await rm(join(root, filename));
  const listed = await run('tar', ['-tzf', tarball], { cwd: work, timeoutMs: 60_000 });
  const files = listed.stdout.split('\n').filter(Boolean).map((line) => line.replace(/^package\//, ''));
  for (const required of ['package.json', 'dist/nodes/PictorImage/PictorImage.node.js', 'dist/nodes/PictorImage/PictorImage.node.json', 'dist/credentials/PictorApi.credentials.js']) {
    if (!files.includes(required)) throw new Error(`the packed package lacks ${required}`);
  }
  console.log(`packed ${filename} with the README's block (${files.length} files, ${elapsed()})`);
  return tarball;
}

const readmePath = join(nodesDir, 'README.md');
const TARBALL_PLACEHOLDER = /\/path\/to\/(n8n-nodes-pictor-[\w.-]+\.tgz)/g;

/**
 * The README's install block for one route: the ```sh block containing
 * `marker`, minus the line that starts n8n (its N8N_CUSTOM_EXTENSIONS is
 * returned, with ~ for the home folder), with the packed tarball for the path.
 */
async function readmeRecipe(marker: string, tarball: string): Promise<{ script: string; customExtensions?: string }> {
  const readme = await readFile(readmePath, 'utf8');
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const block = blocks.find((b) => b.includes(marker) && b.includes('npm install'));
  if (!block) throw new Error(`nodes/README.md has no sh block installing into ${marker}`);
  let customExtensions: string | undefined;
  const lines: string[] = [];
  for (const line of block.split('\n')) {
    if (/\bn8n start\b/.test(line)) customExtensions = /N8N_CUSTOM_EXTENSIONS=(\S+)/.exec(line)?.[1];
    else lines.push(line);
  }
  const named = [...block.matchAll(TARBALL_PLACEHOLDER)].map((m) => m[1]);
  check(`README ${marker} recipe names the packed tarball (${basename(tarball)})`, named.length > 0 && named.every((n) => n === basename(tarball)), JSON.stringify(named));
  return { script: lines.join('\n').replace(TARBALL_PLACEHOLDER, tarball), ...(customExtensions ? { customExtensions } : {}) };
}

/**
 * npm's own settings and cache stay those of this machine (its registry);
 * everything else sees an empty home folder.
 */
async function npmSettings(): Promise<NodeJS.ProcessEnv> {
  const get = async (key: string) => (await run('npm', ['config', 'get', key], { cwd: root, timeoutMs: 30_000 })).stdout.trim();
  return { npm_config_userconfig: await get('userconfig'), npm_config_cache: await get('cache') };
}

/** Runs a README install block in `home` as the user would, in bash with -e. */
async function runRecipe(script: string, home: string, npmEnv: NodeJS.ProcessEnv): Promise<void> {
  await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: home, env: { ...process.env, ...npmEnv, HOME: home }, timeoutMs: 240_000 });
}


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

interface RunOut {
  runData: Record<string, { data?: { main: (ItemOut[] | null)[] }; error?: unknown }[]>;
}

/** `n8n execute --rawOutput` of one imported workflow, parsed. */
async function execute(workflowId: string, cwd: string, env: NodeJS.ProcessEnv): Promise<RunOut> {
  const executed = await run(n8nBin, ['execute', `--id=${workflowId}`, '--rawOutput'], { cwd, env, timeoutMs: 180_000, stdoutFile: `${lastOutput}.stdout` });
  await writeFile(lastOutput, `${executed.stdout}\n--- stderr ---\n${executed.stderr}`);
  // n8n prints the run data through its logger, which may colour it.
  // eslint-disable-next-line no-control-regex
  const printed = executed.stdout.replace(/\u001b\[[0-9;]*m/g, '');
  // The run data is one pretty-printed object, from a line that is `{` to one that is `}`: a log line n8n prints
  // after it on a busy machine (`Registered runner "JS Task Runner" …`) is not part of it.
  const jsonStart = printed.search(/^\{/m);
  const jsonEnd = printed.lastIndexOf('\n}');
  if (jsonStart < 0 || jsonEnd < jsonStart) throw new Error(`no JSON in the output of n8n execute (all of it is in ${lastOutput})`);
  const output = JSON.parse(printed.slice(jsonStart, jsonEnd + 2)) as { data: { resultData: RunOut } };
  console.log(`n8n ran workflow ${workflowId} (${elapsed()})`);
  return output.data.resultData;
}

const outputOf = (out: RunOut, name: string, index = 0): ItemOut[] | undefined => out.runData[name]?.[0]?.data?.main[index] ?? undefined;

function n8nEnv(home: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: home,
    N8N_USER_FOLDER: home,
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
}

async function importAll(pass: string, env: NodeJS.ProcessEnv, credential: object | object[], workflows: object[]): Promise<void> {
  await writeFile(join(pass, 'credentials.json'), JSON.stringify(Array.isArray(credential) ? credential : [credential]));
  await writeFile(join(pass, 'workflows.json'), JSON.stringify(workflows));
  await run(n8nBin, ['import:credentials', `--input=${join(pass, 'credentials.json')}`], { cwd: pass, env, timeoutMs: 120_000 });
  await run(n8nBin, ['import:workflow', `--input=${join(pass, 'workflows.json')}`], { cwd: pass, env, timeoutMs: 120_000 });
}

const credentialId = 'pictorE2eCred001';
const credentialRef = { pictorApi: { id: credentialId, name: 'Pictor emulator' } };
const credentialFor = (baseUrl: string) => ({ id: credentialId, name: 'Pictor emulator', type: 'pictorApi', data: { apiKey: DEV_API_KEY, baseUrl } });

/** Custom-extensions folder: Generate 3 → Limit 1 → Edit, installed by the README's custom-extensions block. */
async function customExtensionsPass(tarball: string, work: string, npmEnv: NodeJS.ProcessEnv, emulator: Emulator, baseUrl: string): Promise<void> {
  const route = 'custom-extensions';
  emulator.reset();
  const home = join(work, route);
  await mkdir(home, { recursive: true });
  const recipe = await readmeRecipe('~/n8n-custom', tarball);
  await runRecipe(recipe.script, home, npmEnv);
  if (!recipe.customExtensions) throw new Error('the README custom-extensions block does not set N8N_CUSTOM_EXTENSIONS');
  const extensions = recipe.customExtensions.replace(/^~/, home);
  check(`${route}: README recipe installed the package where N8N_CUSTOM_EXTENSIONS points`, existsSync(join(extensions, 'package.json')), extensions);
  check(`${route}: README recipe left n8n-workflow to n8n`, !existsSync(join(home, 'n8n-custom', 'node_modules', 'n8n-workflow')));
  const env = { ...n8nEnv(home), N8N_CUSTOM_EXTENSIONS: extensions };
  const nodeType = 'CUSTOM.pictorImage';
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
  await importAll(home, env, credentialFor(baseUrl), [workflow]);
  const out = await execute(workflowId, home, env);

  await checkImages(`${route} Generate`, outputOf(out, 'Generate'), { count: 3, width: 1536, height: 1024, format: 'webp', mime: 'image/webp' });
  check(`${route} First: one item`, outputOf(out, 'First')?.length === 1);
  await checkImages(`${route} Edit`, outputOf(out, 'Edit'), { count: 1, width: 1024, height: 1024, format: 'png', mime: 'image/png' });
  const editJson = outputOf(out, 'Edit')?.[0]?.json ?? {};
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

const SUBJECTS = ['a lighthouse', 'a forbidden door', 'a red fox'];
/** The Code node's output: one item per subject. */
const SUBJECTS_CODE = `return ${JSON.stringify(SUBJECTS)}.map((subject) => ({ json: { subject } }));`;

/** Manual Trigger → Code (3 subjects) → Pictor Generate (prompt expression, On Error `onError`) → IF `code` is moderation_blocked. */
function refusalWorkflow(id: string, nodeType: string, onError: 'continueRegularOutput' | 'continueErrorOutput'): object {
  const errorOutput = onError === 'continueErrorOutput';
  return {
    id,
    name: `Pictor e2e: one refused item, ${onError}`,
    active: false,
    settings: { executionOrder: 'v1' },
    nodes: [
      { id: 'b1', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
      { id: 'b2', name: 'Subjects', type: 'n8n-nodes-base.code', typeVersion: 2, position: [200, 0], parameters: { jsCode: SUBJECTS_CODE } },
      {
        id: 'b3',
        name: 'Paint',
        type: nodeType,
        typeVersion: 1,
        position: [400, 0],
        onError,
        parameters: { operation: 'generate', prompt: '=a watercolour of {{ $json.subject }}', size: '1024x1024', quality: 'low', options: { imagesPerMinute: 120 } },
        credentials: credentialRef,
      },
      {
        id: 'b4',
        name: 'Refused?',
        type: 'n8n-nodes-base.if',
        typeVersion: 2.2,
        position: [600, 100],
        parameters: {
          conditions: {
            options: { caseSensitive: true, leftValue: '', typeValidation: 'loose', version: 2 },
            conditions: [{ id: 'c1', leftValue: '={{ $json.code }}', rightValue: 'moderation_blocked', operator: { type: 'string', operation: 'equals' } }],
            combinator: 'and',
          },
          looseTypeValidation: true,
          options: {},
        },
      },
      { id: 'b5', name: 'Painted', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [600, -100], parameters: {} },
    ],
    connections: {
      Start: { main: [[{ node: 'Subjects', type: 'main', index: 0 }]] },
      Subjects: { main: [[{ node: 'Paint', type: 'main', index: 0 }]] },
      Paint: {
        main: errorOutput
          ? [[{ node: 'Painted', type: 'main', index: 0 }], [{ node: 'Refused?', type: 'main', index: 0 }]]
          : [[{ node: 'Refused?', type: 'main', index: 0 }]],
      },
    },
  };
}

const CAP_SUBJECTS = ['a lighthouse', 'a harbour', 'a red fox'];
/** The table price of one low 1024x1024 image; the cap below leaves room for two of the three. */
const LOW_USD = 0.00636;
const CAP_USD = 0.015;

/** A credential with an Account Daily Cap and its own ledger folder. */
const cappedCredential = (id: string, baseUrl: string, ledgerFolder: string) => ({
  id,
  name: `Pictor capped ${id}`,
  type: 'pictorApi',
  data: { apiKey: DEV_API_KEY, baseUrl, accountDailyUsd: String(CAP_USD), ledgerFolder },
});

/** Manual Trigger → Code (3 subjects) → Pictor Generate under a cap with room for two (On Error `onError`) → IF `code` is budget_account_daily. */
function capWorkflow(id: string, nodeType: string, onError: 'continueRegularOutput' | 'continueErrorOutput', credential: { id: string; name: string }): object {
  const workflow = refusalWorkflow(id, nodeType, onError) as { name: string; nodes: { name: string; parameters: Record<string, unknown>; credentials?: object }[] };
  workflow.name = `Pictor e2e: an account cap refuses the third item, ${onError}`;
  for (const node of workflow.nodes) {
    if (node.name === 'Subjects') node.parameters.jsCode = `return ${JSON.stringify(CAP_SUBJECTS)}.map((subject) => ({ json: { subject } }));`;
    if (node.name === 'Paint') node.credentials = { pictorApi: { id: credential.id, name: credential.name } };
    if (node.name === 'Refused?') {
      const conditions = (node.parameters.conditions as { conditions: { rightValue: string }[] }).conditions;
      conditions[0]!.rightValue = 'budget_account_daily';
    }
  }
  return workflow;
}

/** Manual Trigger → Read/Write Files from Disk (a PNG in the allowed folder) → Pictor Edit. */
function fileEditWorkflow(id: string, nodeType: string, photo: string): object {
  return {
    id,
    name: 'Pictor e2e: edit a file read from disk',
    active: false,
    settings: { executionOrder: 'v1' },
    nodes: [
      { id: 'c1', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
      { id: 'c2', name: 'Read Photo', type: 'n8n-nodes-base.readWriteFile', typeVersion: 1, position: [200, 0], parameters: { operation: 'read', fileSelector: photo, options: {} } },
      {
        id: 'c3',
        name: 'Edit Photo',
        type: nodeType,
        typeVersion: 1,
        position: [400, 0],
        parameters: { operation: 'edit', prompt: 'make it look like a postcard', inputBinaryFields: 'data', size: '1024x1536', outputFormat: 'jpeg' },
        credentials: credentialRef,
      },
    ],
    connections: {
      Start: { main: [[{ node: 'Read Photo', type: 'main', index: 0 }]] },
      'Read Photo': { main: [[{ node: 'Edit Photo', type: 'main', index: 0 }]] },
    },
  };
}

/** The fields a failed item must carry, whichever error mode; `code` above all, since workflows branch on it. */
function checkRefusedItem(label: string, item: ItemOut | undefined, itemIndex: number): void {
  const json = item?.json ?? {};
  check(`${label}: the refused item keeps code moderation_blocked`, json.code === 'moderation_blocked', JSON.stringify(json).slice(0, 300));
  check(
    `${label}: the refused item keeps error, description and itemIndex`,
    typeof json.error === 'string' && /safety|moderation|rejected/i.test(json.error) && typeof json.description === 'string' && json.description.length > 0 && json.itemIndex === itemIndex,
    JSON.stringify(json).slice(0, 300),
  );
  check(`${label}: the refused item points at its input item and has no image`, JSON.stringify(item?.pairedItem) === JSON.stringify({ item: itemIndex }) && item?.binary === undefined, JSON.stringify(item?.pairedItem));
}

/** Community-packages folder (~/.n8n/nodes, the README's block): the workflows a user builds, and the tool variant. */
async function communityPackagePass(tarball: string, work: string, npmEnv: NodeJS.ProcessEnv, emulator: Emulator, baseUrl: string): Promise<void> {
  const route = 'community-package';
  const home = join(work, route);
  await mkdir(home, { recursive: true });
  const recipe = await readmeRecipe('~/.n8n/nodes', tarball);
  await runRecipe(recipe.script, home, npmEnv);
  const installed = join(home, '.n8n', 'nodes', 'node_modules');
  check(`${route}: README recipe installed the package in a fresh home`, existsSync(join(installed, 'n8n-nodes-pictor', 'package.json')));
  check(`${route}: README recipe left n8n-workflow to n8n`, !existsSync(join(installed, 'n8n-workflow')));

  const files = join(work, 'files');
  await mkdir(files, { recursive: true });
  const photo = join(files, 'photo.png');
  await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 30, g: 120, b: 200 } } }).png().toFile(photo);
  const env = { ...n8nEnv(home), N8N_RESTRICT_FILE_ACCESS_TO: files };
  const nodeType = 'n8n-nodes-pictor.pictorImage';
  const capContinue = cappedCredential('pictorE2eCapCont', baseUrl, join(work, 'ledger-continue'));
  const capErrorOut = cappedCredential('pictorE2eCapErrO', baseUrl, join(work, 'ledger-error-output'));
  // A cap typed as "$5": bad input in the credential, failed like a bad parameter.
  const badCap = { ...cappedCredential('pictorE2eBadCap0', baseUrl, join(work, 'ledger-bad-cap')), name: 'Pictor cap typed as $5' };
  badCap.data.accountDailyUsd = '$5';
  await importAll(home, env, [credentialFor(baseUrl), capContinue, capErrorOut, badCap], [
    refusalWorkflow('pictorE2eContinue', nodeType, 'continueRegularOutput'),
    refusalWorkflow('pictorE2eErrorOut', nodeType, 'continueErrorOutput'),
    fileEditWorkflow('pictorE2eFileEdit', nodeType, photo),
    capWorkflow('pictorE2eCapContinue', nodeType, 'continueRegularOutput', capContinue),
    capWorkflow('pictorE2eCapErrorOut', nodeType, 'continueErrorOutput', capErrorOut),
    capWorkflow('pictorE2eBadCap', nodeType, 'continueRegularOutput', badCap),
  ]);

  const subjectsOk = (out: RunOut) => JSON.stringify(outputOf(out, 'Subjects')?.map((i) => i.json.subject)) === JSON.stringify(SUBJECTS);

  // On Error → Continue: every item on the one output, in input order.
  emulator.reset();
  let label = `${route} Continue`;
  let out = await execute('pictorE2eContinue', home, env);
  check(`${label} Subjects: three items`, subjectsOk(out));
  const painted = outputOf(out, 'Paint') ?? [];
  check(`${label} Paint: three items in input order`, painted.length === 3 && painted.every((item, i) => JSON.stringify(item.pairedItem) === JSON.stringify({ item: i })), JSON.stringify(painted.map((i) => i.pairedItem)));
  await checkImages(`${label} Paint (made)`, [painted[0], painted[2]].filter((i): i is ItemOut => i !== undefined), { count: 2, width: 1024, height: 1024, format: 'png', mime: 'image/png' });
  check(`${label} Paint: prompts from the expression`, painted[0]?.json.prompt === 'a watercolour of a lighthouse' && painted[2]?.json.prompt === 'a watercolour of a red fox');
  checkRefusedItem(`${label} Paint`, painted[1], 1);
  check(`${label} Refused?: true branch holds only the refused item`, JSON.stringify(outputOf(out, 'Refused?', 0)?.map((i) => i.json.code)) === '["moderation_blocked"]');
  check(`${label} Refused?: false branch holds the two images`, outputOf(out, 'Refused?', 1)?.length === 2 && (outputOf(out, 'Refused?', 1) ?? []).every((i) => i.binary?.data !== undefined));
  check(`${label} emulator: three generations, one refused with 400`, emulator.requests.filter((r) => r.route === 'generations').length === 3 && emulator.requests.filter((r) => r.status === 400).length === 1);

  // On Error → Continue (using error output): successes on the main output, the refusal on the error output.
  emulator.reset();
  label = `${route} Continue (using error output)`;
  out = await execute('pictorE2eErrorOut', home, env);
  check(`${label} Subjects: three items`, subjectsOk(out));
  const main = outputOf(out, 'Paint', 0) ?? [];
  const failed = outputOf(out, 'Paint', 1) ?? [];
  await checkImages(`${label} Paint main output`, main, { count: 2, width: 1024, height: 1024, format: 'png', mime: 'image/png' });
  check(`${label} Paint main output: pairedItem 0 and 2`, JSON.stringify(main.map((i) => i.pairedItem)) === JSON.stringify([{ item: 0 }, { item: 2 }]));
  check(`${label} Paint error output: one item`, failed.length === 1, `got ${failed.length}`);
  checkRefusedItem(`${label} Paint error output`, failed[0], 1);
  check(`${label} Paint error output: n8n adds the input item's fields`, failed[0]?.json.subject === 'a forbidden door');
  check(`${label} Painted: the two images`, outputOf(out, 'Painted')?.length === 2);
  check(`${label} Refused?: true branch holds the refused item`, JSON.stringify(outputOf(out, 'Refused?', 0)?.map((i) => i.json.code)) === '["moderation_blocked"]');
  check(`${label} Refused?: false branch is empty`, (outputOf(out, 'Refused?', 1) ?? []).length === 0);

  // A file read from disk (inside N8N_RESTRICT_FILE_ACCESS_TO) → Edit.
  emulator.reset();
  label = `${route} file edit`;
  out = await execute('pictorE2eFileEdit', home, env);
  const read = outputOf(out, 'Read Photo')?.[0];
  check(`${label} Read Photo: the PNG as binary data`, outputOf(out, 'Read Photo')?.length === 1 && read?.binary?.data?.mimeType === 'image/png' && read.binary.data.fileName === 'photo.png', JSON.stringify(read?.binary?.data ? { ...read.binary.data, data: undefined } : null));
  await checkImages(`${label} Edit Photo`, outputOf(out, 'Edit Photo'), { count: 1, width: 1024, height: 1536, format: 'jpeg', mime: 'image/jpeg' });
  const edit = emulator.requests.find((r) => r.route === 'edits');
  check(`${label} emulator: one edit with the file as an image/png part`, emulator.requests.length === 1 && edit?.images.length === 1 && edit.images[0]?.contentType === 'image/png', JSON.stringify(edit?.images.map((i) => i.contentType)));

  // An Account Daily Cap with room for two of three images, On Error → Continue: the third item says why, nothing is sent for it.
  emulator.reset();
  label = `${route} cap Continue`;
  out = await execute('pictorE2eCapContinue', home, env);
  const capped = outputOf(out, 'Paint') ?? [];
  check(`${label} Paint: two images, then the refused item`, capped.length === 3 && capped[0]?.binary?.data !== undefined && capped[1]?.binary?.data !== undefined, JSON.stringify(capped.map((i) => i.json.code ?? 'image')));
  checkBudgetItem(label, capped[2], 2);
  check(`${label} Refused?: true branch holds only the refused item`, JSON.stringify(outputOf(out, 'Refused?', 0)?.map((i) => i.json.code)) === '["budget_account_daily"]');
  check(`${label} emulator: two generations, none for the refused item`, emulator.requests.filter((r) => r.route === 'generations').length === 2);
  const ledger = JSON.parse(await readFile(join(work, 'ledger-continue', 'quota-ledger.json'), 'utf8')) as { spent: Record<string, Record<string, number>> };
  const today = new Date().toISOString().slice(0, 10);
  check(`${label} ledger: the two images settled under the account`, Math.abs((ledger.spent[today]?.account ?? 0) - 2 * LOW_USD) < 1e-9, JSON.stringify(ledger.spent[today]));

  // The same with Continue (using error output): the refused item on the error output, with the input item's fields.
  emulator.reset();
  label = `${route} cap error output`;
  out = await execute('pictorE2eCapErrorOut', home, env);
  check(`${label} Paint main output: the two images`, (outputOf(out, 'Paint', 0) ?? []).filter((i) => i.binary?.data !== undefined).length === 2);
  const refusedCap = outputOf(out, 'Paint', 1) ?? [];
  check(`${label} Paint error output: one item`, refusedCap.length === 1, `got ${refusedCap.length}`);
  checkBudgetItem(label, refusedCap[0], 2);
  check(`${label} Paint error output: n8n adds the input item's fields`, refusedCap[0]?.json.subject === CAP_SUBJECTS[2]);
  check(`${label} emulator: two generations`, emulator.requests.filter((r) => r.route === 'generations').length === 2);

  // A credential whose Account Daily Cap is "$5", On Error → Continue: every item fails as bad input naming the credential field.
  emulator.reset();
  label = `${route} bad cap Continue`;
  out = await execute('pictorE2eBadCap', home, env);
  const badCapItems = outputOf(out, 'Paint') ?? [];
  check(
    `${label} Paint: each item fails with code validation_error and field accountDailyUsd`,
    badCapItems.length === CAP_SUBJECTS.length &&
      badCapItems.every(
        (item, i) =>
          item.json.code === 'validation_error' && item.json.field === 'accountDailyUsd' && item.json.itemIndex === i && /Account Daily Cap \(USD\) "\$5"/.test(String(item.json.error)),
      ),
    JSON.stringify(badCapItems.map((i) => i.json)).slice(0, 400),
  );
  check(`${label} emulator: nothing sent`, emulator.requests.length === 0);

  await checkToolVariant(route, home, env);
}

function checkBudgetItem(label: string, item: ItemOut | undefined, itemIndex: number): void {
  const json = item?.json ?? {};
  check(
    `${label}: the refused item keeps the cap's code (budget_account_daily), what is left and when it resets`,
    json.code === 'budget_account_daily' &&
      json.limitUsd === CAP_USD &&
      Math.abs(Number(json.leftUsd) - (CAP_USD - 2 * LOW_USD)) < 1e-9 &&
      /T00:00:00\.000Z$/.test(String(json.resetsAt)) &&
      json.itemIndex === itemIndex &&
      /Nothing was sent/.test(String(json.description)),
    JSON.stringify(json).slice(0, 400),
  );
  check(`${label}: the refused item points at its input item and has no image`, JSON.stringify(item?.pairedItem) === JSON.stringify({ item: itemIndex }) && item?.binary === undefined);
}

interface NodeTypeOut {
  name: string;
  description?: string;
  properties?: { name: string; description?: string; options?: { value?: unknown; description?: string }[] }[];
}

/** n8n derives `<name>Tool` from a usableAsTool node for AI agents: it must load and describe its parameters for a model. */
async function checkToolVariant(route: string, home: string, env: NodeJS.ProcessEnv): Promise<void> {
  const file = join(home, 'node-types.json');
  await run(n8nBin, ['export:nodes', `--output=${file}`], { cwd: home, env, timeoutMs: 120_000 });
  const types = JSON.parse(await readFile(file, 'utf8')) as NodeTypeOut[];
  const tool = types.find((t) => t.name === 'n8n-nodes-pictor.pictorImageTool');
  check(`${route} tool: n8n lists n8n-nodes-pictor.pictorImageTool next to the node`, tool !== undefined && types.some((t) => t.name === 'n8n-nodes-pictor.pictorImage'), `${types.length} types`);
  const property = (name: string) => tool?.properties?.find((p) => p.name === name);
  check(`${route} tool: has the tool description parameter n8n adds`, property('toolDescription') !== undefined || property('descriptionType') !== undefined);
  check(`${route} tool: prompt is described for a model`, /description of the image/i.test(property('prompt')?.description ?? '') && /subject|style/i.test(property('prompt')?.description ?? ''), property('prompt')?.description);
  for (const name of ['size', 'quality']) {
    const p = property(name);
    const values = (p?.options ?? []).map((o) => String(o.value));
    check(
      `${route} tool: ${name} names every choice in its description, and each choice is described`,
      values.length > 1 && values.every((v) => p?.description?.includes(v)) && (p?.options ?? []).every((o) => (o.description ?? '').length > 0),
      p?.description,
    );
  }
}

async function main(): Promise<void> {
  await mkdir(dirname(lastOutput), { recursive: true });
  await ensureN8n();
  const work = await mkdtemp(join(tmpdir(), 'pictor-n8n-e2e-'));
  // Posing as the real service (no x-pictor-emulator): the cap workflows' jobs are the account's, in the credential's ledger folder.
  const emulator = createEmulator({ identifyAsEmulator: false });
  const server = await emulator.listen({ port: 0 });
  try {
    const tarball = await packPackage(work);
    const npmEnv = await npmSettings();
    await customExtensionsPass(tarball, work, npmEnv, emulator, server.url);
    await communityPackagePass(tarball, work, npmEnv, emulator, server.url);
  } finally {
    await emulator.close();
    await rm(work, { recursive: true, force: true });
  }
}

const deadline = setTimeout(() => {
  console.error(`n8n e2e: gave up after ${elapsed()}`);
  process.exit(1);
}, 52 * 60_000);
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
