import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/**
 * A host that is not Slack's: it records every request it gets and answers
 * with a PNG signature, so a test can tell whether anything (and which
 * headers, such as a bot token) was sent to it.
 */
export class RecordingServer {
  readonly requests: RecordedRequest[] = [];
  #server: Server | undefined;
  #url = '';

  get url(): string {
    return this.#url;
  }

  async start(): Promise<this> {
    this.#server = createServer((req, res) => {
      this.requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers });
      req.resume();
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]));
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.#url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
