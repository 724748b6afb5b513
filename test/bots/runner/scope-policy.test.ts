import { describe, expect, it } from 'vitest';
import { dmScopeId, JobRefusedError, type JobSpec, type OperatorControls, type Requester } from '../../../bots/runner/index.js';
import { recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();

const admin = (overrides: Partial<Requester> = {}) => requester({ isAdmin: true, ...overrides });

function job(who: Requester, overrides: Partial<JobSpec> = {}): JobSpec {
  return { kind: 'generate', prompt: 'a small boat', options: { quality: 'low' }, requester: who, ...overrides };
}

async function runnerWith(operatorControls: OperatorControls = {}, partialImages = 0) {
  return (await kit.runner({ operatorControls, partialImages })).runner;
}

/** The code the runner refused the job with; fails the test when it ran. */
async function refusedCode(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JobRefusedError);
  return (error as JobRefusedError).code;
}

/** Runs the job to its end; answers the fields the service received. */
async function ranWith(runner: Awaited<ReturnType<typeof runnerWith>>, spec: JobSpec): Promise<Record<string, unknown>> {
  const rec = recordingSink();
  const before = kit.emu.emulator.requests.length;
  const handle = await runner.submit(spec, rec.sink);
  expect((await handle.done).type).toBe('completed');
  const sent = kit.emu.emulator.requests.slice(before);
  expect(sent).toHaveLength(1);
  return sent[0]!.fields ?? {};
}

describe('the server’s default quality and who may use high', () => {
  it('sends a plain job of a member high-quality does not list at auto, and of a listed one at the default high', async () => {
    const runner = await runnerWith();
    await runner.policy.set(admin(), 'defaultQuality', 'high');
    await runner.policy.set(admin(), 'highQualityFor', ['role:patrons']);
    const plain = (who: Requester) => job(who, { options: {} });
    expect((await runner.policy.admit(plain(requester({ roleIds: ['others'] })))).spec.options.quality).toBeUndefined();
    expect((await runner.policy.admit(plain(requester({ roleIds: ['patrons'] })))).spec.options.quality).toBe('high');
    expect(await refusedCode(runner.policy.admit(job(requester({ roleIds: ['others'] }), { options: { quality: 'high' } })))).toBe('high_quality_not_allowed');
  });

  it('falls back to the first quality the member may use when the server’s qualities leave out auto', async () => {
    const runner = await runnerWith();
    await runner.policy.set(admin(), 'qualities', ['medium', 'high']);
    await runner.policy.set(admin(), 'defaultQuality', 'high');
    await runner.policy.set(admin(), 'highQualityFor', ['user:someone-else']);
    expect((await runner.policy.admit(job(requester(), { options: {} }))).spec.options.quality).toBe('medium');
  });
});

describe('the rules of a server or workspace', () => {
  it('refuses every job in a server the operator does not list, with nothing sent, and lets the listed ones through', async () => {
    const runner = await runnerWith({ allowedScopes: ['guild-ok'] });
    expect(await refusedCode(runner.submit(job(requester({ scopeId: 'guild-elsewhere' })), () => {}))).toBe('scope_not_allowed');
    expect(await refusedCode(runner.submit(job(admin({ scopeId: 'guild-elsewhere' })), () => {}))).toBe('scope_not_allowed');
    expect(kit.emu.emulator.requests).toHaveLength(0);
    await ranWith(runner, job(requester({ scopeId: 'guild-ok' })));
  });

  it('leaves a person’s own scope (DMs, user installs) out of PICTOR_ALLOWED_SCOPES, which lists servers; the operator’s blocked words still apply there', async () => {
    const runner = await runnerWith({ allowedScopes: ['guild-ok'], blockedWords: ['kraken'] });
    const inDm = requester({ scopeId: dmScopeId('u-1') });
    expect(await refusedCode(runner.submit(job(inDm, { prompt: 'a kraken' }), () => {}))).toBe('blocked_word');
    await ranWith(runner, job(inDm));
  });

  it('takes jobs only in the channels its admins chose', async () => {
    const runner = await runnerWith();
    expect((await runner.policy.set(admin(), 'channels', ['art'])).ok).toBe(true);
    expect(await refusedCode(runner.submit(job(requester({ channelId: 'general' })), () => {}))).toBe('channel_not_allowed');
    expect(kit.emu.emulator.requests).toHaveLength(0);
    await ranWith(runner, job(requester({ channelId: 'art' })));
  });

  it('answers who a member is in no channel (a Home): the rules of who alone, the channels left to be said apart', async () => {
    const runner = await runnerWith();
    await runner.policy.set(admin(), 'channels', ['art', 'studio']);
    await runner.policy.set(admin(), 'allowed', ['role:artists']);
    const { channelId: _channel, ...artist } = requester({ roleIds: ['artists'] });
    const { channelId: _elsewhere, ...visitor } = requester({ roleIds: ['visitors'] });
    expect(await runner.policy.whoRefusal(artist)).toBeUndefined();
    expect((await runner.policy.whoRefusal(visitor))?.code).toBe('member_not_allowed');
    await runner.policy.set(admin(), 'blocked', [artist.userId]);
    expect((await runner.policy.whoRefusal(artist))?.code).toBe('member_blocked');
    // A requester with a channel (as a surface has one) is asked about in none all the same.
    expect(await runner.policy.whoRefusal(requester({ roleIds: ['artists'], channelId: 'general' }))).toBeUndefined();
  });

  it('lets only the chosen roles and users generate, and never a blocked member', async () => {
    const runner = await runnerWith();
    const carol = requester();
    await runner.policy.set(admin(), 'allowed', ['role:artists', `user:${carol.userId}`]);
    expect(await refusedCode(runner.submit(job(requester({ roleIds: ['visitors'] })), () => {}))).toBe('member_not_allowed');
    expect(kit.emu.emulator.requests).toHaveLength(0);
    const artist = requester({ roleIds: ['artists'] });
    await ranWith(runner, job(artist));
    await ranWith(runner, job(carol));

    await runner.policy.set(admin(), 'blocked', [artist.userId]);
    expect(await refusedCode(runner.submit(job(artist), () => {}))).toBe('member_blocked');
    let refusal: unknown;
    expect(await runner.requestForm(artist, { refuse: async (r) => void (refusal = r), accept: async () => {} })).toBe(false);
    expect(refusal).toMatchObject({ code: 'member_blocked' });
    expect(kit.emu.emulator.requests).toHaveLength(2);
  });

  it('refuses blocked words as whole words, whatever their case and accents, and the operator’s list in every server', async () => {
    const runner = await runnerWith({ blockedWords: ['gore'] });
    await runner.policy.set(admin({ scopeId: 'guild-1' }), 'blockedWords', ['Café', 'red fox']);
    const here = () => requester({ scopeId: 'guild-1' });
    for (const prompt of ['a CAFE at dusk', 'un cafe\u0301 noir', 'ａ ｃａｆｅ', 'a RED, fox!', 'blood and GORE'])
      expect(await refusedCode(runner.submit(job(here(), { prompt }), () => {})), prompt).toBe('blocked_word');
    expect(await refusedCode(runner.submit(job(requester({ scopeId: 'guild-2' }), { prompt: 'gore' }), () => {}))).toBe('blocked_word');
    expect(kit.emu.emulator.requests).toHaveLength(0);
    await ranWith(runner, job(here(), { prompt: 'a cafeteria with a redfox' }));
    await ranWith(runner, job(requester({ scopeId: 'guild-2' }), { prompt: 'a café' }));
  });

  it('holds members to the most images per job, and the qualities and sizes the admins allow (high only for a role)', async () => {
    const runner = await runnerWith();
    const a = admin();
    await runner.policy.set(a, 'maxImages', 2);
    await runner.policy.set(a, 'qualities', ['low', 'high']);
    await runner.policy.set(a, 'sizes', ['1024x1024']);
    await runner.policy.set(a, 'highQualityFor', ['role:patrons']);
    expect(await refusedCode(runner.submit(job(requester(), { options: { quality: 'low', n: 3 } }), () => {}))).toBe('too_many_images');
    expect(await refusedCode(runner.submit(job(requester(), { options: { quality: 'medium' } }), () => {}))).toBe('quality_not_allowed');
    expect(await refusedCode(runner.submit(job(requester(), { options: { quality: 'high' } }), () => {}))).toBe('high_quality_not_allowed');
    expect(await refusedCode(runner.submit(job(requester(), { options: { quality: 'low', size: '1536x1024' } }), () => {}))).toBe('size_not_allowed');
    expect(kit.emu.emulator.requests).toHaveLength(0);
    expect(await ranWith(runner, job(requester({ roleIds: ['patrons'] }), { options: { quality: 'high', n: 2 } }))).toMatchObject({ quality: 'high', n: 2 });
  });

  it('leaves a value the service would not take at all to validation, which names the field, where the admins narrowed the choices', async () => {
    const runner = await runnerWith();
    const a = admin();
    await runner.policy.set(a, 'maxImages', 2);
    await runner.policy.set(a, 'sizes', ['1024x1024']);
    const bad = async (options: JobSpec['options']) => {
      const error = await runner.submit(job(requester(), { options: { quality: 'low', ...options } }), () => {}).then(
        () => undefined,
        (e: unknown) => e as JobRefusedError,
      );
      return error && { code: error.code, field: error.field };
    };
    expect(await bad({ size: '512x512' as never })).toEqual({ code: 'validation_error', field: 'size' });
    expect(await bad({ n: 11 })).toEqual({ code: 'validation_error', field: 'n' });
    expect(await bad({ quality: 'best' as never })).toEqual({ code: 'validation_error', field: 'quality' });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('fills in the server’s defaults for what a member did not choose, and keeps what they chose', async () => {
    const runner = await runnerWith({}, 2);
    const a = admin();
    await runner.policy.set(a, 'defaultSize', '1536x1024');
    await runner.policy.set(a, 'defaultQuality', 'low');
    await runner.policy.set(a, 'defaultPreviews', 0);
    const chose = await ranWith(runner, job(requester(), { options: { size: '1024x1536', quality: 'medium' } }));
    expect(chose).toMatchObject({ size: '1024x1536', quality: 'medium' });
    const left = await ranWith(runner, job(requester(), { options: {} }));
    expect(left).toMatchObject({ size: '1536x1024', quality: 'low' });
    expect(left).not.toHaveProperty('partial_images');
  });

  it('uses an allowed quality when the spec’s default is not among those allowed', async () => {
    const runner = await runnerWith({ qualities: ['low', 'medium'] });
    expect(await ranWith(runner, job(requester(), { options: {} }))).toMatchObject({ quality: 'low' });
  });

  it('keeps moderation within what the operator allows', async () => {
    const strict = await runnerWith();
    expect(await strict.policy.set(admin(), 'moderation', 'low')).toMatchObject({ ok: false, code: 'not_allowed_by_operator' });
    expect(await refusedCode(strict.submit(job(requester(), { options: { quality: 'low', moderation: 'low' } }), () => {}))).toBe('moderation_not_allowed');
    expect(kit.emu.emulator.requests).toHaveLength(0);

    const lenient = await runnerWith({ allowLowModeration: true });
    expect((await lenient.policy.set(admin(), 'moderation', 'low')).ok).toBe(true);
    expect(await ranWith(lenient, job(requester()))).toMatchObject({ moderation: 'low' });
  });

  it('lets only admins change settings, and never beyond the operator’s bounds', async () => {
    const runner = await runnerWith({ maxImagesPerJob: 4, qualities: ['low', 'medium'] }, 1);
    expect(await runner.policy.set(requester(), 'maxImages', 2)).toMatchObject({ ok: false, code: 'not_admin' });
    expect(await runner.policy.set(admin(), 'maxImages', 5)).toMatchObject({ ok: false, code: 'not_allowed_by_operator' });
    expect(await runner.policy.set(admin(), 'qualities', ['high'])).toMatchObject({ ok: false, code: 'not_allowed_by_operator' });
    expect(await runner.policy.set(admin(), 'defaultQuality', 'high')).toMatchObject({ ok: false, code: 'not_allowed_by_operator' });
    expect(await runner.policy.set(admin(), 'defaultPreviews', 2)).toMatchObject({ ok: false, code: 'not_allowed_by_operator' });
    expect(await runner.policy.set(admin(), 'maxImages', 0)).toMatchObject({ ok: false, code: 'invalid_value' });
    expect(await refusedCode(runner.submit(job(requester(), { options: { quality: 'low', n: 5 } }), () => {}))).toBe('too_many_images');
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('says where each effective setting comes from, and who changed an admin’s', async () => {
    const runner = await runnerWith({ maxImagesPerJob: 4 }, 2);
    const a = admin();
    await runner.policy.set(a, 'blockedWords', ['spiders']);
    const s = await runner.policy.effective(a);
    expect(s.maxImages).toEqual({ value: 4, source: 'operator' });
    expect(s.blockedWords).toMatchObject({ value: ['spiders'], source: 'admin', change: { by: `discord:${a.userId}` } });
    expect(s.channels).toEqual({ value: [], source: 'default' });
    expect(s.defaultPreviews).toEqual({ value: 2, source: 'operator' });
  });
});
