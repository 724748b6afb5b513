import { connect } from 'node:net';

/**
 * Redis's MONITOR over a socket of its own, each command Redis runs given to `onLine` as Redis writes it
 * (`+<time> [<db> <client>] "<command>" "<arg>" …`), from once MONITOR is on. Not ioredis's `monitor()`: when Redis's
 * OK and the first commands it shows come in one read, ioredis takes those for answers to no command ("Command queue
 * state error", thrown where no test can catch it).
 */
export async function redisMonitor(url: string, defer: (cleanup: () => Promise<void>) => void, onLine: (line: string) => void): Promise<void> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port || 6379), hostname);
  defer(async () => void socket.destroy());
  let buffered = '';
  let on!: () => void;
  const monitoring = new Promise<void>((resolve, reject) => {
    on = resolve;
    socket.once('error', reject);
  });
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf('\r\n')) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (line === '+OK') on();
      else onLine(line);
    }
  });
  socket.write('MONITOR\r\n');
  await monitoring;
}

/** A MONITOR line's command and arguments (`"<command>" "<arg>" …`, as Redis quotes them), the command in lower case. */
export function monitoredWords(line: string): string[] {
  const words = [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]!.replace(/\\(.)/g, '$1'));
  if (words[0] !== undefined) words[0] = words[0].toLowerCase();
  return words;
}
