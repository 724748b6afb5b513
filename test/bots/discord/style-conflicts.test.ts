import { afterEach, describe, expect, it } from 'vitest';
import { PermissionFlagsBits } from 'discord.js';
import { keyOf } from '../../helpers/message-keys.js';
import { answerOf, DiscordHarness, EPHEMERAL, publicMessagesOf } from './harness.js';

const MANAGE_SERVER = String(PermissionFlagsBits.ManageGuild);

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a house style’s option that does not go with the member’s on Discord', () => {
  it('is refused privately naming the style, and nothing is sent or charged', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const defined = await answerOf(h, h.discord.slashCommand('imagine-admin style', { name: 'tr', text: '{prompt}, cut out', background: 'transparent' }, { permissions: MANAGE_SERVER }));
    expect(defined.content).toMatch(/^✅/);

    const job = h.discord.slashCommand('imagine', { prompt: 'a cat', style: 'tr', format: 'jpeg' });
    const answer = await answerOf(h, job);
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(keyOf(answer.content.replace(/^\S+ /u, ''))).toBe('refusal.style_option_conflict');
    expect(publicMessagesOf(h, job)).toHaveLength(0);
    expect(h.emulator.requests).toHaveLength(0);
    expect(await h.quotaStore.spentToday(`discord:${h.discord.user.id}`, Date.now())).toBe(0);
  });
});
