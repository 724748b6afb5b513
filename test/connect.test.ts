import { spawn } from 'node:child_process';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readCoreConfig } from '../src/config.js';
import { connect } from '../src/connect.js';
import { silentLogger } from '../src/internal.js';
import { outputOf } from './helpers/child-output.js';
import { testTempDir } from './helpers/temp-dir.js';

/**
 * A TCP listener that takes connections and never says a word, as a hung Redis or service does: `connected` once one
 * came, `dropped` once the other side closed it.
 */
async function silentServer() {
  const sockets: Socket[] = [];
  let dropped!: () => void;
  const droppedOnce = new Promise<void>((resolve) => (dropped = resolve));
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('end', () => dropped());
    socket.on('close', () => dropped());
    socket.on('error', () => undefined);
  });
  const connected = new Promise<void>((resolve) => server.once('connection', () => resolve()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, connected, dropped: droppedOnce };
}

/** A timer of a given-up attempt this long or longer, still pending after the error, holds the process noticeably. */
const HOLDING_MS = 1000;

describe('connect, given up by its signal', () => {
  it('drops a Redis connection that gets no answer as soon as the signal aborts, and rejects with its reason', async () => {
    const redis = await silentServer();
    const config = readCoreConfig({ REDIS_URL: `redis://127.0.0.1:${redis.port}` });
    const stop = new AbortController();
    const connecting = connect(config, silentLogger(), { signal: stop.signal });
    await redis.connected;
    const reason = new Error('interrupted (Ctrl+C)');
    stop.abort(reason);
    await expect(connecting).rejects.toBe(reason);
    await redis.dropped;
  });

  it('lets the process end once a Ctrl+C gave up connecting to a Redis that never answers: nothing of the attempt holds it', async () => {
    const redis = await silentServer();
    const [config, connectModule, internal] = ['../src/config.ts', '../src/connect.ts', '../src/internal.ts'].map((path) => JSON.stringify(fileURLToPath(new URL(path, import.meta.url))));
    // The Redis client waits 2 s by default for a socket it ends to close, on a timer that holds the process: right after
    // the rejection no timer of the attempt that long is left, and the process ends by itself (the test waits for it).
    const script = `
      // Every timer of the attempt, with its length: after the error, none long enough to hold the process must be left.
      const timers = new Set();
      const setTimeoutOf = globalThis.setTimeout;
      globalThis.setTimeout = (fn, ms, ...args) => {
        const timer = setTimeoutOf(fn, ms, ...args);
        timers.add({ timer, ms });
        return timer;
      };
      const { readCoreConfig } = await import(${config});
      const { connect } = await import(${connectModule});
      const { silentLogger } = await import(${internal});
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort(new Error('interrupted (Ctrl+C)')));
      const error = await connect(readCoreConfig({ REDIS_URL: 'redis://127.0.0.1:${redis.port}' }), silentLogger(), { signal: stop.signal }).then(() => undefined, (e) => e);
      console.log(JSON.stringify({ message: error?.message }));
      // One turn of the loop for the attempt's last steps, then what is left of it: the handles, and the timers still
      // pending that hold the process (their lengths).
      await new Promise((resolve) => setImmediate(resolve));
      const holding = [...timers].filter(({ timer }) => !timer._destroyed && timer.hasRef()).map(({ ms }) => ms);
      console.log(JSON.stringify({ heldBy: process.getActiveResourcesInfo(), holding }));
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    onTestFinished(() => void child.kill('SIGKILL'));
    const output = outputOf(child);
    await redis.connected;
    child.kill('SIGINT');
    const { code, stdout, stderr } = await output;
    expect(stderr).toBe('');
    const [said, left] = stdout.trim().split('\n').map((line) => JSON.parse(line) as unknown);
    expect(said).toEqual({ message: 'interrupted (Ctrl+C)' });
    expect((left as { holding: number[] }).holding.filter((ms) => ms >= HOLDING_MS), JSON.stringify(left)).toEqual([]);
    expect(code).toBe(0);
  });

  it('drops the question "are you an emulator?" to a PICTOR_BASE_URL that does not answer, and rejects with its reason', async () => {
    const service = await silentServer();
    const config = readCoreConfig({ PICTOR_BASE_URL: `http://127.0.0.1:${service.port}`, PICTOR_API_KEY: 'sk-test-connect', PICTOR_DATA_DIR: await testTempDir('pictor-connect-') });
    const stop = new AbortController();
    const connecting = connect(config, silentLogger(), { signal: stop.signal });
    await service.connected;
    const reason = new Error('terminated (SIGTERM)');
    stop.abort(reason);
    await expect(connecting).rejects.toBe(reason);
    await service.dropped;
  });

  it('opens nothing when the signal has aborted already', async () => {
    const stop = new AbortController();
    const reason = new Error('interrupted (Ctrl+C)');
    stop.abort(reason);
    await expect(connect(readCoreConfig({ PICTOR_DATA_DIR: await testTempDir('pictor-connect-') }), silentLogger(), { signal: stop.signal })).rejects.toBe(reason);
  });
});
