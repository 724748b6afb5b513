import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { JobSpec } from '../../../bots/runner/index.js';
import type { PictorClient } from '../../../src/index.js';
import { RecordingLogger } from '../discord/harness.js';
import { failureWithSecrets, SECRETS_IN_FAILURE } from '../../helpers/intake-failures.js';
import { recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();

function job(overrides: Partial<JobSpec> = {}): JobSpec {
  return { kind: 'generate', prompt: 'a windmill at dusk', options: { quality: 'low' }, requester: requester(), ...overrides };
}

/** The emulator's client, with its generation failing at once with `error` (a bug of ours on the way, say). */
function failingClient(error: unknown): PictorClient {
  const client = kit.emu.client({ maxRetries: 0 });
  return new Proxy(client, {
    get: (target, key, receiver) =>
      key === 'generateStream'
        ? () => {
            throw error;
          }
        : (Reflect.get(target, key, receiver) as unknown),
  });
}

describe('a failed job in the operator’s log, by the runner’s one rule', () => {
  // A core error is the service’s or the network’s: warn, its code says it. Anything else: error, with the error.
  it.each([
    ['the service’s answer', { clientOptions: { maxRetries: 0 } }, 'something forbidden', 'moderation_blocked', 'warn'],
    ['the network', { clientOptions: { baseURL: 'http://127.0.0.1:9', maxRetries: 0 } }, 'a sea', 'connection_failed', 'warn'],
    ['a bug of ours', { client: () => failingClient(new TypeError("Cannot read properties of undefined (reading 'data')")) }, 'a sea', 'internal_error', 'error'],
  ] as const)('logs %s once, at the level its code has', async (_, how, prompt, code, level) => {
    const logger = new RecordingLogger();
    const { runner } = await kit.runner('client' in how ? { client: how.client(), logger } : { clientOptions: { ...how.clientOptions }, logger });
    const rec = recordingSink();
    const final = await (await runner.submit(job({ prompt }), rec.sink)).done;
    expect(final).toMatchObject({ type: 'failed', code });
    const failed = logger.entries.filter((e) => e.msg === 'job failed');
    expect(failed).toEqual([expect.objectContaining({ level, obj: expect.objectContaining({ code }) })]);
    const { err } = failed[0]!.obj as { err?: unknown };
    // An error line carries the error made loggable (its name, message and stack), never the object itself.
    if (level === 'error') expect(err).toMatchObject({ name: 'TypeError', message: expect.any(String), stack: expect.any(String) });
    else expect(err).toBeUndefined();
  });

  it('logs a failed job whose error holds credentials with none of them in the line', async () => {
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ client: failingClient(failureWithSecrets()), logger });
    const final = await (await runner.submit(job(), recordingSink().sink)).done;
    expect(final).toMatchObject({ type: 'failed', code: 'internal_error' });
    expect(logger.entries.filter((e) => e.msg === 'job failed')).toEqual([expect.objectContaining({ level: 'error', obj: expect.objectContaining({ err: expect.objectContaining({ name: 'TypeError' }) }) })]);
    const logged = inspect(logger.entries, { depth: null });
    for (const secret of SECRETS_IN_FAILURE) expect(logged).not.toContain(secret);
  });
});
