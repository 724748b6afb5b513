/**
 * The process's stdout and stderr as lines, for an entry point (`npm start`,
 * the `pictor` command): a reader that went away (`pictor usage | head -1`,
 * `npm start | head -1`, a log shipper that died) is reported once through
 * `onClosed` instead of an unhandled EPIPE with its stack, and later lines to
 * that stream are dropped.
 */
export function processOutput(onClosed: (stream: 'stdout' | 'stderr') => void = () => {}): { out(line: string): void; err(line: string): void } {
  const closed = new Set<NodeJS.WriteStream>();
  const watch = (stream: NodeJS.WriteStream, name: 'stdout' | 'stderr') =>
    stream.on('error', () => {
      if (closed.has(stream)) return;
      closed.add(stream);
      onClosed(name);
    });
  watch(process.stdout, 'stdout');
  watch(process.stderr, 'stderr');
  const write = (stream: NodeJS.WriteStream, line: string) => {
    if (closed.has(stream) || stream.destroyed) return;
    try {
      stream.write(`${line}\n`);
    } catch {
      closed.add(stream);
    }
  };
  return { out: (line) => write(process.stdout, line), err: (line) => write(process.stderr, line) };
}
