import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JobRecord } from '../../../bots/discord/JobRecordStore.js';
import type { FakeInteraction } from '../../fakes/discord/FakeDiscord.js';
import { buttonsOf, DiscordHarness, EPHEMERAL } from './harness.js';

/** The kept images of finished jobs (their Edit buttons' copies) in the data folder. */
function keptOutputs(dataDir: string): string[] {
  return readdirSync(dataDir, { recursive: true, encoding: 'utf8' }).filter((file) => /-out-\d+(\.\w+)?$/.test(file));
}

/**
 * Holds the first request of the interaction's reply sent once the job's images are saved (just before its result is
 * sent: the result itself), so that it never lands while the process that sent it runs.
 */
function holdTheResult(h: DiscordHarness, ix: FakeInteraction): { readonly held: number; release(): void } {
  let taken = false;
  return h.discord.holdRequests((method, path) => {
    if (taken || method === 'GET' || !path.includes(`/webhooks/${h.discord.applicationId}/${ix.token}`) || keptOutputs(h.dataDir).length === 0) return false;
    taken = true;
    return true;
  });
}

describe('the sweep of jobs the last process left', () => {
  let h: DiscordHarness;
  let release: (() => void) | undefined;
  afterEach(async () => {
    release?.();
    release = undefined;
    await h?.close();
  });

  /** A bot whose `/imagine` job has its result on its way to Discord, held there: the process may now stop before it lands. */
  async function resultOnItsWay(options: Record<string, string | boolean>): Promise<FakeInteraction> {
    h = await DiscordHarness.start({ partialImages: 0 });
    const ix = h.discord.slashCommand('imagine', options);
    const held = holdTheResult(h, ix);
    release = () => held.release();
    await h.discord.waitFor(() => held.held > 0, 'the job’s result on its way to Discord');
    return ix;
  }

  it('shows a job’s result, its images and buttons, when the process stopped after the images were made but before the result reached Discord — no Retry that would charge again', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image in flight' });
    // The process stops at once, as one whose grace ran out or that crashed: its job's result never lands.
    await h.restart({ crash: true });

    const shown = await h.finalReply(ix);
    expect(shown.attachments).toHaveLength(1);
    expect(buttonsOf(shown).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    expect(shown.content).not.toMatch(/restarted/);
    // One image was charged: the one shown.
    expect(h.emulator.requests.filter((r) => r.path.includes('/images/'))).toHaveLength(1);
  });

  it('keeps a job whose result the sweep showed in the member’s history, with what it cost', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image for the history' });
    await h.restart({ crash: true });

    await h.finalReply(ix);
    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    await vi.waitFor(async () => expect(await h.runner.history!.mine(requester)).toHaveLength(1), { timeout: 10_000 });
    const [entry] = await h.runner.history!.mine(requester);
    expect(entry).toMatchObject({ prompt: 'a paid image for the history', status: 'completed', kind: 'generate', n: 1 });
    expect(entry!.costUsd).toBeGreaterThan(0);
    expect(entry!.size).toBeTruthy();
    expect(entry!.private).toBeUndefined();
  });

  it('says the images were made and are no longer kept, with no Retry, when they are gone by the time of the sweep', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image whose copy is gone' });
    // Gone as a kept image too old for the images space is.
    for (const file of keptOutputs(h.dataDir)) await rm(join(h.dataDir, file));
    await h.restart({ crash: true });

    const shown = await h.discord.waitFor(() => {
      const m = h.discord.original(ix);
      return m?.content.includes('no longer kept') ? m : undefined;
    }, 'the sweep');
    expect(shown.content.split('\n')[1]).toBe(
      '🔌 This job finished just as the bot restarted, but its result could not be shown then, and its images are no longer kept. They were made and charged; start a new job with /imagine or /edit if you still need them.',
    );
    expect(buttonsOf(shown)).toEqual([]);
  });

  it('says the images were made, with no Retry, when the facts of the result were saved but none of its images could be kept', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image none of whose copies was kept' });
    // As a record whose every image write failed while its update (the facts of its result) went through.
    const records = h.state.store.space<JobRecord>(h.state.spaces.discordJobs);
    for await (const { key, value } of records.entries()) {
      expect(value.result).toBeDefined();
      await records.update(key, (record) => record && { ...record, outputs: [] });
    }
    for (const file of keptOutputs(h.dataDir)) await rm(join(h.dataDir, file));
    await h.restart({ crash: true });

    const shown = await h.discord.waitFor(() => {
      const m = h.discord.original(ix);
      return m?.content.includes('restarted') ? m : undefined;
    }, 'the sweep');
    expect(shown.content).toMatch(/no longer kept/);
    expect(buttonsOf(shown)).toEqual([]);
    expect(h.emulator.requests.filter((r) => r.path.includes('/images/'))).toHaveLength(1);
  });

  it('says nothing of a job with a kept result that is older than its images can be kept (most likely shown, its record never marked ended), and marks it ended', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image shown long ago' });
    const records = h.state.store.space<JobRecord>(h.state.spaces.discordJobs);
    const twoDaysAgo = Date.now() - 2 * 24 * 3_600_000;
    let jobKey = '';
    for await (const { key } of records.entries()) {
      jobKey = key;
      await records.update(key, (record) => record && { ...record, reply: record.reply && { ...record.reply, issuedAt: twoDaysAgo } });
    }
    const before = h.discord.original(ix)!.content;
    const messages = h.discord.messages.size;
    await h.restart({ crash: true });

    const after = h.state.store.space<JobRecord>(h.state.spaces.discordJobs);
    await vi.waitFor(async () => expect((await after.get(jobKey))?.status).toBe('completed'), { timeout: 10_000 });
    expect(h.discord.original(ix)!.content).toBe(before);
    expect(h.discord.messages.size).toBe(messages);
  });

  it('shows a private job’s result in its ephemeral reply (a PATCH through its token), with nothing in the channel or the member’s DMs, while the token lives', async () => {
    const ix = await resultOnItsWay({ prompt: 'a private paid image in flight', private: true });
    const restartedAt = Date.now();
    await h.restart({ crash: true });

    const shown = await h.finalReply(ix);
    expect(shown.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(shown.attachments).toHaveLength(1);
    expect(h.discord.requests.filter((r) => r.at >= restartedAt && r.method === 'PATCH' && r.token === ix.token && r.status < 300)).toHaveLength(1);
    expect(h.discord.channelMessages().filter((m) => (m.flags & EPHEMERAL) === 0)).toEqual([]);
    expect(h.discord.channelMessages(h.discord.dmChannelOf(ix.user.id))).toEqual([]);
  });

  it('posts the result as one channel message mentioning the member once the interaction’s token has expired', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image past its token' });
    // Its reply issued 20 minutes ago: the token (15 minutes) can no longer edit it.
    const records = h.state.store.space<JobRecord>(h.state.spaces.discordJobs);
    for await (const { key } of records.entries()) {
      await records.update(key, (record) => record && { ...record, reply: record.reply && { ...record.reply, issuedAt: Date.now() - 20 * 60_000 } });
    }
    const before = new Set(h.discord.channelMessages().map((m) => m.id));
    await h.restart({ crash: true });

    const posted = await h.discord.waitFor(() => h.discord.channelMessages().find((m) => !before.has(m.id) && m.attachments.length === 1), 'the result in the channel');
    expect(posted.content.startsWith(`<@${ix.user.id}>`)).toBe(true);
    expect(buttonsOf(posted).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    // The sweep is done once the record is marked: one message, no more.
    const after = h.state.store.space<JobRecord>(h.state.spaces.discordJobs);
    await vi.waitFor(async () => {
      for await (const { value } of after.entries()) expect(value.status).toBe('completed');
    });
    expect(h.discord.channelMessages().filter((m) => !before.has(m.id))).toEqual([posted]);
  });
});
