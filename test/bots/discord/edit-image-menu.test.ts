import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeCustomId } from '../../../bots/discord/custom-ids.js';
import { makeImage } from '../../helpers/images.js';
import { DiscordHarness } from './harness.js';

describe('the “Edit image” menu', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    await h?.close();
  });

  const draftsOnDisk = async () => {
    let drafts = 0;
    for await (const { value } of h.state.store.space<{ status: string }>(h.state.spaces.discordJobs).entries()) if (value.status === 'draft') drafts++;
    return drafts;
  };

  it('downloads nothing when opened, keeps three drafts per member, and downloads each image once when the modal is sent', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const png = await makeImage('png', 12, 12);
    const source = h.discord.postUserMessage({ content: 'ten images', files: Array.from({ length: 10 }, (_, i) => ({ filename: `p${i}.png`, bytes: png })) });
    const drafts = h.state.store.space<{ status: string }>(h.state.spaces.discordJobs);
    let menu;
    for (let i = 0; i < 30; i++) {
      menu = h.discord.messageCommand('Edit image', source);
      const modal = await h.discord.waitFor(() => menu!.modal, 'the modal');
      // The draft is kept once its modal is shown: each is there before the next menu opens (older ones then go).
      const key = decodeCustomId(modal.custom_id)!.key;
      await vi.waitFor(async () => expect(await drafts.get(key)).toMatchObject({ status: 'draft' }), { timeout: 15_000 });
    }
    const cdn = () => h.discord.requests.filter((r) => r.route === 'cdn').length;
    expect(cdn()).toBe(0);
    await vi.waitFor(async () => expect(await draftsOnDisk()).toBe(3), { timeout: 15_000 });

    const submit = h.discord.submitModal(menu!, { prompt: 'all of them at once' });
    await h.finalReply(submit);
    expect(cdn()).toBe(10);
    expect(h.emulator.requests.filter((r) => r.route === 'edits')[0]!.images).toHaveLength(10);
    expect(await draftsOnDisk()).toBe(2);
  }, 30_000);

  it('tells a member whose daily budget is spent at once, without a modal or a download', async () => {
    h = await DiscordHarness.start({ partialImages: 0, limits: { userDailyUsd: 0 } });
    const source = h.discord.postUserMessage({ content: 'one image', files: [{ filename: 'a.png', bytes: await makeImage('png', 12, 12) }] });
    const menu = h.discord.messageCommand('Edit image', source);
    const note = await h.discord.waitFor(() => h.discord.original(menu), 'the note');
    expect(note.flags & 64).toBe(64);
    expect(note.content).toContain('daily budget');
    expect(menu.modal).toBeUndefined();
    expect(h.discord.requests.filter((r) => r.route === 'cdn')).toHaveLength(0);
  });
});
