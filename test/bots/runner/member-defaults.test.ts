import { describe, expect, it } from 'vitest';
import { describeMemberDefaults, memberDefaultsInState, MemberDefaultsBook, ScopePolicy, settingsInState, type JobSpec, type Requester } from '../../../bots/runner/index.js';
import { memorySpace } from '../../../bots/runner/memory-space.js';

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

  it('keeps one small record per member: a change sets or clears, an unreadable value is left out', async () => {
    const space = memorySpace<Record<string, unknown>>();
    const store = memberDefaultsInState(space as never);
    await store.change('discord:U1', { size: '1536x1024', private: true });
    expect(await store.change('discord:U1', { size: null, quality: 'low' })).toEqual({ private: true, quality: 'low' });
    await space.update('discord-U1', () => ({ size: 'huge', quality: 'low' }));
    expect(await store.get('discord:U1')).toEqual({ quality: 'low' });
    await store.change('discord:U1', { quality: null });
    expect(await space.get('discord-U1')).toBeUndefined();
    await expect(store.change('discord:U1', { count: 99 })).rejects.toThrow();
  });
});
