import { PermissionFlagsBits } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { PRICE_TABLE } from '../../../src/index.js';
import { usd, say } from '../../../bots/runner/index.js';
import { answerOf, buttonId, DiscordHarness, EPHEMERAL, publicMessagesOf } from './harness.js';

const MANAGE_SERVER = String(PermissionFlagsBits.ManageGuild);

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** An admin of the server runs `/imagine-admin <sub>`; answers its private reply. */
async function asAdmin(harness: DiscordHarness, sub: string, options: Record<string, string | number>) {
  const answer = await answerOf(harness, harness.discord.slashCommand(`imagine-admin ${sub}`, options, { permissions: MANAGE_SERVER }));
  expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
  return answer;
}

describe('house styles on Discord', () => {
  it('an admin defines a style; a member finds it by autocomplete, and the job sends, shows, costs and rerolls the prompt as sent', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const defined = await asAdmin(h, 'style', { name: 'neon', text: 'neon-lit {prompt}, synthwave palette', quality: 'low', count: 2 });
    expect(defined.content).toBe('✅ House style neon defined: “neon-lit {prompt}, synthwave palette” (quality low, n 2). Members pick it with `/imagine style:`.');
    await asAdmin(h, 'style', { name: 'woodcut', text: 'a woodcut print' });

    const typing = h.discord.autocomplete('imagine', { prompt: 'a cat' }, { name: 'style', value: 'ne' });
    const choices = await h.discord.waitFor(() => typing.choices, 'the style choices');
    expect(choices).toEqual([{ name: 'neon: neon-lit {prompt}, synthwave palette', value: 'neon' }]);
    const all = h.discord.autocomplete('imagine', { prompt: 'a cat' }, { name: 'style', value: '' });
    expect((await h.discord.waitFor(() => all.choices, 'every style')).map((c) => c.value)).toEqual(['neon', 'woodcut']);

    const job = h.discord.slashCommand('imagine', { prompt: 'a cat', style: 'neon' });
    const result = await h.finalReply(job);
    const sent = h.emulator.requests[0]!.parsed as Record<string, unknown>;
    expect(sent).toMatchObject({ prompt: 'neon-lit a cat, synthwave palette', quality: 'low', n: 2 });
    expect(result.content).toContain('neon-lit a cat, synthwave palette');
    // The cost shown is that of the two images sent, not of the member's one default image.
    expect(result.content).toContain(say('en', 'discord.job.cost', { basis: 'table', usd: usd(2 * PRICE_TABLE['1024x1024'].low) }));
    expect(result.attachments).toHaveLength(2);

    // Reroll sends the job as it was sent (the style is not applied twice).
    const reroll = h.discord.clickButton(result, buttonId(result, 'Reroll'));
    await h.finalReply(reroll);
    expect(h.emulator.requests[1]!.parsed).toMatchObject({ prompt: 'neon-lit a cat, synthwave palette', quality: 'low', n: 2 });
  });

  it('catches a blocked word inside the style privately, naming the style, and sends nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0, controls: { blockedWords: ['gore'] } });
    await asAdmin(h, 'style', { name: 'horror', text: '{prompt}, dripping with gore' });

    const job = h.discord.slashCommand('imagine', { prompt: 'a cat', style: 'horror' });
    const answer = await answerOf(h, job);
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(answer.content).toContain(say('en', 'refusal.style_blocked_word', { style: 'horror', word: 'gore' }));
    expect(publicMessagesOf(h, job)).toHaveLength(0);
    expect(h.emulator.requests).toHaveLength(0);
    expect(await h.quotaStore.spentToday(`discord:${h.discord.user.id}`, Date.now())).toBe(0);
  });

  it('refuses a style the server does not have privately, names the ones it has; members cannot define styles', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    await asAdmin(h, 'style', { name: 'neon', text: 'neon {prompt}' });

    const job = h.discord.slashCommand('imagine', { prompt: 'a cat', style: 'noir' });
    const answer = await answerOf(h, job);
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(answer.content).toContain(say('en', 'refusal.style_unknown', { style: 'noir', count: 1, styles: 'neon' }));
    expect(h.emulator.requests).toHaveLength(0);

    const member = await answerOf(h, h.discord.slashCommand('imagine-admin style', { name: 'mine', text: '{prompt}' }));
    expect(member.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(member.content).toBe(`✋ ${say('en', 'styles.not_admin', { scope: 'server' })}`);
    expect((await h.runner.styles.list({ platform: 'discord', scopeId: h.discord.guildId })).map((s) => s.name)).toEqual(['neon']);
  });

  it('lists the styles for admins, in their language, and removes one with text clear', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    await asAdmin(h, 'style', { name: 'neon', text: 'neon {prompt}', size: '1024x1536' });
    const listed = await answerOf(h, h.discord.slashCommand('imagine-admin styles', {}, { permissions: MANAGE_SERVER, locale: 'de' }));
    expect(listed.content).toBe(['**Hausstile** (1 von höchstens 25); Mitglieder wählen einen mit `/bild style:`:', '• neon: „neon {prompt}“ (size 1024x1536)'].join('\n'));

    const removed = await asAdmin(h, 'style', { name: 'neon', text: 'clear' });
    expect(removed.content).toBe(`✅ ${say('en', 'styles.removed', { name: 'neon' })}`);
    const typing = h.discord.autocomplete('edit', { prompt: 'x' }, { name: 'style', value: '' });
    expect(await h.discord.waitFor(() => typing.choices, 'no choices')).toEqual([]);
  });

  it('offers the styles over the interactions endpoint too (HTTP), as the answer to Discord’s POST', async () => {
    h = await DiscordHarness.start({ partialImages: 0, http: true });
    await asAdmin(h, 'style', { name: 'neon', text: 'neon {prompt}' });
    const typing = h.discord.autocomplete('imagine', { prompt: 'a cat' }, { name: 'style', value: 'n' });
    expect(await h.discord.waitFor(() => typing.choices, 'the choices')).toEqual([{ name: 'neon: neon {prompt}', value: 'neon' }]);
    expect(typing.httpStatus).toBe(200);
  });
});
