import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PICTOR_DEVELOPMENT_SETTINGS, PICTOR_SETTINGS, unknownSettingWarnings } from '../../src/core/setting-names.js';

/** Every `PICTOR_` name written in the files under `folders` (sources, not node_modules). */
function namesIn(folders: readonly string[], except: readonly string[] = []): string[] {
  const names = new Set<string>();
  const walk = (path: string): void => {
    if (path.includes('node_modules') || except.includes(path)) return;
    if (statSync(path).isDirectory()) return readdirSync(path).forEach((entry) => walk(join(path, entry)));
    if (!/\.(ts|mjs|js|sh)$/.test(path)) return;
    for (const [name] of readFileSync(path, 'utf8').matchAll(/\bPICTOR_[A-Z0-9_]*[A-Z0-9]\b/g)) names.add(name);
  };
  folders.forEach(walk);
  // The lists' own names are not settings.
  return [...names].filter((name) => name !== 'PICTOR_SETTINGS' && name !== 'PICTOR_DEVELOPMENT_SETTINGS').sort();
}

describe('the list of Pictor settings', () => {
  it('is the names the programs read, no more and no fewer', () => {
    expect([...PICTOR_SETTINGS].sort()).toEqual(namesIn(['src', 'bots', 'nodes/nodes', 'nodes/credentials'], ['src/core/setting-names.ts']));
  });

  it('knows the names the tests, benches and scripts read', () => {
    const read = namesIn(['test', 'bench', 'scripts'], ['test/core/setting-names.test.ts']).filter((name) => !(PICTOR_SETTINGS as readonly string[]).includes(name));
    expect([...PICTOR_DEVELOPMENT_SETTINGS].sort()).toEqual(read);
  });
});

describe('unknownSettingWarnings', () => {
  it('warns once for each misspelt PICTOR_ setting, naming the closest known one', () => {
    expect(unknownSettingWarnings({ PICTOR_DATA_DIRR: '/data', PICTOR_USAGE_RETENTON_DAYS: '30', PICTOR_DATA_DIR: '/data', HOME: '/root' })).toEqual([
      'PICTOR_DATA_DIRR is not a Pictor setting and is ignored; did you mean PICTOR_DATA_DIR?',
      'PICTOR_USAGE_RETENTON_DAYS is not a Pictor setting and is ignored; did you mean PICTOR_USAGE_RETENTION_DAYS?',
    ]);
  });

  it('names no setting when none is close, and says nothing when every name is known', () => {
    expect(unknownSettingWarnings({ PICTOR_SOMETHING_ELSE: '1' })).toEqual(['PICTOR_SOMETHING_ELSE is not a Pictor setting and is ignored']);
    expect(unknownSettingWarnings({ PICTOR_API_KEY: 'k', PICTOR_TEST_REDIS_URL: 'redis://x', OTHER_DATA_DIRR: '1' })).toEqual([]);
  });
});
