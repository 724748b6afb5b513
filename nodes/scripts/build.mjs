// Builds the installable package into dist/: each node and credential is one
// CommonJS file (n8n loads them with require) with the core bundled in — the
// sources imports name `pictor` and `pictor/internal`, which tsconfig.json's
// "paths" map to ../src (esbuild follows them; the root package.json's
// "sideEffects" lets it leave out what they do not use, such as the emulator);
// n8n-workflow (n8n's own copy) and the runtime dependencies stay external.
import { build } from 'esbuild';
import { cp, mkdir, readFile, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// `--outdir <dir>` builds elsewhere (the tests build a throwaway copy); the package ships dist/.
const outArg = process.argv.indexOf('--outdir');
const dist = outArg > 0 ? resolve(process.argv[outArg + 1]) : join(root, 'dist');
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));

const entries = [...pkg.n8n.nodes, ...pkg.n8n.credentials].map((built) => ({
  in: join(root, built.replace(/^dist\//, '').replace(/\.js$/, '.ts')),
  out: built.replace(/^dist\//, '').replace(/\.js$/, ''),
}));

await rm(dist, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: entries,
  outdir: dist,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // Bare imports (n8n-workflow, bottleneck, undici, zod) are required at run time; `pictor` (../src, mapped by
  // tsconfig.json's "paths" before this applies) is bundled.
  packages: 'external',
  // Said of every module the core's entries name, used or not; a bundled one that reads import.meta fails below.
  logOverride: { 'empty-import-meta': 'silent' },
  // No source maps: they would point at ../src files the package does not ship.
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
});

// What the package must never carry: the emulator, the bots, the console, the metrics, and anything the CommonJS
// output would break (import.meta is empty there).
const bundled = new Set(Object.values(result.metafile.outputs).flatMap((output) => Object.keys(output.inputs)));
const forbidden = [...bundled].filter((input) => /^\.\.\/(bots|src\/(emulator|console|metrics|cli))\//.test(input));
const readsImportMeta = [];
for (const input of bundled) {
  if (!input.startsWith('../src/')) continue;
  if (/\bimport\.meta\b/.test(await readFile(join(root, input), 'utf8'))) readsImportMeta.push(input);
}
if (forbidden.length || readsImportMeta.length) {
  console.error(`build: the bundle would carry ${[...forbidden, ...readsImportMeta].join(', ')} (the emulator, bots, console, metrics or CLI, or a module reading import.meta)`);
  process.exit(1);
}

const external = new Set();
for (const output of Object.values(result.metafile.outputs)) {
  for (const imported of output.imports) if (imported.external) external.add(imported.path.split('/').slice(0, imported.path.startsWith('@') ? 2 : 1).join('/'));
}
const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
const undeclared = [...external].filter((name) => !name.startsWith('node:') && !builtinModules.includes(name) && !declared.has(name));
if (undeclared.length) {
  console.error(`build: these imports are neither bundled nor declared as dependencies: ${undeclared.join(', ')}`);
  process.exit(1);
}

// Codex files and icons sit next to the built files, where n8n looks for them.
for (const built of pkg.n8n.nodes) {
  const codex = built.replace(/^dist\//, '').replace(/\.js$/, '.json');
  await mkdir(dirname(join(dist, codex)), { recursive: true });
  await cp(join(root, codex), join(dist, codex));
}
await cp(join(root, 'icons'), join(dist, 'icons'), { recursive: true });
console.log(`build: ${entries.length} entries into ${dist} (external: ${[...external].sort().join(', ')})`);

