import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay on 127.0.0.1 in front of a real Redis, whose plug a test can
 * pull: `cut()` drops every open connection and refuses new ones (as if Redis
 * went away), `restore()` lets connections through again.
 */
export interface CuttableLink {
  /** `redis://127.0.0.1:<port>` plus the target's path (db), for clients. */
  url: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startCuttableLink(targetUrl: string): Promise<CuttableLink> {
  const target = new URL(targetUrl);
  const targetPort = Number(target.port || 6379);
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((inbound) => {
    if (!open) {
      inbound.destroy();
      return;
    }
    const outbound = connect(targetPort, target.hostname);
    sockets.add(inbound);
    sockets.add(outbound);
    const drop = () => {
      inbound.destroy();
      outbound.destroy();
      sockets.delete(inbound);
      sockets.delete(outbound);
    };
    inbound.on('error', drop).on('close', drop);
    outbound.on('error', drop).on('close', drop);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    restore() {
      open = true;
    },
    close() {
      open = false;
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
