import { describe, expect, it, vi } from 'vitest';
import { type JobIntent, type JobRefusedError } from '../../../bots/runner/index.js';
import { refusalFromValidation } from '../../../bots/runner/describe-refusal.js';
import { ValidationError } from '../../../src/index.js';
import { requester, useRunnerKit } from '../../helpers/runner-harness.js';
import { spyOnInstance } from '../../helpers/instance-spy.js';

const kit = useRunnerKit();
const admin = requester({ userId: 'admin-1', isAdmin: true });

function refusing(keep: (reason: unknown) => void) {
  return {
    refuse: async (reason: unknown) => keep(reason),
    accept: async (): Promise<undefined> => {
      throw new Error('the job should have been refused');
    },
    fail: async (reason: unknown) => keep(reason),
  };
}

describe('a rule between two options, one of them the house style’s', () => {
  it('names the style and its option when the member never typed it, in the surface’s words; nothing is sent or charged', async () => {
    const { runner, store } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'tr', '{prompt}, cut out', { background: 'transparent' });
    const who = requester();
    let reason: unknown;
    const intent: JobIntent = { kind: 'generate', prompt: 'a cat', options: { output_format: 'jpeg' }, requester: who, style: 'tr', fieldNames: { output_format: '--format', background: '--background' } };

    await runner.request(intent, refusing((r) => (reason = r)));

    expect(reason).toMatchObject({ code: 'validation_error', field: 'style' });
    expect((reason as JobRefusedError).words).toMatchObject({ key: 'refusal.style_option_conflict', values: { style: 'tr', option: '--background', value: 'transparent' } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBe(0);
  });

  it('names the style when its option is the one the rule is about (its format, the member’s transparent background)', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'photo', '{prompt}, a photograph', { output_format: 'jpeg' });
    let reason: unknown;
    await runner.request({ kind: 'generate', prompt: 'a cat', options: { background: 'transparent' }, requester: requester(), style: 'photo', fieldNames: { output_format: 'format' } }, refusing((r) => (reason = r)));

    expect(reason).toMatchObject({ code: 'validation_error', field: 'style' });
    expect((reason as JobRefusedError).words).toMatchObject({ key: 'refusal.style_option_conflict', values: { style: 'photo', option: 'format', value: 'jpeg' } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('leaves the member’s refusal theirs when the style’s option is what the request would have without it (the spec’s default format)', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'plain', '{prompt}', { output_format: 'png' });
    let reason: unknown;
    await runner.request({ kind: 'generate', prompt: 'a cat', options: { output_compression: 80 }, requester: requester(), style: 'plain' }, refusing((r) => (reason = r)));

    expect(reason).toMatchObject({ code: 'validation_error', field: 'output_compression', words: { key: 'failure.validation' } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('names the style when its option replaced the member’s own default (their jpeg, the style’s png, their compression)', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'plain', '{prompt}', { output_format: 'png' });
    const who = requester();
    await runner.members.change(who, { format: 'jpeg' });
    let reason: unknown;
    await runner.request({ kind: 'generate', prompt: 'a cat', options: { output_compression: 80 }, requester: who, style: 'plain' }, refusing((r) => (reason = r)));

    expect(reason).toMatchObject({ code: 'validation_error', field: 'style' });
    expect((reason as JobRefusedError).words).toMatchObject({ key: 'refusal.style_option_conflict', values: { style: 'plain', option: 'output_format', value: 'png' } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('leaves out the member’s default format the style’s transparent background does not take: the job is sent, refusing no one', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'tr', '{prompt}', { background: 'transparent' });
    const who = requester();
    await runner.members.change(who, { format: 'jpeg' });
    let admitted: unknown;
    let refused: unknown;
    await runner.request(
      { kind: 'generate', prompt: 'a cat', options: {}, requester: who, style: 'tr' },
      { refuse: async (r) => void (refused = r), accept: async (job): Promise<undefined> => void (admitted = job), fail: async (r) => void (refused = r) },
    );

    expect(refused).toBeUndefined();
    expect(admitted).toMatchObject({ options: { background: 'transparent' } });
    expect((admitted as { options: Record<string, unknown> }).options.output_format).not.toBe('jpeg');
  });

  it('tells the style’s option by the fields the core’s rule names, whatever its kind (a rule between two options the core may add)', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'wide', '{prompt}', { size: '1536x1024' });
    const asked = { quality: 'low' as const };
    const styled = await runner.styles.apply({ prompt: 'a cat', options: asked, requester: requester() }, 'wide');
    // A rule no list in the bots knows: its fields alone say the style's size is one of its options.
    const cause = new ValidationError('quality', 'quality must be high for size 1536x1024', { rule: { kind: 'one_of', values: ['high'], fields: ['size', 'quality'] } });
    const refusal = refusalFromValidation(cause);

    const blamed = await runner.styles.conflictOfStyle(refusal, asked, styled, async () => asked, { size: '--size' });

    expect(blamed).toMatchObject({ code: 'validation_error', field: 'style', words: { key: 'refusal.style_option_conflict', values: { style: 'wide', option: '--size', value: '1536x1024' } } });
  });

  it('leaves the member’s own conflict theirs: both options typed is the field’s refusal, as without a style', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'tr', '{prompt}', { background: 'transparent' });
    let reason: unknown;
    await runner.request({ kind: 'generate', prompt: 'a cat', options: { background: 'transparent', output_format: 'jpeg' }, requester: requester(), style: 'tr' }, refusing((r) => (reason = r)));

    expect(reason).toMatchObject({ code: 'validation_error', field: 'output_format', words: { key: 'failure.validation' } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('keeps the member’s refusal when reading their defaults again for it fails: a refusal, never an error in its place', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'plain', '{prompt}', { output_format: 'png' });
    const real = runner.members.apply.bind(runner.members);
    let reads = 0;
    spyOnInstance(Object.getPrototypeOf(runner.members) as typeof runner.members, 'apply', (instance) => instance === runner.members).mockImplementation((...args) =>
      ++reads === 2 ? Promise.reject(new Error('state store down')) : real(...args),
    );
    let reason: unknown;
    await runner.request({ kind: 'generate', prompt: 'a cat', options: { output_compression: 80 }, requester: requester(), style: 'plain' }, refusing((r) => (reason = r)));
    vi.restoreAllMocks();

    expect(reads).toBe(2);
    expect(reason).toMatchObject({ code: 'validation_error', field: 'output_compression' });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('reads the member’s defaults once for a refusal that is no rule between two options (a prompt too long, with a style)', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'plain', '{prompt}', { output_format: 'png' });
    const apply = spyOnInstance(Object.getPrototypeOf(runner.members) as typeof runner.members, 'apply', (instance) => instance === runner.members);
    let reason: unknown;
    await runner.request({ kind: 'generate', prompt: 'a'.repeat(40_000), options: {}, requester: requester(), style: 'plain' }, refusing((r) => (reason = r)));
    vi.restoreAllMocks();

    expect(reason).toMatchObject({ code: 'validation_error', field: 'prompt' });
    expect(apply).toHaveBeenCalledTimes(1);
  });
});
