import { describe, expect, it } from 'vitest';
import { JobRefusedError, type JobRefusedError as Refusal, type JobSpec } from '../../../bots/runner/index.js';
import { PRICE_TABLE, SIZES } from '../../../src/index.js';
import { makeImage } from '../../helpers/images.js';
import { recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();
const LOW = PRICE_TABLE['1024x1024'].low;
const DAY_MS = 24 * 60 * 60 * 1000;

function lowJob(overrides: Partial<JobSpec> = {}): JobSpec {
  return { kind: 'generate', prompt: 'a small boat', options: { quality: 'low' }, requester: requester(), ...overrides };
}

async function refusal(promise: Promise<unknown>): Promise<Refusal> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JobRefusedError);
  return error as Refusal;
}

describe('JobRunner refusals', () => {
  it('refuses an unknown size naming the field and the allowed sizes, before anything is sent or reserved', async () => {
    const { runner, store } = await kit.runner();
    const who = requester();
    const rec = recordingSink();

    const error = await refusal(runner.submit(lowJob({ options: { size: '512x512' as never }, requester: who }), rec.sink));

    expect(error.code).toBe('validation_error');
    expect(error.field).toBe('size');
    expect(error.message).toContain('size');
    for (const size of SIZES) expect(error.message).toContain(size);
    expect(kit.emu.emulator.requests).toHaveLength(0);
    expect(rec.received).toHaveLength(0);
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBe(0);
    expect(runner.activeJobs()).toHaveLength(0);
  });

  it('refuses a transparent background with JPEG output, explaining the cross-field rule', async () => {
    const { runner } = await kit.runner();
    const error = await refusal(runner.submit(lowJob({ options: { background: 'transparent', output_format: 'jpeg' } }), () => {}));
    expect(error.code).toBe('validation_error');
    expect(error.field).toBe('output_format');
    expect(error.message).toMatch(/png or webp/);
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('refuses an edit whose input is not an image by its content, whatever its file name says', async () => {
    const { runner } = await kit.runner();
    const fake = { data: Buffer.from('GIF89a not really an image'), filename: 'cat.png' };
    const error = await refusal(runner.submit(lowJob({ kind: 'edit', images: [fake] }), () => {}));
    expect(error.code).toBe('validation_error');
    expect(error.field).toBe('image[0]');
    expect(error.message).toContain('cat.png');
    expect(error.message).toContain('checked by its content');
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('refuses an edit without images, naming the image field', async () => {
    const { runner } = await kit.runner();
    const error = await refusal(runner.submit(lowJob({ kind: 'edit', images: [] }), () => {}));
    expect(error.code).toBe('validation_error');
    expect(error.field).toBe('image');
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('accepts real PNG input for an edit', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    const handle = await runner.submit(lowJob({ kind: 'edit', images: [{ data: Buffer.from(await makeImage('png')) }] }), () => {});
    expect((await handle.done).type).toBe('completed');
  });

  it('refuses a job once the user has spent their daily budget, naming the budget and when it resets', async () => {
    const { runner } = await kit.runner({ limits: { userDailyUsd: LOW * 1.5 }, partialImages: 0 });
    const who = requester();
    expect((await (await runner.submit(lowJob({ requester: who }), () => {})).done).type).toBe('completed');

    const before = Date.now();
    const error = await refusal(runner.submit(lowJob({ requester: who }), () => {}));

    expect(error.code).toBe('budget_user_daily');
    expect(error.limit).toBeCloseTo(LOW * 1.5, 9);
    expect(error.used).toBeCloseTo(LOW, 9);
    expect(error.resetsAt).toBe(Math.floor(before / DAY_MS) * DAY_MS + DAY_MS);
    expect(kit.emu.emulator.requests).toHaveLength(1);
  });

  it('says when the budget is used up entirely', async () => {
    const { runner } = await kit.runner({ limits: { userDailyUsd: LOW }, partialImages: 0 });
    const who = requester();
    await (await runner.submit(lowJob({ requester: who }), () => {})).done;
    const error = await refusal(runner.submit(lowJob({ requester: who }), () => {}));
    expect(error.code).toBe('budget_user_daily');
    expect(error.used).toBeCloseTo(error.limit!, 9);
  });

  it('refuses at the account’s cap on top of the user’s, naming the account, what is left and when it resets', async () => {
    const { runner } = await kit.runner({ limits: { accountDailyUsd: LOW * 1.5, userDailyUsd: 1 }, partialImages: 0 });
    await (await runner.submit(lowJob(), () => {})).done;
    const error = await refusal(runner.submit(lowJob(), () => {}));
    expect(error.code).toBe('budget_account_daily');
    expect(error).toMatchObject({ limit: expect.closeTo(LOW * 1.5, 9), used: expect.closeTo(LOW, 9), resetsAt: (Math.floor(Date.now() / DAY_MS) + 1) * DAY_MS });
  });

  it('names the date a monthly cap resets', async () => {
    const { runner } = await kit.runner({ limits: { userMonthlyUsd: LOW / 2 }, partialImages: 0 });
    const error = await refusal(runner.submit(lowJob(), () => {}));
    expect(error.code).toBe('budget_user_monthly');
    expect(new Date(error.resetsAt!).toISOString()).toMatch(/^\d{4}-\d\d-01T00:00:00\.000Z$/);
  });

  it('refuses a job that could cost more than the whole daily budget, at the highest price that could apply', async () => {
    const { runner } = await kit.runner({ limits: { userDailyUsd: 1 } });
    const error = await refusal(runner.submit(lowJob({ options: { n: 10, quality: 'auto' } }), () => {}));
    expect(error.code).toBe('budget_user_daily');
    expect(error.message).toContain('could cost up to $2.24');
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('refuses a job once the server has spent its daily budget, whoever asks', async () => {
    const { runner } = await kit.runner({ limits: { scopeDailyUsd: LOW * 1.5 }, partialImages: 0 });
    await (await runner.submit(lowJob({ requester: requester({ scopeId: 'guild-x' }) }), () => {})).done;

    const error = await refusal(runner.submit(lowJob({ requester: requester({ scopeId: 'guild-x' }) }), () => {}));
    expect(error.code).toBe('budget_scope_daily');
    expect(error.message).toContain('this server’s daily budget');

    const elsewhere = await runner.submit(lowJob({ requester: requester({ scopeId: 'guild-y' }) }), () => {});
    expect((await elsewhere.done).type).toBe('completed');
  });

  it('calls a Slack scope a workspace', async () => {
    const { runner } = await kit.runner({ limits: { scopeDailyUsd: 0 } });
    const error = await refusal(runner.submit(lowJob({ requester: requester({ platform: 'slack', scopeId: 'T1' }) }), () => {}));
    expect(error.code).toBe('budget_scope_daily');
    expect(error.message).toMatch(/^This workspace has reached its daily budget of \$0\.00/);
  });

  it('refuses a job while the user already has the most jobs allowed at once, and accepts again when one ends', async () => {
    kit.emu.emulator.configure({ latencyMs: 3000 });
    const { runner } = await kit.runner({ limits: { userConcurrentJobs: 1 }, partialImages: 0 });
    const who = requester();
    const first = await runner.submit(lowJob({ requester: who }), () => {});

    const error = await refusal(runner.submit(lowJob({ requester: who }), () => {}));
    expect(error.code).toBe('user_concurrency');
    expect(error.message).toContain('(1)');
    expect(error.limit).toBe(1);
    expect(error.used).toBe(1);

    expect(runner.cancel(first.id, who)).toBe(true);
    expect((await first.done).type).toBe('cancelled');
    const again = await runner.submit(lowJob({ requester: who }), () => {});
    expect(runner.get(again.id)?.status).toMatch(/^(queued|running)$/);
    expect(runner.cancel(again.id, who)).toBe(true);
    await again.done;
  });

  it('refuses a job within the cooldown, saying how long to wait', async () => {
    const { runner } = await kit.runner({ limits: { userCooldownSeconds: 90 }, partialImages: 0 });
    const who = requester();
    const started = Date.now();
    await (await runner.submit(lowJob({ requester: who }), () => {})).done;

    const error = await refusal(runner.submit(lowJob({ requester: who }), () => {}));
    expect(error.code).toBe('user_cooldown');
    expect(error.message).toMatch(/^You can start one job every 1 min 30 s; try again in 1 min [23]\d s\.$/);
    expect(error.resetsAt).toBeGreaterThanOrEqual(started + 90_000);
    expect((await (await runner.submit(lowJob(), () => {})).done).type).toBe('completed');
  });

  it('lets exactly one of two jobs racing for the last of a budget through', async () => {
    const { runner, store } = await kit.runner({ limits: { userDailyUsd: LOW * 1.5 }, partialImages: 0 });
    const who = requester();

    const results = await Promise.allSettled([runner.submit(lowJob({ requester: who }), () => {}), runner.submit(lowJob({ requester: who }), () => {})]);

    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect((lost[0]!.reason as Refusal).code).toBe('budget_user_daily');
    await (won[0] as PromiseFulfilledResult<{ done: Promise<unknown> }>).value.done;
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBeCloseTo(LOW, 9);
  });

  it('keeps refusing after a restart: the ledger is read back from the data folder', async () => {
    const dir = await kit.newDir();
    const who = requester();
    const first = await kit.runner({ store: await kit.store({ dir }), limits: { userDailyUsd: LOW * 1.5 }, partialImages: 0 });
    await (await first.runner.submit(lowJob({ requester: who }), () => {})).done;
    await first.runner.shutdown();
    await first.store.close();

    const second = await kit.runner({ store: await kit.store({ dir }), limits: { userDailyUsd: LOW * 1.5 }, partialImages: 0 });
    const error = await refusal(second.runner.submit(lowJob({ requester: who }), () => {}));
    expect(error.code).toBe('budget_user_daily');
    expect(error.used).toBeCloseTo(LOW, 9);
  });

  it('takes no new jobs once shut down', async () => {
    const { runner } = await kit.runner();
    await runner.shutdown();
    await expect(runner.submit(lowJob(), () => {})).rejects.toThrow(/shutting down/);
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });
});
