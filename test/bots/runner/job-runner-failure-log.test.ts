import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { JobSpec } from '../../../bots/runner/index.js';
import { ImageLimiter, type PictorClient } from '../../../src/index.js';
import { RecordingLogger } from '../discord/harness.js';
import { makeImage } from '../../helpers/images.js';
import { failureWithSecrets, SECRETS_IN_FAILURE } from '../../helpers/intake-failures.js';
import { editBeingFetched, recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';

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

/** A limiter that keeps every request waiting until `open`: the jobs sent to it stay queued, holding their place. */
class GateLimiter extends ImageLimiter {
  #open!: () => void;
  readonly #gate = new Promise<void>((resolve) => (this.#open = resolve));

  override async acquire(options: Parameters<ImageLimiter['acquire']>[0]): Promise<() => void> {
    await this.#gate;
    return super.acquire(options);
  }

  open(): void {
    this.#open();
  }
}

describe('a job refused because the queue is full, in the operator’s log', () => {
  // The bot at its capacity is the operator's to see (PICTOR_LOG_LEVEL=warn shows it), unlike a member's refusal.
  it('logs a job the queue had no place for at warn, with its code', async () => {
    const logger = new RecordingLogger();
    const gate = new GateLimiter({ maxConcurrent: 1 });
    const { runner } = await kit.runner({ partialImages: 0, maxQueuedJobs: 1, clientOptions: { limiter: gate }, logger });
    try {
      const first = await runner.submit(job({ prompt: 'first' }), recordingSink().sink);
      await expect(runner.submit(job({ prompt: 'second' }), recordingSink().sink)).rejects.toMatchObject({ code: 'queue_full' });
      expect(logger.entries.filter((e) => e.msg === 'job refused: the queue is full')).toEqual([expect.objectContaining({ level: 'warn', obj: expect.objectContaining({ code: 'queue_full' }) })]);
      gate.open();
      expect((await first.done).type).toBe('completed');
    } finally {
      gate.open();
      await gate.stop();
    }
  });

  it('logs an edit whose images, once here, took the queue past its bound at warn, with its code', async () => {
    const image = Buffer.from(await makeImage('png'));
    const logger = new RecordingLogger();
    const gate = new GateLimiter({ maxConcurrent: 1 });
    const { runner } = await kit.runner({ partialImages: 0, maxQueuedInputBytes: Math.floor(image.length * 1.5), clientOptions: { limiter: gate }, logger });
    try {
      const first = await runner.submit({ kind: 'edit', prompt: 'first', options: { quality: 'low' }, images: [{ data: image, filename: 'a.png' }], requester: requester() }, recordingSink().sink);
      // Declared small enough to be taken; its images turn out to weigh as much as the first's.
      const fetching = editBeingFetched(runner, requester(), 1);
      expect(await fetching.admitted).toBeUndefined();
      fetching.arrive([{ data: image, filename: 'b.png' }]);
      expect(await fetching.handle).toBeUndefined();
      expect(logger.entries.filter((e) => e.msg === 'edit refused once its images were here: the queue is full')).toEqual([
        expect.objectContaining({ level: 'warn', obj: expect.objectContaining({ code: 'queue_full' }) }),
      ]);
      gate.open();
      expect((await first.done).type).toBe('completed');
    } finally {
      gate.open();
      await gate.stop();
    }
  });
});
