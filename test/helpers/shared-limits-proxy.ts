import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay on 127.0.0.1 in front of a real Redis that a test steers, by events rather than by time. Its plug can be
 * pulled: `cut()` drops every open connection and refuses new ones (as if Redis went away), `restore()` lets
 * connections through again. It can hold Redis's answers until the test lets them through (`holdAnswers`,
 * `releaseAnswers`: answers that arrive late, when the test says so — with fake timers, after as much fake time as
 * it wants), and drop what clients send (`dropRequests`: a network that no longer carries anything to Redis).
 * `forwardedAt` has the time (`Date.now()`, fake or real) each piece was sent on to Redis.
 */
export interface CuttableLink {
  /** `redis://127.0.0.1:<port>` plus the target's path (db), for clients. */
  url: string;
  cut(): void;
  restore(): void;
  readonly forwardedAt: readonly number[];
  readonly heldAnswers: number;
  /** Resolves once `count` pieces have been sent on to Redis in all. */
  whenForwarded(count: number): Promise<void>;
  /** Pieces dropped (`dropRequests`) so far. */
  readonly dropped: number;
  /** Resolves once `count` pieces have been dropped in all. */
  whenDropped(count: number): Promise<void>;
  /** Connections refused while cut, so far. */
  readonly refused: number;
  /** Resolves once `count` connections have been refused while cut, in all. */
  whenRefused(count: number): Promise<void>;
  /** Resolves once at least one answer is held. */
  whenAnswerHeld(): Promise<void>;
  holdAnswers(): void;
  /** Lets every held answer through (and later ones too, until `holdAnswers`). */
  releaseAnswers(): void;
  dropRequests(): void;
  close(): Promise<void>;
}

export async function startCuttableLink(targetUrl: string): Promise<CuttableLink> {
  const target = new URL(targetUrl);
  const targetPort = Number(target.port || 6379);
  const sockets = new Set<Socket>();
  const forwardedAt: number[] = [];
  const held: { to: Socket; chunk: Buffer }[] = [];
  let open = true;
  let holding = false;
  let dropping = false;
  let dropped = 0;
  let refused = 0;
  let waiters: { ready: () => boolean; resolve: () => void }[] = [];
  const wake = () => {
    waiters = waiters.filter((w) => (w.ready() ? (w.resolve(), false) : true));
  };
  const when = (ready: () => boolean) =>
    new Promise<void>((resolve) => {
      if (ready()) resolve();
      else waiters.push({ ready, resolve });
    });
  const server: Server = createServer((inbound) => {
    if (!open) {
      inbound.destroy();
      refused++;
      wake();
      return;
    }
    const outbound = connect(targetPort, target.hostname);
    sockets.add(inbound);
    sockets.add(outbound);
    const drop = () => {
      inbound.destroy();
      outbound.destroy();
      sockets.delete(inbound);
      sockets.delete(outbound);
    };
    inbound.on('error', drop).on('close', drop);
    outbound.on('error', drop).on('close', drop);
    inbound.on('data', (chunk: Buffer) => {
      if (dropping) {
        dropped++;
        wake();
        return;
      }
      forwardedAt.push(Date.now());
      outbound.write(chunk);
      wake();
    });
    outbound.on('data', (chunk: Buffer) => {
      if (holding) held.push({ to: inbound, chunk });
      else inbound.write(chunk);
      wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    restore() {
      open = true;
    },
    forwardedAt,
    get heldAnswers() {
      return held.length;
    },
    whenForwarded: (count) => when(() => forwardedAt.length >= count),
    get dropped() {
      return dropped;
    },
    whenDropped: (count) => when(() => dropped >= count),
    get refused() {
      return refused;
    },
    whenRefused: (count) => when(() => refused >= count),
    whenAnswerHeld: () => when(() => held.length > 0),
    holdAnswers() {
      holding = true;
    },
    releaseAnswers() {
      holding = false;
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    dropRequests() {
      dropping = true;
    },
    close() {
      open = false;
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
