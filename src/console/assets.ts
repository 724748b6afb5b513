import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A file the console serves itself: no CDN, so it works offline and behind a firewall. */
export interface Asset {
  body: Buffer;
  type: string;
}

/**
 * The folder of the console's own files (its script, style sheet and icon):
 * `assets/` beside this module when it runs from source or from `dist/src`,
 * or `dist/src/console/assets` seen from the bundled command in `dist/cli`.
 */
function assetsDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'assets'), join(here, '..', 'src', 'console', 'assets'), join(here, '..', 'dist', 'src', 'console', 'assets')];
  const found = candidates.find((dir) => existsSync(join(dir, 'console.js')));
  if (!found) throw new Error(`the console's files are missing (looked in ${candidates.join(', ')}): build Pictor again (npm run build)`);
  return found;
}

/** The chart library (Chart.js), served from the installed package. */
function chartLibrary(): string {
  const entry = createRequire(import.meta.url).resolve('chart.js');
  return join(dirname(entry), 'chart.umd.min.js');
}

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/** Every asset by its path under `/assets/`, read once at start. */
export function loadAssets(): Map<string, Asset> {
  const dir = assetsDir();
  const assets = new Map<string, Asset>();
  for (const name of ['console.js', 'console.css', 'icon.svg']) {
    assets.set(name, { body: readFileSync(join(dir, name)), type: TYPES[name.split('.').pop()!]! });
  }
  assets.set('chart.umd.js', { body: readFileSync(chartLibrary()), type: TYPES.js! });
  return assets;
}
