import { once } from 'node:events';
import net from 'node:net';

/** One request as a misbehaving server saw it: its head, and the socket to misbehave on. */
export interface SeenRequest {
  socket: net.Socket;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Bytes of the body that arrived with the head. */
  bodyStart: Buffer;
  /** Resolves with the whole body (by content-length), once it has arrived. */
  body: () => Promise<Buffer>;
}

export interface MisbehavingServer {
  url: string;
  /** Requests whose head arrived: what the service would have seen (and could have billed). */
  readonly requests: number;
  /** Connections accepted, whether or not a request came on them. */
  readonly connections: number;
  /** Connections that have closed, from either side. */
  readonly closed: number;
  /** Connections that carried a request and are still open (the client has not let go). */
  readonly openRequestConnections: number;
  /** Resolves once no connection that carried a request is open: told by their `close`, not asked again and again. */
  requestConnectionsClosed: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * A TCP server on 127.0.0.1 that reads each request's head and hands it to
 * `onRequest` to answer however badly. It counts what it saw, so a test can
 * tell how many times a request reached "the service".
 */
export async function misbehavingServer(onRequest: (request: SeenRequest) => void | Promise<void>): Promise<MisbehavingServer> {
  let requests = 0;
  let connections = 0;
  let closed = 0;
  const sockets = new Set<net.Socket>();
  const withRequest = new Set<net.Socket>();
  /** Those told when the last connection that carried a request closes. */
  const waitingForClose: (() => void)[] = [];
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => {
      closed++;
      sockets.delete(socket);
      withRequest.delete(socket);
      if (withRequest.size === 0) for (const tell of waitingForClose.splice(0)) tell();
    });
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.pause();
      requests++;
      withRequest.add(socket);
      const lines = buffered.subarray(0, end).toString('latin1').split('\r\n');
      const [method = '', path = ''] = lines[0]!.split(' ');
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const bodyStart = buffered.subarray(end + 4);
      const body = async () => {
        const length = Number(headers['content-length'] ?? 0);
        let received = bodyStart;
        socket.resume();
        while (received.length < length) {
          const [chunk] = (await once(socket, 'data')) as [Buffer];
          received = Buffer.concat([received, chunk]);
        }
        return received;
      };
      void onRequest({ socket, method, path, headers, bodyStart, body });
    };
    socket.on('data', onData);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    get connections() {
      return connections;
    },
    get closed() {
      return closed;
    },
    get openRequestConnections() {
      return withRequest.size;
    },
    requestConnectionsClosed: () => (withRequest.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => waitingForClose.push(resolve))),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** An HTTP/1.1 response head (and body, if given) as raw text. */
export function head(status: number, headers: Record<string, string | number> = {}, body?: string): string {
  const reason = { 200: 'OK', 302: 'Found', 401: 'Unauthorized', 413: 'Payload Too Large', 503: 'Service Unavailable' }[status] ?? 'Status';
  const all = { ...headers, ...(body !== undefined ? { 'content-length': Buffer.byteLength(body) } : {}) };
  const lines = Object.entries(all).map(([k, v]) => `${k}: ${v}`);
  return `HTTP/1.1 ${status} ${reason}\r\n${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}

/** One SSE event as the service frames it. */
export function sse(event: string | undefined, data: unknown): string {
  return `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}
