import { readdir } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runImageJob } from '../../../src/cli/commands/image-job.js';
import type { CliContext } from '../../../src/cli/context.js';
import { readCoreConfig } from '../../../src/config.js';
import { connect } from '../../../src/connect.js';
import { silentLogger } from '../../../src/internal.js';
import { tempDir } from '../run-cli.js';

const before = process.listeners('SIGINT');
afterEach(() => {
  for (const listener of process.listeners('SIGINT')) if (!before.includes(listener)) process.off('SIGINT', listener);
});

/** A terminal that refuses every write (a terminal gone away) from the first one `from` picks on. */
function failingTerminal(from: (text: string) => boolean): Writable & { isTTY: boolean } {
  let gone = false;
  const terminal = Object.assign(new Writable({ write: (_chunk, _encoding, done) => done() }), {
    isTTY: true,
    columns: 80,
    cursorTo: () => true,
    moveCursor: () => true,
    clearLine: () => true,
  });
  const write = terminal.write.bind(terminal);
  terminal.write = ((...args: Parameters<Writable['write']>) => {
    gone ||= from(String(args[0]));
    if (gone) throw new Error('the terminal is gone');
    return write(...args);
  }) as Writable['write'];
  return terminal;
}

/** A run of `pictor generate` on the embedded emulator whose status line is drawn on `terminal`. */
async function generateOn(terminal: Writable & { isTTY: boolean }) {
  const out = await tempDir();
  const config = readCoreConfig({ PICTOR_DATA_DIR: await tempDir(), PICTOR_EMULATOR_LATENCY_MS: '0' });
  const said: string[] = [];
  let closed = 0;
  const ctx: CliContext = {
    stdout: () => undefined,
    stderr: (line) => said.push(line),
    env: {},
    terminal,
    connect: async (options) => {
      const connection = await connect(config, silentLogger(), options);
      return { ...connection, close: async () => (closed++, connection.close()) };
    },
    client: (connection) => connection.client,
  };
  const code = await runImageJob('generate', ['--prompt', 'a lighthouse', '--quality', 'low', '--out', out], ctx);
  return { code, said, closed, images: (await readdir(out)).filter((file) => file.endsWith('.png')) };
}

describe('pictor generate when its status line fails', () => {
  it('says the live line could not start, shows plain lines instead, makes the image and closes its connection', async () => {
    const run = await generateOn(failingTerminal(() => true));
    expect(run).toMatchObject({ code: 0, closed: 1, images: [expect.any(String)] });
    expect(run.said).toContain('pictor: the live status line could not start (the terminal is gone); printing the status every 5 s instead.');
    expect(process.listeners('SIGINT')).toEqual(before);
  });

  it('says so once when the line fails once the request is sent, and the job goes on to its image and closes its connection', async () => {
    const run = await generateOn(failingTerminal((text) => text.includes('sent, the service is working')));
    expect(run).toMatchObject({ code: 0, closed: 1, images: [expect.any(String)] });
    expect(run.said.filter((line) => line.startsWith('pictor: the status line failed'))).toEqual(['pictor: the status line failed (the terminal is gone); the job goes on without it.']);
    expect(process.listeners('SIGINT')).toEqual(before);
  });
});
