import { execFile } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * What the two published packages (pictor at the root, n8n-nodes-pictor in
 * nodes/) carry, as `npm pack` sees it, and what they tell users about
 * themselves. Scripts are not run: this looks at the file lists only.
 */
const root = resolve(import.meta.dirname, '..');
const packages = { pictor: root, 'n8n-nodes-pictor': join(root, 'nodes') };
const run = promisify(execFile);

interface Manifest {
  name: string;
  license: string;
  repository?: { type: string; url: string; directory?: string };
  engines: { node: string };
}
const manifest = async (dir: string) => JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Manifest;

async function packedFiles(dir: string): Promise<string[]> {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir });
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { files: { path: string }[] }[];
  return info!.files.map((f) => f.path);
}

const buildOut = join(tmpdir(), `pictor-package-files-${process.pid}`);
afterAll(() => rm(buildOut, { recursive: true, force: true }));

describe('the published packages', () => {
  it.each(Object.entries(packages))('%s ships the MIT LICENSE it declares', async (name, dir) => {
    const pkg = await manifest(dir);
    expect(pkg.name).toBe(name);
    expect(pkg.license).toBe('MIT');
    expect(await packedFiles(dir)).toContain('LICENSE');
    expect(await readFile(join(dir, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
  });

  it.each(Object.entries(packages))('%s says which repository it comes from', async (_name, dir) => {
    const pkg = await manifest(dir);
    expect(pkg.repository?.type).toBe('git');
    expect(pkg.repository?.url).toMatch(/^git\+https:\/\/.+\.git$/);
    if (dir !== root) expect(pkg.repository?.directory).toBe('nodes');
  });

  it('pictor ships the file its pictor command runs, and the npm script runs the same file', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };
    expect(await packedFiles(root)).toContain(pkg.bin.pictor);
    expect(pkg.scripts.pictor).toBe(`node ${pkg.bin.pictor}`);
  });

  it('n8n-nodes-pictor builds without source maps, which would point at ../src files it does not ship', async () => {
    await run(process.execPath, [join(root, 'nodes', 'scripts', 'build.mjs'), '--outdir', buildOut]);
    const files = (await readdir(buildOut, { recursive: true })).map(String);
    expect(files.filter((f) => f.endsWith('.js')).length).toBeGreaterThan(0);
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
    for (const file of files.filter((f) => f.endsWith('.js'))) expect(await readFile(join(buildOut, file), 'utf8')).not.toContain('sourceMappingURL');
  });

  it('both ask for the same Node.js versions, and the README names that minimum', async () => {
    const [pictor, nodes] = [await manifest(root), await manifest(packages['n8n-nodes-pictor'])];
    expect(nodes.engines.node).toBe(pictor.engines.node);
    const minimum = /^>=(\d+\.\d+\.\d+)$/.exec(pictor.engines.node);
    expect(minimum, pictor.engines.node).not.toBeNull();
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    expect(readme).toContain(`Node.js ${minimum![1]} or later`);
  });
});
