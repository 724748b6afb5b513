import { readdir } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { runImageJob } from '../../../src/cli/commands/image-job.js';
import type { CliContext } from '../../../src/cli/context.js';
import { JobFailure } from '../../../src/cli/job-failure.js';
import { readCoreConfig } from '../../../src/config.js';
import { connect } from '../../../src/connect.js';
import { ValidationError } from '../../../src/core/errors.js';
import { silentLogger } from '../../../src/internal.js';
import type { PictorClient } from '../../../src/index.js';
import { tempDir } from '../run-cli.js';

const before = process.listeners('SIGINT');
afterEach(() => {
  for (const listener of process.listeners('SIGINT')) if (!before.includes(listener)) process.off('SIGINT', listener);
});

describe('pictor generate when the client refuses the job before sending it', () => {
  it('fails with the refusal itself, not as a job that was started: its --json line has no pending `charged`', async () => {
    const out = await tempDir();
    const config = readCoreConfig({ PICTOR_DATA_DIR: await tempDir() });
    const refusal = new ValidationError('user', 'user must not be empty');
    const client = { generate: () => Promise.reject(refusal) } as unknown as PictorClient;
    const ctx: CliContext = {
      stdout: () => undefined,
      stderr: () => undefined,
      env: {},
      connect: (options) => connect(config, silentLogger(), options),
      client: () => client,
    };

    const failure = await runImageJob('generate', ['--prompt', 'a lighthouse', '--quality', 'low', '--out', out, '--json'], ctx).catch((error: unknown) => error);

    expect(failure).toBe(refusal);
    expect(failure).not.toBeInstanceOf(JobFailure);
    expect(await readdir(out)).toEqual([]);
  });
});
