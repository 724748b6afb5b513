import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A POST read whole, to forward as it came (its length fixed to the bytes read). */
interface Received {
  method: string | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A server on 127.0.0.1 that reads each request whole and hands it to `route`. */
async function balancer(route: (received: Received, res: ServerResponse) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      route({ method: req.method, headers: { ...req.headers, 'content-length': String(body.length) }, body }, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/interactions`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends `received` to `url`: `answered` with its answer, or `failed` when the connection fails (once, whichever comes first). */
function forward(url: string, received: Received, answered: (answer: IncomingMessage) => void, failed: () => void): void {
  let told = false;
  const there = request(url, { method: received.method, headers: received.headers }, (answer) => {
    if (told) return answer.resume();
    told = true;
    answered(answer);
  });
  there.on('error', () => {
    if (told) return;
    told = true;
    failed();
  });
  there.end(received.body);
}

/** Sends `answer` back as `res`'s answer; a 502 when there is none, unless an answer was already begun (then it is cut). */
function answerWith(res: ServerResponse, answer: IncomingMessage | undefined): void {
  if (!answer) {
    if (res.headersSent) res.destroy();
    else res.writeHead(502).end();
    return;
  }
  res.writeHead(answer.statusCode ?? 502, answer.headers);
  answer.on('error', () => res.destroy());
  answer.pipe(res);
}

/** The status of a POST whose answer nobody reads (0 when the connection failed). */
function statusOf(url: string, received: Received): Promise<number> {
  return new Promise((resolve) =>
    forward(
      url,
      received,
      (answer) => {
        answer.resume();
        resolve(answer.statusCode ?? 0);
      },
      () => resolve(0),
    ),
  );
}

/**
 * A load balancer that retries: each POST goes to `first` (its answer goes back) and, once `first` has answered its
 * status or failed, to `second` once (its status is kept). Sent at once, `second` could take the interaction before
 * `first` and the answer Discord gets would be `first`'s 409: a retry comes after the first try, never before
 * (`deliveringToBothAtOnce` sends both at once).
 */
export async function deliveringToBoth(first: string, second: string): Promise<{ url: string; secondStatus: Promise<number>; close(): Promise<void> }> {
  let settle!: (status: number) => void;
  const secondStatus = new Promise<number>((resolve) => (settle = resolve));
  const server = await balancer((received, res) => {
    let retried = false;
    const retry = () => {
      if (retried) return;
      retried = true;
      void statusOf(second, received).then(settle);
    };
    forward(
      first,
      received,
      (answer) => {
        answerWith(res, answer);
        retry();
      },
      () => {
        answerWith(res, undefined);
        retry();
      },
    );
  });
  return { url: server.url, secondStatus, close: server.close };
}

/**
 * A load balancer that sends each POST to `first` and `second` at once (a retry sent while the first try is still in
 * flight): `first`'s answer goes back, and `statuses` are both answers' statuses, `first`'s then `second`'s. Either may
 * take the interaction, so the answer Discord gets may be the one refused.
 */
export async function deliveringToBothAtOnce(first: string, second: string): Promise<{ url: string; statuses: Promise<[number, number]>; close(): Promise<void> }> {
  let settle!: (statuses: Promise<[number, number]>) => void;
  const statuses = new Promise<[number, number]>((resolve) => (settle = resolve));
  const server = await balancer((received, res) => {
    const firstStatus = new Promise<number>((resolve) =>
      forward(
        first,
        received,
        (answer) => {
          answerWith(res, answer);
          resolve(answer.statusCode ?? 0);
        },
        () => {
          answerWith(res, undefined);
          resolve(0);
        },
      ),
    );
    settle(Promise.all([firstStatus, statusOf(second, received)]));
  });
  return { url: server.url, statuses, close: server.close };
}

/** A proxy that forwards each POST to `target` and keeps the last one as it came (signed bytes and headers), to replay it later anywhere. */
export async function recordingProxy(target: string): Promise<{ url: string; replayTo(url: string): Promise<number>; close(): Promise<void> }> {
  let last: Received | undefined;
  const server = await balancer((received, res) => {
    last = received;
    forward(target, received, (answer) => answerWith(res, answer), () => answerWith(res, undefined));
  });
  return {
    url: server.url,
    async replayTo(url) {
      if (!last) throw new Error('nothing was delivered yet');
      // The same signed bytes and signature headers; the connection's own headers are fetch's.
      const headers = Object.fromEntries(
        Object.entries(last.headers).filter((e): e is [string, string] => typeof e[1] === 'string' && !['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive'].includes(e[0])),
      );
      return (await fetch(url, { method: 'POST', headers, body: last.body })).status;
    },
    close: server.close,
  };
}
