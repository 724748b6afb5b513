import { access, readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import vitestConfig from '../vitest.config.js';
import { INTEGRATION_MOCKS_MODULES, MOCKS_MODULES } from '../vitest.lists.js';

const root = resolve(import.meta.dirname, '..');

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

  it('are listed only if they exist', async () => {
    for (const file of [...MOCKS_MODULES, ...INTEGRATION_MOCKS_MODULES]) await expect(access(join(root, file)), file).resolves.toBeUndefined();
  });

  it('run in the isolated projects, and in no other', () => {
    const projects = (vitestConfig.test?.projects ?? []) as { test: { name: string; include?: string[]; exclude?: string[]; isolate?: boolean } }[];
    const named = (name: string) => projects.find((project) => project.test.name === name)!.test;
    expect(named('unit-isolated')).toMatchObject({ include: MOCKS_MODULES, isolate: true });
    expect(named('integration-isolated')).toMatchObject({ include: INTEGRATION_MOCKS_MODULES, isolate: true });
    for (const shared of [named('unit'), named('integration')]) expect(shared.exclude).toEqual(expect.arrayContaining([...MOCKS_MODULES, ...INTEGRATION_MOCKS_MODULES]));
  });
});
