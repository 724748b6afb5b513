import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { answersAsEmulator, DEV_API_KEY, EMULATOR_HEADER, isLoopbackHost, mayBeEmulator } from '../../src/client/emulator-identity.js';
import { createEmulator, type Emulator, type EmulatorServer } from '../../src/emulator/index.js';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function emulatorAt(options: { identifyAsEmulator?: boolean } = {}): Promise<EmulatorServer & { emulator: Emulator }> {
  const emulator = createEmulator(options);
  const server = await emulator.listen({ port: 0 });
  servers.push({ close: () => emulator.close() });
  return { ...server, emulator };
}

describe("a Pictor emulator's word that it is one", () => {
  it('is believed only for the emulator’s own key or a loopback address', () => {
    expect(mayBeEmulator('http://127.0.0.1:4010', 'sk-real')).toBe(true);
    expect(mayBeEmulator('http://localhost:4010/v1', 'sk-real')).toBe(true);
    expect(mayBeEmulator('http://[::1]:4010', 'sk-real')).toBe(true);
    expect(mayBeEmulator('https://images.example.com', DEV_API_KEY)).toBe(true);
    expect(mayBeEmulator('https://images.example.com', 'sk-real')).toBe(false);
    expect(mayBeEmulator('http://10.0.0.7:4010', 'sk-real')).toBe(false);
    expect(mayBeEmulator('http://127.0.0.1.example.com', 'sk-real')).toBe(false);
  });

  it('knows loopback hosts when it sees them', () => {
    for (const host of ['localhost', 'api.localhost', '127.0.0.1', '127.8.9.10', '[::1]', '::1', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['example.com', '10.0.0.1', '128.0.0.1', '::2', 'localhost.example.com']) expect(isLoopbackHost(host), host).toBe(false);
  });

  it('is asked with one HEAD that the emulator answers with its header, without recording it as a request', async () => {
    const server = await emulatorAt();
    expect(await answersAsEmulator(server.url, 'any-key')).toBe(true);
    expect(server.emulator.requests).toHaveLength(0);
  });

  it('is "no" for an emulator that poses as the real service, a server without the header, and one that does not answer', async () => {
    const posing = await emulatorAt({ identifyAsEmulator: false });
    expect(await answersAsEmulator(posing.url, DEV_API_KEY)).toBe(false);
    const seen: string[] = [];
    const plain = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? 'no key'}`);
      res.writeHead(405).end();
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    servers.push({ close: () => new Promise((resolve) => plain.close(() => resolve())) });
    const url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
    expect(await answersAsEmulator(`${url}/v1`, 'sk-real')).toBe(false);
    // The question carries no key.
    expect(seen).toEqual(['HEAD /v1/images/generations no key']);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const gone = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await answersAsEmulator(gone, DEV_API_KEY)).toBe(false);
  });

  it('is not even asked of a remote service given a real key', async () => {
    const claims = createServer((_req, res) => res.writeHead(405, { [EMULATOR_HEADER]: '1' }).end());
    await new Promise<void>((resolve) => claims.listen(0, '127.0.0.1', resolve));
    servers.push({ close: () => new Promise((resolve) => claims.close(() => resolve())) });
    const port = (claims.address() as AddressInfo).port;
    // The same server by loopback is believed; by a name that is not a loopback one, it is not asked.
    expect(await answersAsEmulator(`http://127.0.0.1:${port}`, 'sk-real')).toBe(true);
    expect(await answersAsEmulator(`http://pictor-test.invalid:${port}`, 'sk-real')).toBe(false);
  });
});
