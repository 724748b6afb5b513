import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The newest `.ts` file under the given folders of the repository, and its time. */
function newestSource(folders: string[]): { path: string; mtimeMs: number } | undefined {
  let newest: { path: string; mtimeMs: number } | undefined;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        const { mtimeMs } = statSync(path);
        if (!newest || mtimeMs > newest.mtimeMs) newest = { path, mtimeMs };
      }
    }
  };
  for (const folder of folders) walk(resolve(REPO_ROOT, folder));
  return newest;
}

/**
 * The absolute path of a built file (`dist/bots/main.js`) a test runs as its own process. Throws at once, saying
 * "build first", when it is missing or older than the sources it is built from (`src/`, `bots/`): a test of the
 * build would otherwise wait for a process that never starts, or test yesterday's code.
 */
export function builtFile(file: string, sources: string[] = ['src', 'bots']): string {
  const path = resolve(REPO_ROOT, file);
  if (!existsSync(path)) throw new Error(`${file} is missing: build first (npm run build; npm install builds too)`);
  const newest = newestSource(sources);
  if (newest && newest.mtimeMs > statSync(path).mtimeMs) {
    throw new Error(`${file} is older than ${relative(REPO_ROOT, newest.path)}: build first (npm run build)`);
  }
  return path;
}
