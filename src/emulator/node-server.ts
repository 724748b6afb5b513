import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { isConnectionReset } from './faults.js';

export interface ListenOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

export interface EmulatorServer {
  /** Base address without `/v1`, e.g. `http://127.0.0.1:53127`. */
  url: string;
  port: number;
  /** Stops listening and ends every open connection and stream. */
  close(): Promise<void>;
}

export interface NodeServerHandler {
  /** Answers one request (the emulator's `fetch`). A rejection that stands for a reset destroys the socket. */
  handle(request: Request): Promise<Response>;
  /** The answer to a request whose `Host` header (or target) does not make a URL. */
  badRequest(): Response;
  /** The answer when `handle` fails for another reason. */
  internalError(): Response;
}

/**
 * Serves a web-standard handler over node:http: request bodies reach the
 * handler as a stream it reads as far as it wants (an answer given without
 * reading it all closes the connection instead of draining the rest), response
 * bodies are streamed to the socket chunk by chunk as the handler produces them
 * (with backpressure), never buffered.
 */
export async function listenWithNodeHttp(handler: NodeServerHandler, options: ListenOptions = {}): Promise<EmulatorServer> {
  const sockets = new Set<Socket>();
  const active = new Set<Promise<void>>();
  const server = createServer((req, res) => {
    const serving: Promise<void> = serve(handler, req, res).finally(() => active.delete(serving));
    active.add(serving);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
        await closed;
        // Every answer in progress sees its connection gone and ends its body stream.
        await Promise.allSettled([...active]);
      })();
      return closing;
    },
  };
}

async function serve(handler: NodeServerHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const caller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) caller.abort(new Error('the client closed the connection'));
  });

  const url = requestUrl(req);
  let response: Response;
  if (!url) {
    response = handler.badRequest();
  } else {
    try {
      response = await handler.handle(toRequest(req, url, caller.signal));
    } catch (err) {
      if (isConnectionReset(err) || caller.signal.aborted) {
        req.socket.destroy();
        return;
      }
      response = handler.internalError();
    }
  }
  // The rest of a body the handler did not read is not read: the connection closes after this answer.
  if (!req.complete) res.shouldKeepAlive = false;
  await writeResponse(response, res);
}

/** The request's URL, or undefined when its `Host` header or target is not one. */
function requestUrl(req: IncomingMessage): URL | undefined {
  const host = req.headers.host ?? '127.0.0.1';
  const target = req.url ?? '/';
  if (!target.startsWith('/') || /[\s/?#@\\]/.test(host)) return undefined;
  try {
    const url = new URL(`http://${host}${target}`);
    return url.host.length > 0 ? url : undefined;
  } catch {
    return undefined;
  }
}

function toRequest(req: IncomingMessage, url: URL, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(url, {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null,
    signal,
    duplex: 'half',
  } as RequestInit);
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  res.flushHeaders();
  const reader = response.body.getReader();
  const onClose = () => {
    void reader.cancel(new Error('the connection closed')).catch(() => undefined);
  };
  res.on('close', onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) return;
      if (!res.write(value)) await drained(res);
    }
    res.end();
  } catch {
    // The body broke (an injected reset, or the emulator closing): break the connection
    // so the client sees a truncated answer, not a complete one.
    res.destroy();
  } finally {
    res.off('close', onClose);
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
