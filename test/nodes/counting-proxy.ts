import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request passing through the proxy: when it arrived and when its answer went back, in order. */
export interface ProxyEvent {
  kind: 'start' | 'end';
  /** The `prompt` of a JSON request body ('' for others). */
  prompt: string;
}

export interface CountingProxy {
  url: string;
  /** Most requests in flight at once. */
  peak(): number;
  events: ProxyEvent[];
  close(): Promise<void>;
}

/**
 * A loopback proxy in front of the emulator that counts image requests (POSTs) in flight, whichever process sends
 * them. Anything else (the HEAD a client asks "are you an emulator?" with) is passed on uncounted.
 */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  let inFlight = 0;
  let peak = 0;
  const events: ProxyEvent[] = [];
  const proxy: Server = createServer((req, res) => {
    if (req.method !== 'POST') {
      fetch(`${target}${req.url}`, { method: req.method })
        .then((answer) => res.writeHead(answer.status, Object.fromEntries(answer.headers)).end())
        .catch(() => res.destroy());
      return;
    }
    inFlight++;
    peak = Math.max(peak, inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const prompt = promptOf(body, req.headers['content-type']);
      events.push({ kind: 'start', prompt });
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')) as Record<string, string>;
      fetch(`${target}${req.url}`, { method: req.method, headers, body })
        .then(async (answer) => {
          const answerBody = Buffer.from(await answer.arrayBuffer());
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          res.end(answerBody);
        })
        .catch(() => res.destroy())
        .finally(() => {
          inFlight--;
          events.push({ kind: 'end', prompt });
        });
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    peak: () => peak,
    events,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

function promptOf(body: Buffer, contentType: string | undefined): string {
  if (!contentType?.includes('application/json')) return '';
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { prompt?: unknown };
    return typeof parsed.prompt === 'string' ? parsed.prompt : '';
  } catch {
    return '';
  }
}
