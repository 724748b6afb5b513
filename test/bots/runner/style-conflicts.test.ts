import { describe, expect, it } from 'vitest';
import { type JobIntent, type JobRefusedError } from '../../../bots/runner/index.js';
import { requester, useRunnerKit } from '../../helpers/runner-harness.js';

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

  it('leaves the member’s own conflict theirs: both options typed is the field’s refusal, as without a style', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'tr', '{prompt}', { background: 'transparent' });
    let reason: unknown;
    await runner.request({ kind: 'generate', prompt: 'a cat', options: { background: 'transparent', output_format: 'jpeg' }, requester: requester(), style: 'tr' }, refusing((r) => (reason = r)));

    expect(reason).toMatchObject({ code: 'validation_error', field: 'output_format', words: { key: 'failure.validation' } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });
});
