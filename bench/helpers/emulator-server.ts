/**
 * Child-process entry: starts an emulator on 127.0.0.1 (port 0) with the
 * options given as JSON in argv[2], prints `{"url": …}` on one stdout line, and
 * stops when its stdin closes (the parent went away) or on SIGTERM.
 */
import { createEmulator, type EmulatorOptions } from '../../src/emulator/index.js';
import { serveUntilParentLeaves } from './child-server.js';

const options = JSON.parse(process.argv[2] ?? '{}') as EmulatorOptions;
const emulator = createEmulator(options);
const server = await emulator.listen({ port: 0, host: '127.0.0.1' });
serveUntilParentLeaves(server.url, () => emulator.close());
