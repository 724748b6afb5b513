import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InputImageError } from '../../../bots/discord/download-images.js';
import { words, type InputImage, type IntakeAnswers, type JobRunner, type JobSpec, type Requester } from '../../../bots/runner/index.js';
import { AbortedError, ImageLimiter, PRICE_TABLE, type PictorClient } from '../../../src/index.js';
import { RecordingLogger } from '../discord/harness.js';
import { makeImage } from '../../helpers/images.js';
import { failureWithSecrets, INTAKE_FAILURES, SECRETS_IN_FAILURE } from '../../helpers/intake-failures.js';
import { editBeingFetched, recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();
afterEach(() => {
  vi.restoreAllMocks();
});

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

/** The log lines that carry `code`. */
function linesOf(logger: RecordingLogger, code: string) {
  return logger.entries.filter((e) => (e.obj as { code?: string }).code === code);
}

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
      expect(linesOf(logger, 'queue_full')).toEqual([expect.objectContaining({ level: 'warn', obj: expect.objectContaining({ jobId: expect.any(String), limit: 1, used: 1, queued: 1 }) })]);
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
      expect(linesOf(logger, 'queue_full')).toEqual([expect.objectContaining({ level: 'warn', obj: expect.objectContaining({ jobId: expect.any(String) }) })]);
      gate.open();
      expect((await first.done).type).toBe('completed');
    } finally {
      gate.open();
      await gate.stop();
    }
  });
});

/** Runs `spec` through the intake, keeping what it was refused or failed with. */
async function intake(runner: JobRunner, spec: Parameters<JobRunner['request']>[0]) {
  const told: { refused: unknown[]; failed: unknown[] } = { refused: [], failed: [] };
  const answers: IntakeAnswers = {
    refuse: async (reason) => void told.refused.push(reason),
    accept: async () => ({ sink: () => {} }),
    fail: async (reason) => void told.failed.push(reason),
  };
  const handle = await runner.request(spec, answers);
  return { handle, ...told };
}

/** An edit whose images, once the intake admitted it, fail to come with `error` (as a surface's download does). */
function editFailingWith(error: unknown, who: Requester = requester()): Parameters<JobRunner['request']>[0] {
  return { kind: 'edit', prompt: 'a brighter sky', options: { quality: 'low' }, requester: who, images: { declaredBytes: 1000, fetch: async (): Promise<InputImage[]> => Promise.reject(error) } };
}

// Every line about a request the intake did not take is the runner's: one, by the one rule (`failureLogLevel`), with
// the request's id, the limit and the use where there are some. The surface that tells the member writes none.
describe('a request the intake did not take, in the operator’s log', () => {
  it.each(INTAKE_FAILURES)('logs %s once, with the request’s id, at the level its code has', async (_, reason, code, level) => {
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ logger });
    vi.spyOn(runner.budgets, 'limitsFor').mockRejectedValue(reason);
    const spec = job();
    const { handle, refused } = await intake(runner, spec);
    expect(handle).toBeUndefined();
    expect(refused).toEqual([reason]);
    expect(linesOf(logger, code)).toEqual([expect.objectContaining({ level, obj: expect.objectContaining({ jobId: expect.any(String), userId: spec.requester.userId }) })]);
    const { err } = linesOf(logger, code)[0]!.obj as { err?: unknown };
    if (level === 'error') expect(err).toMatchObject({ name: reason.name });
    else expect(err).toBeUndefined();
  });

  it('logs a request whose intake failed with credentials in its error with none of them in the line', async () => {
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ logger });
    vi.spyOn(runner.budgets, 'limitsFor').mockRejectedValue(failureWithSecrets());
    await intake(runner, job());
    expect(linesOf(logger, 'internal_error')).toEqual([expect.objectContaining({ level: 'error', obj: expect.objectContaining({ err: expect.objectContaining({ name: 'TypeError' }) }) })]);
    const logged = inspect(logger.entries, { depth: null });
    for (const secret of SECRETS_IN_FAILURE) expect(logged).not.toContain(secret);
    expect(logged).toContain('[redacted]');
  });

  it('logs a job refused by a rule of the server once, with its id and code, at info', async () => {
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ logger, operatorControls: { blockedWords: ['kraken'] } });
    const { refused } = await intake(runner, job({ prompt: 'a kraken at sea' }));
    expect(refused).toEqual([expect.objectContaining({ code: 'blocked_word' })]);
    expect(linesOf(logger, 'blocked_word')).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ jobId: expect.any(String) }) })]);
  });

  it('logs a job refused by a budget once, with its id, the limit and the use, at info', async () => {
    const logger = new RecordingLogger();
    const cap = PRICE_TABLE['1024x1024'].low / 2;
    const { runner } = await kit.runner({ logger, limits: { userDailyUsd: cap } });
    const { refused } = await intake(runner, job());
    expect(refused).toEqual([expect.objectContaining({ code: 'budget_user_daily' })]);
    expect(linesOf(logger, 'budget_user_daily')).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ jobId: expect.any(String), limit: cap, used: 0 }) })]);
  });

  it.each([
    ['a bug of ours', new TypeError("Cannot read properties of undefined (reading 'data')"), 'internal_error', 'error'],
    ['an input image the surface refused', new InputImageError('not_an_image', words('discord.input.not_an_image', { label: 'image1', file: '`cat.png`' }), 'image1'), 'not_an_image', 'info'],
  ] as const)('logs an admitted job whose start failed (%s) once, with its id, at the level its code has', async (_, reason, code, level) => {
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ logger });
    const { handle, refused, failed } = await intake(runner, editFailingWith(reason));
    expect([handle, refused, failed]).toEqual([undefined, [], [reason]]);
    expect(linesOf(logger, code)).toEqual([expect.objectContaining({ level, obj: expect.objectContaining({ jobId: expect.any(String) }) })]);
  });

  it('logs an admitted job its member cancelled while its images came as a cancel (info), not as a failure', async () => {
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ logger });
    const { failed } = await intake(runner, editFailingWith(new AbortedError('the job was cancelled before it was sent', { mayBeBilled: false })));
    expect(failed).toHaveLength(1);
    expect(logger.entries.filter((e) => e.level !== 'info')).toEqual([]);
    expect(logger.entries.filter((e) => (e.obj as { jobId?: string }).jobId !== undefined)).toHaveLength(1);
  });

  it.each(INTAKE_FAILURES)('logs a form it did not open for %s once, at the level its code has', async (_, reason, code, level) => {
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ logger });
    vi.spyOn(runner.policy, 'whoWhereRefusal').mockRejectedValue(reason);
    const refused: unknown[] = [];
    expect(await runner.requestForm(requester(), { refuse: async (r) => void refused.push(r), accept: async () => {} })).toBe(false);
    expect(refused).toEqual([reason]);
    expect(linesOf(logger, code)).toEqual([expect.objectContaining({ level })]);
  });

  it('logs a form refused by a rule of the server once, with its code, at info', async () => {
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ logger, operatorControls: { allowedScopes: ['another-guild'] } });
    expect(await runner.requestForm(requester(), { refuse: async () => {}, accept: async () => {} })).toBe(false);
    expect(linesOf(logger, 'scope_not_allowed')).toEqual([expect.objectContaining({ level: 'info' })]);
  });
});

// The member's style is what they typed (a Slack flag's value is any length): the line names the scope's style the
// job used, as the scope names it, or none.
describe('a refused job’s house style, in the operator’s log', () => {
  it('names no style for one the scope does not have, and holds none of what was typed for it', async () => {
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ logger });
    const typed = `our launch plans for the harbour ${'and more '.repeat(200)}`;
    const { refused } = await intake(runner, { ...job(), style: typed });
    expect(refused).toEqual([expect.objectContaining({ code: 'style_unknown' })]);
    const lines = linesOf(logger, 'style_unknown');
    expect(lines).toEqual([expect.objectContaining({ level: 'info', obj: expect.not.objectContaining({ style: expect.anything() }) })]);
    expect(inspect(lines, { depth: null })).not.toContain('launch plans');
  });

  it('names the style a job refused after it was applied as the scope names it, not as it was typed', async () => {
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ logger, operatorControls: { blockedWords: ['kraken'] } });
    const member = requester();
    await runner.styles.define({ ...member, userId: 'an-admin', isAdmin: true }, 'poster', 'a poster of {prompt}');
    const { refused } = await intake(runner, { ...job({ prompt: 'a kraken at sea', requester: member }), style: '  PoStEr ' });
    expect(refused).toEqual([expect.objectContaining({ code: 'blocked_word' })]);
    expect(linesOf(logger, 'blocked_word')).toEqual([expect.objectContaining({ obj: expect.objectContaining({ style: 'poster' }) })]);
  });
});
