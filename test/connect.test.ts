import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readCoreConfig } from '../src/config.js';
import { connect } from '../src/connect.js';
import { silentLogger } from '../src/internal.js';
import { givingUpInAChild } from './helpers/left-holding.js';
import { silentServer } from './helpers/silent-server.js';
import { testTempDir } from './helpers/temp-dir.js';

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
    const { child, ended } = givingUpInAChild(`
      const { readCoreConfig } = await import(${config});
      const { connect } = await import(${connectModule});
      const { silentLogger } = await import(${internal});
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort(new Error('interrupted (Ctrl+C)')));
      const error = await connect(readCoreConfig({ REDIS_URL: 'redis://127.0.0.1:${redis.port}' }), silentLogger(), { signal: stop.signal }).then(() => undefined, (e) => e);
      return { message: error?.message };
    `);
    await redis.connected;
    child.kill('SIGINT');
    const { code, stderr, said, holding, left } = await ended;
    expect(stderr).toBe('');
    expect(said).toEqual({ message: 'interrupted (Ctrl+C)' });
    expect(holding, left).toEqual([]);
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
