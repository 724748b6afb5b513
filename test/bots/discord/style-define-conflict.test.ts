import { afterEach, describe, expect, it } from 'vitest';
import { PermissionFlagsBits } from 'discord.js';
import { keyOf } from '../../helpers/message-keys.js';
import { answerOf, DiscordHarness, EPHEMERAL } from './harness.js';

const MANAGE_SERVER = String(PermissionFlagsBits.ManageGuild);

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** An admin runs `/imagine-admin style` with these options; answers its reply. */
async function defineStyle(harness: DiscordHarness, options: Record<string, string | number>) {
  return answerOf(harness, harness.discord.slashCommand('imagine-admin style', options, { permissions: MANAGE_SERVER }));
}

describe('a house style whose own options do not go together, defined on Discord', () => {
  it('is refused privately, naming both options as Discord shows them, and nothing is saved', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const answer = await defineStyle(h, { name: 'cutout', text: '{prompt}, cut out', background: 'transparent', format: 'jpeg' });
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(answer.content).toMatch(/^✋ /u);
    expect(keyOf(answer.content.replace(/^\S+ /u, ''))).toBe('styles.option_conflict');
    expect(answer.content).toMatch(/\bformat\b/u);
    expect(answer.content).toMatch(/\bbackground\b/u);
    expect(await h.runner.styles.list({ platform: 'discord', scopeId: h.discord.guildId })).toEqual([]);
  });

  it('keeps the style it would have replaced as it was', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    expect((await defineStyle(h, { name: 'cutout', text: '{prompt}, cut out', background: 'transparent' })).content).toMatch(/^✅/u);
    const answer = await defineStyle(h, { name: 'cutout', text: '{prompt}, cut out', background: 'transparent', format: 'jpeg' });
    expect(keyOf(answer.content.replace(/^\S+ /u, ''))).toBe('styles.option_conflict');
    const [kept] = await h.runner.styles.list({ platform: 'discord', scopeId: h.discord.guildId });
    expect(kept?.options).toEqual({ background: 'transparent' });
  });
});
