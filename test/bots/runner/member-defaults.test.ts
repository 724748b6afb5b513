import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeMemberDefaults, memberDefaultsInState, MemberDefaultsBook, ScopePolicy, settingsInState, type JobSpec, type Requester } from '../../../bots/runner/index.js';
import { memorySpace } from '../../../bots/runner/memory-space.js';
import { openBotState, stateKeyOf, type BotState } from '../../../bots/state/index.js';
import { silentLogger } from '../../../src/internal.js';
import { useRunnerKit } from '../../helpers/runner-harness.js';

const member: Requester = { platform: 'discord', userId: 'U1', channelId: 'C1', scopeId: 'G1' };
const admin: Requester = { ...member, userId: 'A1', isAdmin: true };

function book(operator = {}) {
  const policy = new ScopePolicy({ store: settingsInState(), operator, partialImages: 2 });
  return { policy, members: new MemberDefaultsBook({ store: memberDefaultsInState(), policy }) };
}

const job = (overrides: Partial<JobSpec> = {}): JobSpec => ({ kind: 'generate', prompt: 'a boat', options: {}, requester: member, ...overrides });

describe('a member’s own defaults', () => {
  it('fills in what the member did not choose, and leaves what they chose', async () => {
    const { members } = book();
    await members.change(member, { size: '1536x1024', quality: 'low', format: 'webp', count: 3, previews: false });
    const applied = await members.apply(job({ options: { quality: 'high' } }));
    expect(applied.spec.options).toEqual({ size: '1536x1024', quality: 'high', output_format: 'webp', n: 3 });
    expect([applied.previews, applied.spec.private, applied.ignored]).toEqual([false, false, undefined]);
    // An edit makes one image: no count.
    expect((await members.apply(job({ kind: 'edit' }))).spec.options.n).toBeUndefined();
  });

  it('applies only whether previews are shown to a job sent again as it was (its own member’s Reroll or Retry): no option, no private default, no note; none at all where the request takes none', async () => {
    const { policy, members } = book();
    await policy.set(admin, 'sizes', ['1024x1024']);
    await members.change(member, { size: '1536x1024', quality: 'low', count: 3, private: true, previews: false });
    const again = await members.apply(job({ options: { quality: 'medium' } }), { own: 'previews' });
    expect([again.spec.options, again.spec.private, again.spec.privateByDefault, again.previews, again.ignored]).toEqual([{ quality: 'medium' }, false, false, false, undefined]);
    const none = await members.apply(job({ options: { quality: 'medium' } }), { own: false });
    expect([none.spec.options, none.spec.private, none.previews, none.ignored]).toEqual([{ quality: 'medium' }, false, true, undefined]);
  });

  it('never widens the rules: a default they do not allow is left out and named, the operator’s bounds included', async () => {
    const { policy, members } = book({ maxImagesPerJob: 2 });
    await policy.set(admin, 'sizes', ['1024x1024']);
    await members.change(member, { size: '1536x1024', count: 4, quality: 'low' });
    const applied = await members.apply(job());
    expect(applied.spec.options).toEqual({ quality: 'low' });
    expect(applied.ignored).toMatchObject({ key: 'member.ignored', values: { count: 2 } });
    expect((await members.view(member)).map((v) => [v.name, v.ignoredHere])).toEqual([['size', true], ['quality', false], ['count', true]]);
  });

  it('judges a default by the option rules alone: a member refused in this channel still sees their defaults as usable, and the job is refused for the channel', async () => {
    const { policy, members } = book();
    await policy.set(admin, 'channels', ['C2']);
    await members.change(member, { size: '1536x1024', quality: 'low' });
    expect((await members.view(member)).map((v) => [v.name, v.ignoredHere])).toEqual([['size', false], ['quality', false]]);
    const applied = await members.apply(job());
    expect([applied.spec.options, applied.ignored]).toEqual([{ size: '1536x1024', quality: 'low' }, undefined]);
    await expect(policy.admit(applied.spec)).rejects.toMatchObject({ code: 'channel_not_allowed' });
  });

  it('does not make a valid job invalid: a default format is left out where the job’s other options do not take it', async () => {
    const { members } = book();
    await members.change(member, { format: 'jpeg' });
    expect((await members.apply(job({ options: { background: 'transparent' } }))).spec.options.output_format).toBeUndefined();
    expect((await members.apply(job())).spec.options.output_format).toBe('jpeg');
  });

  it('makes a job private by default unless it says otherwise, and says when the default did it', async () => {
    const { members } = book();
    await members.change(member, { private: true });
    expect((await members.apply(job())).spec).toMatchObject({ private: true, privateByDefault: true });
    expect((await members.apply(job({ private: false }))).spec).toMatchObject({ private: false, privateByDefault: false });
    expect((await members.apply(job({ private: true }))).spec).toMatchObject({ private: true, privateByDefault: false });
  });

  it('shows a private default the rules forbid as what it does: a job is refused there, not made public', async () => {
    const { policy, members } = book();
    await policy.set(admin, 'privateResults', false);
    await members.change(member, { private: true, quality: 'low' });
    const view = describeMemberDefaults(await members.view(member), await policy.effective(member), member, { change: '`/imagine-settings`', clear: '`clear:`' }, 'en');
    expect(view.split('\n').slice(1, 3)).toEqual(['• quality: low', '• private: on — not allowed here: a job here is refused unless you ask for a public one']);
  });

  it('keeps one small record per member: a change sets or clears, an unreadable value is answered as such until set or cleared', async () => {
    const space = memorySpace<Record<string, unknown>>();
    const store = memberDefaultsInState(space as never);
    await store.change('discord:U1', { size: '1536x1024', private: true });
    expect(await store.change('discord:U1', { size: null, quality: 'low' })).toEqual({ private: true, quality: 'low' });
    await space.update('discord-U1', () => ({ size: 'huge', quality: 'low' }));
    expect(await store.get('discord:U1')).toEqual({ defaults: { quality: 'low' }, unreadable: ['size'] });
    await store.change('discord:U1', { quality: null, size: null });
    expect(await space.get('discord-U1')).toBeUndefined();
    await expect(store.change('discord:U1', { count: 99 })).rejects.toThrow();
  });
});

describe('a member’s defaults the bots’ state keeps but cannot read', () => {
  const kit = useRunnerKit();
  const opened: BotState[] = [];
  afterAll(async () => {
    for (const state of opened.splice(0)) await state.close();
  });

  /** A runner whose members' defaults are kept in a data folder, a member who made their results private by default, and ways to damage their record. */
  async function damageable() {
    const dir = await kit.newDir();
    const state = await openBotState({ dataDir: dir, logger: silentLogger() });
    opened.push(state);
    const { runner } = await kit.runner({ memberDefaults: memberDefaultsInState(state.store.space(state.spaces.memberDefaults)) });
    await runner.members.change(member, { size: '1536x1024', private: true });
    const file = join(dir, state.spaces.memberDefaults.dir, `${stateKeyOf('discord:U1')}.json`);
    const space = state.store.space<Record<string, unknown>>(state.spaces.memberDefaults);
    return {
      runner,
      tear: () => writeFile(file, '{"pictorState":1,"holder":null,"value":{"size":"1536x1024","pri'),
      damageField: () => space.update(stateKeyOf('discord:U1'), (stored) => ({ ...stored, private: 'true' })),
      /** A folder in the file's place (EISDIR): a read that fails now, as a permission or a disk would; answers how to undo it. */
      failReads: async () => {
        await rename(file, `${file}.aside`);
        await mkdir(file);
        return async () => {
          await rm(file, { recursive: true });
          await rename(`${file}.aside`, file);
        };
      },
    };
  }

  const cheap = (): JobSpec => ({ kind: 'generate', prompt: 'a sea', options: { quality: 'low' }, requester: member });

  it('takes the member’s own Reroll or Retry (previews alone) while a default it does not use is unreadable, and refuses it while previews is', async () => {
    const made = await damageable();
    await made.damageField();
    const again = await made.runner.members.apply(cheap(), { own: 'previews' });
    expect(again.spec.options).toEqual({ quality: 'low' });
    expect(again.previews).toBe(true);
    await made.tear();
    await expect(made.runner.members.apply(cheap(), { own: 'previews' })).rejects.toMatchObject({ code: 'defaults_unreadable', words: { values: { count: 1 } } });
  });

  it('answers the member’s job on the bot’s side while their record fails to read (no damage to refuse for), and writes nothing over their defaults', async () => {
    const made = await damageable();
    const undo = await made.failReads();
    const sent = kit.emu.emulator.requests.length;
    await expect(made.runner.submit(cheap(), () => {})).rejects.toMatchObject({ code: 'EISDIR' });
    await expect(made.runner.members.change(member, { quality: 'low' })).rejects.toMatchObject({ code: 'EISDIR' });
    expect(kit.emu.emulator.requests.length).toBe(sent);
    await undo();
    expect((await made.runner.members.view(member)).map((v) => [v.name, v.value, v.unreadable])).toEqual([['size', '1536x1024', undefined], ['private', true, undefined]]);
  });

  for (const damage of ['tear', 'damageField'] as const) {
    it(`refuses the member’s job privately, before anything is sent, never taking it for unset (${damage === 'tear' ? 'the record cut short' : 'the private field not a value'}); clearing them takes their jobs again`, async () => {
      const made = await damageable();
      await made[damage]();
      const sent = kit.emu.emulator.requests.length;
      const refusal = { code: 'defaults_unreadable', words: { key: 'refusal.defaults_unreadable', values: { count: damage === 'tear' ? 6 : 1 } } };
      await expect(made.runner.submit(cheap(), () => {})).rejects.toMatchObject(refusal);
      // A form it would make is not opened either.
      const refused: unknown[] = [];
      expect(await made.runner.requestForm(member, { refuse: async (r) => void refused.push(r), accept: async () => {} })).toBe(false);
      expect(refused).toMatchObject([refusal]);
      expect(kit.emu.emulator.requests.length).toBe(sent);
      // Their view says which cannot be read.
      expect((await made.runner.members.view(member)).filter((v) => v.unreadable).map((v) => v.name)).toEqual(damage === 'tear' ? ['size', 'quality', 'format', 'count', 'private', 'previews'] : ['private']);
      // Setting another keeps the unreadable one refused; clearing it (all of them, for a record cut short) takes the job again.
      await made.runner.members.change(member, { quality: 'low' });
      await expect(made.runner.submit(cheap(), () => {})).rejects.toMatchObject({ code: 'defaults_unreadable' });
      await made.runner.members.change(member, damage === 'tear' ? { size: null, quality: null, format: null, count: null, private: null, previews: null } : { private: null });
      const handle = await made.runner.submit(cheap(), () => {});
      expect(await handle.done).toMatchObject({ type: 'completed' });
    });
  }
});
