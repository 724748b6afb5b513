import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeCustomId } from '../../../bots/discord/custom-ids.js';
import { makeImage } from '../../helpers/images.js';
import { buttonId, DiscordHarness, drawingReply } from './harness.js';

describe('the job store under refused jobs', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('keeps no record or image of refused /edits, so 25 of them cannot push out another member’s job', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 }, limits: { userConcurrentJobs: 1 }, });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a job someone is waiting for' });
    const running = await drawingReply(h, ix);

    const mallory = h.discord.newUser('mallory');
    const png = await makeImage('png', 16, 16);
    const first = h.discord.slashCommand('edit', { prompt: 'hold my slot', image1: h.discord.hostFile({ filename: 'a.png', bytes: png }) }, { user: mallory });
    const editing = await drawingReply(h, first, 'the first edit to start');
    const refused = [];
    for (let i = 0; i < 25; i++) {
      refused.push(h.discord.slashCommand('edit', { prompt: `refused ${i}`, image1: h.discord.hostFile({ filename: `r${i}.png`, bytes: png }) }, { user: mallory }));
    }
    for (const r of refused) await h.discord.waitFor(() => (h.discord.original(r)?.content.includes('already have') ? true : undefined), 'the refusal');
    // The records of the two running jobs are written beside their first updates (the edit's input first): both on disk.
    const records = h.state.store.space(h.state.spaces.discordJobs);
    for (const shown of [running, editing]) {
      const key = decodeCustomId(buttonId(shown, 'Cancel'))!.key;
      await vi.waitFor(async () => expect(await records.get(key)).toBeDefined(), { timeout: 15_000, interval: 20 });
    }
    // Two jobs run (each a record), one of them an edit (its one input kept): nothing of the refused ones.
    // (A record being written shows beside it as its temporary file for a moment: not a record.)
    const recordsIn = async (folder: string) => (await readdir(join(h.dataDir, 'discord', folder))).filter((name) => !name.endsWith('.tmp'));
    expect(await recordsIn('jobs')).toHaveLength(2);
    expect(await recordsIn('kept-images')).toHaveLength(1);

    const click = h.discord.clickButton(running, buttonId(running, 'Cancel'));
    const cancelled = await h.finalReply(ix);
    expect(click.ack?.type).toBe(6);
    expect(cancelled.content).toContain('Cancelled by');
  }, 30_000);
});
