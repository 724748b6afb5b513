import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
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
  /** Request bodies above this many bytes are refused with `tooLarge()` without reading further. */
  maxRequestBytes(): number;
  tooLarge(): Response;
  /** The answer when `handle` fails for another reason. */
  internalError(): Response;
}

/**
 * Serves a web-standard handler over node:http: request bodies are read into a
 * Request, response bodies are streamed to the socket chunk by chunk as the
 * handler produces them (with backpressure), never buffered.
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

  let response: Response;
  try {
    const body = await readBody(req, handler.maxRequestBytes());
    if (body === 'too_large') {
      res.shouldKeepAlive = false;
      await writeResponse(handler.tooLarge(), res);
      return;
    }
    response = await handler.handle(toRequest(req, body, caller.signal));
  } catch (err) {
    if (isConnectionReset(err) || caller.signal.aborted) {
      req.socket.destroy();
      return;
    }
    response = handler.internalError();
  }
  await writeResponse(response, res);
}

function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        done = true;
        req.off('data', onData);
        req.resume();
        resolve('too_large');
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (done) return;
      done = true;
      reject(err);
    });
    req.on('close', () => {
      if (done) return;
      done = true;
      reject(new Error('the client closed the connection before sending the whole request'));
    });
  });
}

function toRequest(req: IncomingMessage, body: Buffer, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`), {
    method,
    headers,
    body: hasBody ? body : null,
    signal,
  });
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
