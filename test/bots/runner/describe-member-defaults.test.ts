import { describe, expect, it } from 'vitest';
import { refusalOfUnreadableDefaults } from '../../../bots/runner/describe-refusal.js';
import { memorySpace } from '../../../bots/runner/memory-space.js';
import { describeFailure, describeMemberDefaults, listOf, say, dmScopeId, memberDefaultsInState, MemberDefaultsBook, ScopePolicy, settingsInState, type Requester } from '../../../bots/runner/index.js';

const member: Requester = { platform: 'discord', userId: 'U1', channelId: 'C1', scopeId: 'G1', roleIds: ['R1'] };
const admin: Requester = { ...member, userId: 'A1', roleIds: [], isAdmin: true };
const commands = { change: '`/imagine-settings`', clear: '`clear:`' };

describe('describeMemberDefaults: the server’s defaults as they apply to the member who looks', () => {
  it('shows the default quality each member gets: high for one high-quality lists, auto for another', async () => {
    const policy = new ScopePolicy({ store: settingsInState(), partialImages: 2 });
    const members = new MemberDefaultsBook({ store: memberDefaultsInState(), policy });
    await policy.set(admin, 'defaultQuality', 'high');
    await policy.set(admin, 'highQualityFor', ['role:R1']);
    const scopeLine = async (viewer: Requester) => describeMemberDefaults(await members.view(viewer), await policy.effective(viewer), viewer, commands, 'en').split('\n')[2];
    expect(await scopeLine(member)).toBe('This server (when you choose nothing): size 1024x1024, quality high, 2 previews; up to 10 images a job; private results allowed.');
    const other = { ...member, userId: 'U2', roleIds: [] };
    expect(await scopeLine(other)).toBe('This server (when you choose nothing): size 1024x1024, quality auto, 2 previews; up to 10 images a job; private results allowed.');
    // What the view says is what a job of theirs with no quality gets.
    const job = (requester: Requester) => policy.admit({ kind: 'generate', prompt: 'a boat', options: {}, requester });
    expect([(await job(member)).spec.options.quality, (await job(other)).spec.options.quality]).toEqual(['high', undefined]);
  });

  it('says in a DM that the bot operator’s values apply, not a server’s (no server’s admin settings apply there), in every language', async () => {
    const policy = new ScopePolicy({ store: settingsInState(), partialImages: 2 });
    const members = new MemberDefaultsBook({ store: memberDefaultsInState(), policy });
    const inDm: Requester = { platform: 'discord', userId: 'U1', channelId: 'D1', scopeId: dmScopeId('U1') };
    const view = async (locale: string) => describeMemberDefaults(await members.view(inDm), await policy.effective(inDm), inDm, commands, locale).split('\n');
    const [, none, scope] = await view('en');
    expect(none).toBe('You have set none: the bot operator’s defaults apply.');
    expect(scope).toBe('Outside servers (when you choose nothing; no server’s settings apply here, the bot operator’s do): size 1024x1024, quality auto, 2 previews; up to 10 images a job; private results allowed.');
    for (const locale of ['de', 'fr', 'es', 'pt-BR', 'ja']) {
      const [, otherNone, otherScope] = await view(locale);
      const [, serverNone, serverScope] = describeMemberDefaults([], await policy.effective(member), member, commands, locale).split('\n');
      const title = (line: string | undefined) => line!.split(/[(（]/)[0];
      expect(otherNone).not.toBe(serverNone);
      expect(title(otherScope)).not.toBe(title(serverScope));
    }
  });

  it('says of a default kept but unreadable that it refuses their jobs until set again or cleared, and the refusal names the command on each surface', async () => {
    const policy = new ScopePolicy({ store: settingsInState(), partialImages: 2 });
    const space = memorySpace<Record<string, unknown>>();
    const members = new MemberDefaultsBook({ store: memberDefaultsInState(space as never), policy });
    await space.update('discord-U1', () => ({ size: '1536x1024', private: 'true' }));
    const lines = describeMemberDefaults(await members.view(member), await policy.effective(member), member, commands, 'en').split('\n');
    expect(lines.slice(1, 3)).toEqual(['• size: 1536x1024', '• private: cannot be read (damaged in the bot’s storage): set it again or clear it; until then your jobs are refused']);
    expect(describeFailure(refusalOfUnreadableDefaults('discord', ['private']), 'en').message).toBe(
      'Your own default private cannot be read (damaged in the bot’s storage), so no images are made for you until you set it again or clear it: /imagine-settings with a value, or /imagine-settings clear: all.',
    );
    expect(describeFailure(refusalOfUnreadableDefaults('slack', ['size', 'private']), 'en', '/paint').message).toBe(
      'Your own defaults size, private cannot be read (damaged in the bot’s storage), so no images are made for you until you set each again or clear them: /paint settings --NAME VALUE, or /paint settings clear.',
    );
  });
});

describe('the defaults of a member a server’s or workspace’s rules do not allow', () => {
  it('names them, and whose rules, as the note on the job says it', () => {
    expect(say('en', 'member.ignored', { count: 2, defaults: listOf(['size 1536x1024', 'quality high']), scope: 'server' })).toBe(
      'Not used here, as this server’s rules do not allow them: your default size 1536x1024, quality high.',
    );
    expect(say('en', 'member.ignored', { count: 1, defaults: listOf(['count 3']), scope: 'workspace' })).toBe('Not used here, as this workspace’s rules do not allow it: your default count 3.');
  });
});
