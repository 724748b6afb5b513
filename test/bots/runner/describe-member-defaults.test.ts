import { describe, expect, it } from 'vitest';
import { describeMemberDefaults, dmScopeId, memberDefaultsInState, MemberDefaultsBook, ScopePolicy, settingsInState, type Requester } from '../../../bots/runner/index.js';

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
});
