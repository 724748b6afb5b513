import { afterEach, describe, expect, it } from 'vitest';
import { makeImage } from '../../helpers/images.js';
import { snowflake } from '../../fakes/discord/snowflake.js';
import { buttonId, DiscordHarness } from './harness.js';

describe('buttons and modals act only on jobs of the server they are pressed in', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('refuses a Reroll whose custom_id carries another server’s job, sending nothing and charging nobody', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const image1 = h.discord.hostFile({ filename: 'private.png', bytes: await makeImage('png', 20, 20) });
    const result = await h.finalReply(h.discord.slashCommand('edit', { prompt: 'a private edit', image1 }));
    const elsewhere = snowflake();
    const intruder = h.discord.newUser('intruder');

    for (const label of ['Reroll', 'Edit']) {
      const click = h.discord.clickButton(result, buttonId(result, label), { guildId: elsewhere, user: intruder });
      const note = await h.discord.waitFor(() => h.discord.original(click), 'the note');
      expect(note.flags & 64).toBe(64);
      expect(note.content).toContain('too old');
      expect(click.modal).toBeUndefined();
    }
    expect(h.emulator.requests.filter((r) => r.route === 'edits')).toHaveLength(1);
    expect(await h.quotaStore.spentToday(`discord:${elsewhere}`, Date.now())).toBe(0);
  });

  it('lets only the member who opened “Edit image” submit its draft', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const source = h.discord.postUserMessage({ content: 'mine', files: [{ filename: 'a.png', bytes: await makeImage('png', 20, 20) }] });
    const menu = h.discord.messageCommand('Edit image', source);
    await h.discord.waitFor(() => menu.modal, 'the modal');

    const stolen = h.discord.submitModal(menu, { prompt: 'not yours' }, { user: h.discord.newUser('mallory') });
    const note = await h.discord.waitFor(() => h.discord.original(stolen), 'the note');
    expect(note.flags & 64).toBe(64);
    expect(h.emulator.requests).toHaveLength(0);

    const own = h.discord.submitModal(menu, { prompt: 'mine to edit' });
    await h.finalReply(own);
    expect(h.emulator.requests.filter((r) => r.route === 'edits')).toHaveLength(1);
  });
});
