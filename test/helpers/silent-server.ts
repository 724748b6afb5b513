import { createServer, type AddressInfo, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';

/** A listener on 127.0.0.1 that plays a hung Redis or service. */
export interface SilentServer {
  port: number;
  /** Answered once a connection came. */
  connected: Promise<void>;
  /** Answered once the other side ended or closed a connection. */
  dropped: Promise<void>;
  /** How many connections came so far. */
  connections(): number;
}

/**
 * A TCP listener that takes connections and never says a word, as a hung Redis or service does: nothing is read or
 * answered, and no connection is ended from its side (only the other side can end one). Closed after the running test.
 */
export async function silentServer(): Promise<SilentServer> {
  const sockets: Socket[] = [];
  let dropped!: () => void;
  const droppedOnce = new Promise<void>((resolve) => (dropped = resolve));
  const server = createServer({ allowHalfOpen: true }, (socket) => {
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
  return { port: (server.address() as AddressInfo).port, connected, dropped: droppedOnce, connections: () => sockets.length };
}
