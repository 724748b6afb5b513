import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import vitestConfig from '../vitest.config.js';
import { INTEGRATION_MOCKS_MODULES, MOCKS_MODULES } from '../vitest.lists.js';

const root = resolve(import.meta.dirname, '..');
const run = promisify(execFile);

/** Every test file under test/, as a path from the repository's root with forward slashes (as the lists write it). */
async function testFiles(): Promise<string[]> {
  const names = await readdir(join(root, 'test'), { recursive: true });
  return names
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => relative(root, join(root, 'test', name)).split(sep).join('/'))
    .sort();
}

describe('the test files that replace a module (vi.mock)', () => {
  it('are each listed to run isolated (MOCKS_MODULES, or INTEGRATION_MOCKS_MODULES for an integration test), and no other file is', async () => {
    const mocking: string[] = [];
    for (const file of await testFiles()) {
      if (/\bvi\.mock\(/.test(await readFile(join(root, file), 'utf8'))) mocking.push(file);
    }
    expect(mocking.length).toBeGreaterThan(0);
    expect(mocking).toEqual([...MOCKS_MODULES, ...INTEGRATION_MOCKS_MODULES].sort());
  });

  it('run in the isolated projects, and in no other: each file as vitest collects it, once', async () => {
    const projects = (vitestConfig.test?.projects ?? []) as { test: { name: string; isolate?: boolean } }[];
    const named = (name: string) => projects.find((project) => project.test.name === name)!.test;
    expect(named('unit-isolated').isolate).toBe(true);
    expect(named('integration-isolated').isolate).toBe(true);
    // What each project collects, as vitest lists it (no test runs).
    const { stdout } = await run(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'list', '--filesOnly', '--json'], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
    const listed = JSON.parse(stdout) as { file: string; projectName: string }[];
    const collected = (project: string) => listed.filter((entry) => entry.projectName === project).map((entry) => relative(root, entry.file).split(sep).join('/')).sort();
    expect(collected('unit-isolated')).toEqual([...MOCKS_MODULES].sort());
    expect(collected('integration-isolated')).toEqual([...INTEGRATION_MOCKS_MODULES].sort());
    expect(listed.map((entry) => entry.file).sort()).toEqual((await testFiles()).map((file) => join(root, file)).sort());
  });
});
