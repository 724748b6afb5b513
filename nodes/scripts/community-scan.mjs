// Checks the package with n8n's own scanner for community packages
// (@n8n/scan-community-package, the gate n8n runs before it verifies a
// package): its ESLint configuration and file selection, on the sources and
// on the packed tarball, as its CLI does for a published package. The CLI
// itself needs the package on npm with provenance, so this runs the same
// check on this checkout.
//
// The scanner is installed once into ../.cache/ with --ignore-scripts: it
// depends on the latest n8n-workflow, whose isolated-vm needs Node.js 24 to
// build and is never loaded by the scan.
//
// The rules that only n8n Cloud needs cannot be met by a package with runtime
// dependencies, by design (see README, "Install"): no-runtime-dependencies,
// and those n8n's own plugin leaves out of its self-hosted config
// (recommendedWithoutN8nCloudSupport: restricted imports and globals, which
// the bundled core and its dependencies use). Their findings are listed, not
// counted. Anything else fails the check (exit 1).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SCANNER_VERSION = '0.32.0';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const scannerHome = join(packageDir, '..', '.cache', `scan-community-package-${SCANNER_VERSION}`);
const scannerModule = join(scannerHome, 'node_modules', '@n8n', 'scan-community-package', 'scanner', 'scanner.mjs');
const npm = (args, cwd) => execFileSync('npm', args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });

if (!existsSync(scannerModule)) {
  console.log(`installing @n8n/scan-community-package@${SCANNER_VERSION} into ${scannerHome}`);
  mkdirSync(scannerHome, { recursive: true });
  writeFileSync(join(scannerHome, 'package.json'), '{ "private": true }\n');
  npm(['install', '--ignore-scripts', '--no-audit', '--no-fund', `@n8n/scan-community-package@${SCANNER_VERSION}`], scannerHome);
}

// ESLint and its plugins resolve from the scanner's own folder.
const { buildScanConfig, SOURCE_FILE_PATTERNS } = await import(pathToFileURL(scannerModule).href);
const fromScanner = createRequire(scannerModule);
const { ESLint } = fromScanner('eslint');
const glob = fromScanner('fast-glob');
const { configs } = fromScanner('@n8n/eslint-plugin-community-nodes').n8nCommunityNodesPlugin;
const selfHostedRules = Object.keys(configs.recommendedWithoutN8nCloudSupport.rules);
const CLOUD_ONLY_RULES = new Set([
  '@n8n/community-nodes/no-runtime-dependencies',
  ...Object.keys(configs.recommended.rules).filter((rule) => !selfHostedRules.includes(rule)),
]);
console.log(`n8n Cloud rules, not counted: ${[...CLOUD_ONLY_RULES].join(', ')}`);

async function scan(label, dir, patterns) {
  const eslint = new ESLint({ cwd: dir, allowInlineConfig: false, overrideConfigFile: true, overrideConfig: await buildScanConfig() });
  const files = glob.sync(patterns, { cwd: dir, absolute: true, ignore: ['node_modules/**', '**/package-lock.json'] });
  const results = await eslint.lintFiles(files);
  let errors = 0;
  for (const result of results) {
    for (const message of result.messages) {
      const where = `${result.filePath.slice(dir.length + 1)}:${message.line}`;
      if (CLOUD_ONLY_RULES.has(message.ruleId)) console.log(`  n8n Cloud only (by design): ${where} ${message.ruleId}`);
      else if (message.severity === 2) {
        errors++;
        console.log(`  ERROR ${where} ${message.ruleId}: ${message.message}`);
      } else console.log(`  warning ${where} ${message.ruleId}: ${message.message}`);
    }
  }
  console.log(`${label}: ${files.length} files, ${errors} error(s)`);
  return errors;
}

const work = mkdtempSync(join(tmpdir(), 'pictor-scan-'));
try {
  npm(['run', 'build'], packageDir);
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', work], packageDir));
  const unpacked = join(work, 'package');
  execFileSync('tar', ['-xzf', join(work, packed[0].filename), '-C', work]);
  if (!readdirSync(unpacked).includes('package.json')) throw new Error('the packed tarball has no package.json');
  let errors = await scan('sources (nodes/, credentials/, package.json)', packageDir, SOURCE_FILE_PATTERNS);
  errors += await scan(`tarball ${packed[0].filename} (*.js, package.json)`, unpacked, ['**/*.js', 'package.json']);
  console.log(errors === 0 ? 'n8n community-package scan: passed (apart from the n8n Cloud rules above)' : `n8n community-package scan: ${errors} error(s)`);
  process.exitCode = errors === 0 ? 0 : 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
