import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A load balancer that retries: each POST goes to `first` (its answer goes back) and, at once, to `second` (its status is kept). */
export async function deliveringToBoth(first: string, second: string): Promise<{ url: string; secondStatus: Promise<number>; close(): Promise<void> }> {
  let settle!: (status: number) => void;
  const secondStatus = new Promise<number>((resolve) => (settle = resolve));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = { ...req.headers, 'content-length': String(body.length) };
      const there = request(first, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      there.on('error', () => res.writeHead(502).end());
      there.end(body);
      const again = request(second, { method: req.method, headers }, (answer) => {
        answer.resume();
        settle(answer.statusCode ?? 0);
      });
      again.on('error', () => settle(0));
      again.end(body);
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
