// Copies the console's own files (its script, style sheet and icon: src/console/assets/) to dist/src/console/assets/,
// beside the compiled console, where both `npm start` (dist/src) and the bundled `pictor console` (dist/cli) find them.
// They are served as they are: no build step of their own.
import { cp } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await cp(join(root, 'src', 'console', 'assets'), join(root, 'dist', 'src', 'console', 'assets'), { recursive: true });
