import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The package n8n installs: its package.json, and the files its build makes,
 * loaded with require as n8n loads them. Built into a throwaway folder inside
 * nodes/node_modules so the bundle's external imports resolve as installed.
 */
const nodesDir = resolve(import.meta.dirname, '../../nodes');
const pkg = JSON.parse(readFileSync(join(nodesDir, 'package.json'), 'utf8')) as {
  name: string;
  keywords: string[];
  files: string[];
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  scripts: Record<string, string>;
  n8n: { n8nNodesApiVersion: number; nodes: string[]; credentials: string[] };
};
const outDir = join(nodesDir, 'node_modules', '.cache', `package-test-${process.pid}`);
const built = (path: string) => join(outDir, path.replace(/^dist\//, ''));

beforeAll(async () => {
  await promisify(execFile)(process.execPath, [join(nodesDir, 'scripts', 'build.mjs'), '--outdir', outDir]);
}, 60_000);
afterAll(async () => {
  await rm(outDir, { recursive: true, force: true });
});

describe('the n8n-nodes-pictor package', () => {
  it('declares itself as an n8n community node package', () => {
    expect(pkg.name).toBe('n8n-nodes-pictor');
    expect(pkg.keywords).toContain('n8n-community-node-package');
    expect(pkg.files).toEqual(['dist']);
    expect(pkg.n8n.n8nNodesApiVersion).toBe(1);
    expect(pkg.n8n.nodes).toEqual(['dist/nodes/PictorImage/PictorImage.node.js']);
    expect(pkg.n8n.credentials).toEqual(['dist/credentials/PictorApi.credentials.js']);
  });

  it('points its homepage, bugs, author and the credential’s documentation at the repository, never example.com or an npm page', () => {
    const rootPkg = JSON.parse(readFileSync(join(nodesDir, '..', 'package.json'), 'utf8')) as Record<string, unknown>;
    const repository = (rootPkg.repository as { url: string }).url.replace(/^git\+/, '').replace(/\.git$/, '');
    const credential = readFileSync(join(nodesDir, 'credentials', 'PictorApi.credentials.ts'), 'utf8');
    const documentationUrl = /documentationUrl = '([^']+)'/.exec(credential)![1]!;
    const readme = readFileSync(join(nodesDir, 'README.md'), 'utf8');
    for (const p of [pkg as unknown as Record<string, unknown>, rootPkg]) {
      expect((p.repository as { url: string }).url.replace(/^git\+/, '').replace(/\.git$/, '')).toBe(repository);
      expect(p.homepage).toMatch(new RegExp(`^${repository}[#/]`));
      expect(p.bugs).toEqual({ url: `${repository}/issues` });
      expect(JSON.stringify(p.author)).not.toMatch(/example\.com/);
      expect(JSON.stringify(p)).not.toMatch(/example\.com|npmjs\.com/);
    }
    expect(documentationUrl).toBe(`${repository}/tree/main/nodes#credentials-pictor-api`);
    expect(readme).toContain('## Credentials: Pictor API'); // the anchor the link names
  });

  it('takes n8n-workflow from n8n as a peer, and needs at run time only what the node uses', () => {
    expect(pkg.peerDependencies).toEqual({ 'n8n-workflow': '*' });
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['bottleneck', 'eventsource-parser', 'ioredis', 'undici', 'zod']);
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) expect(pkg.scripts[script]).toBeUndefined();
  });

  it('builds node and credential files that load with require under the class names n8n derives from the file names', () => {
    const load = createRequire(join(outDir, 'index.js'));
    for (const path of [...pkg.n8n.nodes, ...pkg.n8n.credentials]) {
      const className = basename(path).split('.')[0]!;
      const Loaded = (load(built(path)) as Record<string, new () => unknown>)[className];
      expect(Loaded, path).toBeTypeOf('function');
      // What n8n reads from the instance: a node's description, a credential itself, named as the class is (lower camel case).
      const instance = new Loaded!() as { description?: { name?: unknown; properties?: unknown }; name?: unknown; properties?: unknown };
      const described = path.includes('credentials') ? instance : instance.description;
      expect(described?.name, path).toBe(className[0]!.toLowerCase() + className.slice(1));
      expect(Array.isArray(described?.properties), path).toBe(true);
    }
    const { PictorImage } = load(built(pkg.n8n.nodes[0]!)) as { PictorImage: new () => { description: { name: string; icon: { light: string; dark: string } } } };
    expect(new PictorImage().description.name).toBe('pictorImage');
  });

  it('puts the codex and both icons where n8n looks for them', () => {
    const nodeFile = built(pkg.n8n.nodes[0]!);
    const codex = JSON.parse(readFileSync(nodeFile.replace(/\.js$/, '.json'), 'utf8')) as { node: string; resources: object };
    expect(codex.node).toBe('n8n-nodes-pictor.pictorImage');
    expect(codex.resources).toBeDefined();
    const load = createRequire(join(outDir, 'index.js'));
    const { PictorImage } = load(nodeFile) as { PictorImage: new () => { description: { icon: { light: string; dark: string } } } };
    const { PictorApi } = load(built(pkg.n8n.credentials[0]!)) as { PictorApi: new () => { icon: { light: string; dark: string } } };
    for (const [file, icon] of [
      [nodeFile, new PictorImage().description.icon],
      [built(pkg.n8n.credentials[0]!), new PictorApi().icon],
    ] as const) {
      for (const variant of [icon.light, icon.dark]) expect(existsSync(join(dirname(file), variant.replace(/^file:/, ''))), variant).toBe(true);
    }
  });

  it('bundles the core but leaves out n8n-workflow, the emulator, sharp, the bots and the logger', () => {
    const code = readFileSync(built(pkg.n8n.nodes[0]!), 'utf8');
    expect(code).toContain('require("n8n-workflow")');
    expect(code).toContain('parseGenerationRequest');
    for (const absent of ['sharp', 'discord.js', '@slack/bolt', 'pino', 'src/emulator', 'class NodeOperationError']) expect(code, absent).not.toContain(absent);
  });
});
