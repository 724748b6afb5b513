import { connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { onTestFinished } from 'vitest';

/**
 * An address on 127.0.0.1 that never answers a connection, as a host whose packets are dropped: a listener whose
 * queue of connections is full and that never takes one, so the system drops each new connection's first packet and
 * a connect to it stays pending until the client gives up. The listener is held by a thread that blocks once it
 * listens (nothing is ever accepted), and its queue (a backlog of one holds two) is filled by two connections made
 * first. Closed after the running test.
 */
export async function unansweringAddress(): Promise<{ port: number }> {
  const held = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     const listener = require('node:net').createServer().listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
       parentPort.postMessage(listener.address().port);
       Atomics.wait(workerData, 0, 0);
     });`,
    { eval: true, workerData: held },
  );
  const port = await new Promise<number>((resolve, reject) => worker.once('message', resolve).once('error', reject));
  const fillers: Socket[] = [];
  onTestFinished(async () => {
    for (const filler of fillers) filler.destroy();
    Atomics.store(held, 0, 1);
    Atomics.notify(held, 0);
    await worker.terminate();
  });
  for (let i = 0; i < 2; i++) {
    const filler = connect(port, '127.0.0.1');
    fillers.push(filler);
    await new Promise<void>((resolve, reject) => filler.once('connect', resolve).once('error', reject));
  }
  return { port };
}
