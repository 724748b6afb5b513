import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A load balancer that retries: each POST goes to `first` (its answer goes back) and, once `first` has answered its
 * status, to `second` (its status is kept). Sent at once, `second` could take the interaction before `first` and the
 * answer Discord gets would be `first`'s 409: a retry comes after the first try, never before.
 */
export async function deliveringToBoth(first: string, second: string): Promise<{ url: string; secondStatus: Promise<number>; close(): Promise<void> }> {
  let settle!: (status: number) => void;
  const secondStatus = new Promise<number>((resolve) => (settle = resolve));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = { ...req.headers, 'content-length': String(body.length) };
      const retry = () => {
        const again = request(second, { method: req.method, headers }, (answer) => {
          answer.resume();
          settle(answer.statusCode ?? 0);
        });
        again.on('error', () => settle(0));
        again.end(body);
      };
      const there = request(first, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        retry();
      });
      there.on('error', () => {
        res.writeHead(502).end();
        retry();
      });
      there.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/interactions`,
    secondStatus,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A proxy that forwards each POST to `target` and keeps the last one as it came (signed bytes and headers), to replay it later anywhere. */
export async function recordingProxy(target: string): Promise<{ url: string; replayTo(url: string): Promise<number>; close(): Promise<void> }> {
  let last: { headers: Record<string, string>; body: Buffer } | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = Object.fromEntries(Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === 'string'));
      last = { headers: { ...headers, 'content-length': String(body.length) }, body };
      const there = request(target, { method: req.method, headers: last.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      there.on('error', () => res.writeHead(502).end());
      there.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/interactions`,
    async replayTo(url) {
      if (!last) throw new Error('nothing was delivered yet');
      // The same signed bytes and signature headers; the connection's own headers are fetch's.
      const headers = Object.fromEntries(Object.entries(last.headers).filter(([name]) => !['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive'].includes(name)));
      return (await fetch(url, { method: 'POST', headers, body: last.body })).status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
