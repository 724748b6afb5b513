// Builds the `pictor` command into dist/cli/: src/cli/bin.ts and everything it
// imports as ES modules, split into chunks so that each command, the emulator
// and the client's dependencies load only when a run needs them. Bundling the
// JavaScript packages too (undici, zod, bottleneck, …) is what makes a one-off
// command start fast: a few files to find and read instead of hundreds.
// Packages with native code or worker files of their own, and optional ones,
// stay external and are loaded from node_modules when used.
//
// `--outdir <dir>` builds elsewhere (the tests build a throwaway copy); the
// package ships dist/cli/.
import { build } from 'esbuild';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outArg = process.argv.indexOf('--outdir');
const outdir = outArg > 0 ? resolve(process.argv[outArg + 1]) : join(root, 'dist', 'cli');
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));

// sharp: native code; pino: starts worker threads from its own files; ioredis
// and yocto-spinner: used only with REDIS_URL or on a terminal.
const external = ['sharp', 'pino', 'ioredis', 'yocto-spinner'];

// undici's index also loads its mocks, caches, fetch, WebSocket and cookies
// (which make Node load its own copy of undici too): about a tenth of a
// one-off command's run (bench/RESULTS.md). The client's imports of `undici`
// get this module instead: the same undici files the index takes those names
// from, put together as the index does. It has named exports, so a name the
// client starts to import from undici and this lacks fails the build.
const UNDICI_USED = `
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import api from 'undici/lib/api/index.js';
import util from 'undici/lib/core/util.js';
import errors from 'undici/lib/core/errors.js';
import global from 'undici/lib/global.js';
import Agent from 'undici/lib/dispatcher/agent.js';
import Client from 'undici/lib/dispatcher/client.js';
import Pool from 'undici/lib/dispatcher/pool.js';
import ProxyAgent from 'undici/lib/dispatcher/proxy-agent.js';
import EnvHttpProxyAgent from 'undici/lib/dispatcher/env-http-proxy-agent.js';

Object.assign(Dispatcher.prototype, api);
export { Agent, Client, Dispatcher, EnvHttpProxyAgent, Pool, ProxyAgent };
export const { getGlobalDispatcher, setGlobalDispatcher } = global;
// FormData (multipart edits only) brings in much of undici's fetch and zlib: loaded on the first \`new FormData()\`,
// which gives undici's own FormData.
let UndiciFormData;
export function FormData() {
  UndiciFormData ??= require('undici/lib/web/fetch/formdata.js').FormData;
  return new UndiciFormData();
}

// undici's request(): its index wraps api.request like this.
export function request(url, opts, handler) {
  if (typeof opts === 'function') { handler = opts; opts = null; }
  if (!url || (typeof url !== 'string' && typeof url !== 'object' && !(url instanceof URL))) throw new errors.InvalidArgumentError('invalid url');
  if (opts != null && typeof opts !== 'object') throw new errors.InvalidArgumentError('invalid opts');
  if (opts && opts.path != null) {
    if (typeof opts.path !== 'string') throw new errors.InvalidArgumentError('invalid opts.path');
    const path = opts.path.startsWith('/') ? opts.path : '/' + opts.path;
    url = new URL(util.parseOrigin(url).origin + path);
  } else {
    if (!opts) opts = typeof url === 'object' ? url : {};
    url = util.parseURL(url);
  }
  const { agent, dispatcher = global.getGlobalDispatcher() } = opts;
  if (agent) throw new errors.InvalidArgumentError('unsupported opts.agent. Did you mean opts.client?');
  return api.request.call(dispatcher, { ...opts, origin: url.origin, path: url.search ? url.pathname + url.search : url.pathname, method: opts.method || (opts.body ? 'PUT' : 'GET') }, handler);
}
`;
const undiciUsed = {
  name: 'undici-used',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, (args) => (args.importer.startsWith(join(root, 'src')) ? { path: 'undici', namespace: 'undici-used' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'undici-used' }, () => ({ contents: UNDICI_USED, loader: 'js', resolveDir: root }));
  },
};

// zod re-exports all its locales (`z.locales`, 60 of them, a third of its
// code); Pictor speaks English and never reads `z.locales`. The bundle keeps
// only `en` (which zod itself installs), so a command compiles less code.
const zodLocales = join(root, 'node_modules', 'zod', 'v4', 'locales');
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${join('node_modules', 'zod', 'v4')}`) ? { path: 'zod-locales', namespace: 'zod-english-only' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, () => ({
      contents: `export { default as en } from ${JSON.stringify(join(zodLocales, 'en.js'))};`,
      loader: 'js',
      resolveDir: root,
    }));
  },
};

await rm(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { pictor: 'src/cli/bin.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  external,
  // Bundled CommonJS packages (undici, bottleneck, …) call require() for Node's own modules.
  banner: { js: "import { createRequire as __pictorCreateRequire } from 'node:module';\nconst require = __pictorCreateRequire(import.meta.url);" },
  // No source maps: they would point at src/ files the package does not ship.
  sourcemap: false,
  logLevel: 'warning',
  metafile: true,
  plugins: [undiciUsed, zodEnglishOnly],
});

const imported = new Set();
for (const output of Object.values(result.metafile.outputs)) {
  for (const i of output.imports) if (i.external) imported.add(i.path.split('/').slice(0, i.path.startsWith('@') ? 2 : 1).join('/'));
}
const undeclared = [...imported].filter((name) => !name.startsWith('node:') && !builtinModules.includes(name) && !(name in (pkg.dependencies ?? {})));
if (undeclared.length) {
  console.error(`build-cli: these imports are neither bundled nor declared as dependencies: ${undeclared.join(', ')}`);
  process.exit(1);
}
// The chunks are ES modules wherever they are built (dist/ inherits the root's "type": "module"; a throwaway copy does not).
await writeFile(join(outdir, 'package.json'), `${JSON.stringify({ type: 'module' })}\n`);
const files = Object.keys(result.metafile.outputs).length;
console.log(`build-cli: ${outdir} (${files} files; external: ${[...imported].filter((n) => !n.startsWith('node:') && !builtinModules.includes(n)).sort().join(', ') || 'none'})`);
