import { createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readCoreConfig } from '../src/config.js';
import { connect } from '../src/connect.js';
import { silentLogger } from '../src/internal.js';
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
