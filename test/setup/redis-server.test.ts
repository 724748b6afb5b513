import { execFileSync } from 'node:child_process';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/core/redis-connection.js';
import { startThrowawayRedis } from './redis-server.js';

const hasRedisServer = (() => {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.connect(Number(port), hostname);
  });
}

describe('the throwaway Redis of a test run', () => {
  it('is not started when there is no redis-server program', async () => {
    await expect(startThrowawayRedis('pictor-no-such-redis-server')).resolves.toBeUndefined();
  });

  it.skipIf(!hasRedisServer)('answers on loopback while the run lasts and is gone after it stops', async () => {
    const redis = await startThrowawayRedis();
    expect(redis!.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    const client = await connectRedis(redis!.url);
    try {
      expect(await client.ping()).toBe('PONG');
    } finally {
      client.disconnect();
    }
    await redis!.stop();
    expect(await accepts(redis!.url)).toBe(false);
  });
});
