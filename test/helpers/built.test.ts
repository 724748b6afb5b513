import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtFile } from './built.js';
import { testTempDir } from './temp-dir.js';

describe('a built file a test runs', () => {
  it('says "build first" at once when it is missing', () => {
    expect(() => builtFile('dist/no-such-entry-point.js')).toThrow('dist/no-such-entry-point.js is missing: build first (npm run build; npm install builds too)');
  });

  it('says "build first" when a source is newer than it, and gives its path otherwise', async () => {
    const dir = await testTempDir('pictor-built-');
    await mkdir(join(dir, 'src'));
    await writeFile(join(dir, 'main.js'), '');
    await writeFile(join(dir, 'src', 'main.ts'), '');
    await utimes(join(dir, 'main.js'), new Date(2026, 0, 1), new Date(2026, 0, 1));
    await utimes(join(dir, 'src', 'main.ts'), new Date(2026, 0, 2), new Date(2026, 0, 2));
    expect(() => builtFile(join(dir, 'main.js'), [join(dir, 'src')])).toThrow(/is older than .*src\/main\.ts: build first/);
    await utimes(join(dir, 'main.js'), new Date(2026, 0, 3), new Date(2026, 0, 3));
    expect(builtFile(join(dir, 'main.js'), [join(dir, 'src')])).toBe(join(dir, 'main.js'));
  });
});
