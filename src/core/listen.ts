import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Starts an HTTP server listening (port 0: a free one) and answers where: `http://host:port` as it listens (an IPv6
 * address in brackets). A failure to listen (a port in use) rejects with the server's error.
 */
export async function listenOn(server: Server, port: number, host: string): Promise<{ url: string; port: number; host: string }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${shown}:${address.port}`, port: address.port, host: shown };
}
