import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A load balancer in front of several HTTP replicas: each POST goes to the
 * next target in turn, headers and body unchanged (a Slack signature still
 * verifies). `sent` counts what each target got.
 */
export async function startRoundRobinProxy(targets: readonly string[]): Promise<{ url: string; sent: number[]; close(): Promise<void> }> {
  const sent = targets.map(() => 0);
  let next = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const index = next++ % targets.length;
      sent[index]!++;
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
      fetch(targets[index]!, { method: req.method ?? 'POST', headers, body: Buffer.concat(chunks), signal: AbortSignal.timeout(10_000) })
        .then(async (response) => {
          const body = Buffer.from(await response.arrayBuffer());
          res.writeHead(response.status, { 'content-type': response.headers.get('content-type') ?? 'text/plain' });
          res.end(body);
        })
        .catch(() => {
          res.writeHead(502);
          res.end();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/slack/events`,
    sent,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
