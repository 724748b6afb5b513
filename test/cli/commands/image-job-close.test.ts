import { readdir } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { runImageJob } from '../../../src/cli/commands/image-job.js';
import type { CliContext } from '../../../src/cli/context.js';
import { readCoreConfig } from '../../../src/config.js';
import { connect } from '../../../src/connect.js';
import { silentLogger } from '../../../src/internal.js';
import { tempDir } from '../run-cli.js';

const before = process.listeners('SIGINT');
afterEach(() => {
  // A handler a failing run left attached must not answer the next test's Ctrl+C.
  for (const listener of process.listeners('SIGINT')) if (!before.includes(listener)) process.off('SIGINT', listener);
});

describe('pictor generate when closing its connection fails', () => {
  it('still stops answering Ctrl+C: a later Ctrl+C is not taken for this finished job', async () => {
    const out = await tempDir();
    const config = readCoreConfig({ PICTOR_DATA_DIR: await tempDir() });
    const said: string[] = [];
    const ctx: CliContext = {
      stdout: () => undefined,
      stderr: (line) => said.push(line),
      env: {},
      connect: async (options) => {
        const connection = await connect(config, silentLogger(), options);
        return {
          ...connection,
          close: async () => {
            await connection.close();
            throw new Error('the limiter did not stop');
          },
        };
      },
      client: (connection) => connection.client,
    };

    await expect(runImageJob('generate', ['--prompt', 'a lighthouse', '--quality', 'low', '--out', out], ctx)).rejects.toThrow('the limiter did not stop');

    expect((await readdir(out)).filter((file) => file.endsWith('.png'))).toHaveLength(1);
    expect(process.listeners('SIGINT')).toEqual(before);
    process.emit('SIGINT');
    expect(said.filter((line) => line.includes('Ctrl+C'))).toEqual([]);
  });
});
