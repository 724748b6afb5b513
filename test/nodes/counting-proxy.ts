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
  /**
   * Holds the next request of `prompt` (counted in flight, not yet passed on) until a request of `release` arrives:
   * the two are then in flight together, however late a busy machine sends the second.
   */
  holdNext(prompt: string, release: string): void;
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
  let hold: { prompt: string; release: string; taken: boolean; go: () => void; released: Promise<void> } | undefined;
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
      if (hold?.release === prompt) hold.go();
      const held = hold && !hold.taken && hold.prompt === prompt ? ((hold.taken = true), hold.released) : undefined;
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')) as Record<string, string>;
      Promise.resolve(held)
        .then(() => fetch(`${target}${req.url}`, { method: req.method, headers, body }))
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
    holdNext(prompt, release) {
      let go!: () => void;
      const released = new Promise<void>((resolve) => (go = resolve));
      hold = { prompt, release, taken: false, go, released };
    },
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
