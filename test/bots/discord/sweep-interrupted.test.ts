import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { COMMAND_NAMES } from '../../../bots/discord/command-words.js';
import { JobRecordStore, type JobRecord } from '../../../bots/discord/JobRecordStore.js';
import { JobRunner, say } from '../../../bots/runner/index.js';
import { MAX_KEPT_IMAGE_BYTES } from '../../../bots/state/index.js';
import type { FakeInteraction, FakeMessage } from '../../fakes/discord/FakeDiscord.js';
import { buttonId, buttonsOf, cancelShown, DiscordHarness, drawingReply, EPHEMERAL, privateNoteOf, secondImageAsJpeg } from './harness.js';
import { chooseAuditChannel, closeStoppedProcesses, jobRecords } from './sweep-scene.js';
import { jobPrompted, jobStoreOf, runnerOf, spyOnInstance } from '../../helpers/instance-spy.js';

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

/** Waits for an entry of the audit channel mentioning `text` (an embed's text). */
function auditEntry(h: DiscordHarness, channelId: string, text: string): Promise<string> {
  const texts = (m: FakeMessage) => m.embeds.map((e) => String(e.description));
  return h.discord.waitFor(() => h.discord.channelMessages(channelId).flatMap(texts).find((t) => t.includes(text)), `an audit entry with “${text}”`);
}

/** Waits for the sweep to have recorded a job's end (its history and audit entries) and marked its record so. */
function sweptEndRecorded(h: DiscordHarness): Promise<unknown> {
  return h.discord.waitFor(() => h.logger.entries.find((e) => e.msg === 'recorded the end of a job the last stop left unrecorded'), 'the sweep recording the job’s end');
}

/** The link a history or audit entry gives to a message. */
const linkTo = (h: DiscordHarness, message: FakeMessage) => `https://discord.com/channels/${h.discord.guildId}/${message.channelId}/${message.id}`;

describe('the sweep of jobs the last process left', () => {
  let h: DiscordHarness;
  const hung = closeStoppedProcesses(() => h);

  /** A bot whose `/imagine` job has its result on its way to Discord, held there: the process may now stop before it lands. */
  async function resultOnItsWay(options: Record<string, string | number | boolean>, before?: () => Promise<void>): Promise<FakeInteraction> {
    h = await DiscordHarness.start({ partialImages: 0 });
    await before?.();
    const ix = h.discord.slashCommand('imagine', options);
    const held = holdTheResult(h, ix);
    hung.letGo = () => held.release();
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

  it('shows a swept result once when its Cancel is pressed while the sweep is showing it: the member who pressed is told privately that its end is being shown', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image shown by one path' });
    const running = { ...h.discord.original(ix)!, components: structuredClone(h.discord.original(ix)!.components) };
    // The sweep's result, through the job's reply token, is held on its way to Discord.
    const sweeping = h.discord.holdRequests((method, path) => method === 'PATCH' && path.includes(`/webhooks/${h.discord.applicationId}/${ix.token}`));
    await h.restart({ crash: true });
    await h.discord.waitFor(() => sweeping.held > 0, 'the sweep showing the result');

    const click = h.discord.clickButton(running, buttonId(running, 'Cancel'));
    const note = await privateNoteOf(h, click);
    expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.being_shown')}`);
    sweeping.release();
    const shown = await h.finalReply(ix);
    expect(shown.attachments).toHaveLength(1);
    await sweptEndRecorded(h);
    // One upload of the paid result, the sweep's; one history entry.
    expect(h.discord.requests.filter((r) => r.files.length > 0)).toHaveLength(1);
    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    expect(await h.runner.history!.mine(requester)).toHaveLength(1);
  });

  it('keeps a job whose result the sweep showed in the member’s history, with what it cost', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image for the history' });
    await h.restart({ crash: true });

    await h.finalReply(ix);
    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    await sweptEndRecorded(h);
    expect(await h.runner.history!.mine(requester)).toHaveLength(1);
    const [entry] = await h.runner.history!.mine(requester);
    expect(entry).toMatchObject({ prompt: 'a paid image for the history', status: 'completed', kind: 'generate', n: 1 });
    expect(entry!.costUsd).toBeGreaterThan(0);
    expect(entry!.size).toBeTruthy();
    expect(entry!.private).toBeUndefined();
  });

  it('records a swept result whose message reached neither its reply nor the channel, and leaves it to the next start, which shows it and gives its history entry the link (one entry, its first time, one audit post)', async () => {
    let audit = '';
    const ix = await resultOnItsWay({ prompt: 'a paid image no message could show' }, async () => {
      audit = await chooseAuditChannel(h);
    });
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', jobPrompted('a paid image no message could show'));
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    h.discord.failNext({ route: 'channel-message', method: 'POST' }, { status: 403, code: 50013, message: 'Missing Permissions' });
    await h.restart({ crash: true });
    await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg === 'recorded the end of a job the last stop left unshown; its result is left to the next to show it'), 'the sweep recording the unshown end');
    const records = jobRecords(h);
    const kept: { key: string; value: JobRecord }[] = [];
    for await (const entry of records.entries()) kept.push(entry);
    expect(kept).toHaveLength(1);
    expect(kept[0]!.value).toMatchObject({ status: 'running', endRecorded: true, final: { type: 'completed' } });
    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    const [first] = await h.runner.history!.mine(requester);
    expect(first).toMatchObject({ prompt: 'a paid image no message could show', status: 'completed' });
    expect(first!.link).toBeUndefined();
    await auditEntry(h, audit, 'a paid image no message could show');

    await h.restart({ crash: true });
    const shown = await h.finalReply(ix);
    expect(shown.attachments).toHaveLength(1);
    expect(buttonsOf(shown).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    await vi.waitFor(async () => expect(await jobRecords(h).get(kept[0]!.key)).toMatchObject({ status: 'completed' }), { timeout: 15_000 });
    await vi.waitFor(async () => expect((await h.runner.history!.mine(requester))[0]?.link).toBe(linkTo(h, shown)), { timeout: 15_000 });
    expect(await h.runner.history!.mine(requester)).toMatchObject([{ prompt: 'a paid image no message could show', status: 'completed', at: first!.at }]);
    expect(recordEnded).toHaveBeenCalledTimes(2);
    // The audit channel entered the job's end once (what waits is posted by the runner's stop).
    await h.runner.shutdown({ graceMs: 0 });
    const texts = h.discord.channelMessages(audit).flatMap((m) => m.embeds.map((e) => String(e.description)));
    expect(texts.filter((t) => t.includes('a paid image no message could show'))).toHaveLength(1);
  });

  it('records the end of a swept job once, by the sweep, when the process stopped before its runner recorded it', async () => {
    let audit = '';
    const ix = await resultOnItsWay({ prompt: 'a paid image recorded by the sweep' }, async () => {
      audit = await chooseAuditChannel(h);
    });
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', jobPrompted('a paid image recorded by the sweep'));
    await h.restart({ crash: true });

    await h.finalReply(ix);
    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    await sweptEndRecorded(h);
    expect(await h.runner.history!.mine(requester)).toHaveLength(1);
    await auditEntry(h, audit, 'a paid image recorded by the sweep');
    expect(recordEnded).toHaveBeenCalledTimes(1);
  });

  it('records a swept job’s end even when its ended mark fails, as the live path does: the next sweep does not record it again — one history entry, one audit post', async () => {
    let audit = '';
    const ix = await resultOnItsWay({ prompt: 'a paid image whose sweep could not mark it' }, async () => {
      audit = await chooseAuditChannel(h);
    });
    // Every write of a record fails in the next process's sweep, as storage that is down would.
    const update = spyOnInstance(JobRecordStore.prototype, 'update', jobStoreOf(h)).mockRejectedValue(new Error('storage unavailable'));
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', jobPrompted('a paid image whose sweep could not mark it'));
    await h.restart({ crash: true });

    await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg === 'could not mark a swept job ended'), 'the sweep’s failed mark');
    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    await sweptEndRecorded(h);
    expect(await h.runner.history!.mine(requester)).toHaveLength(1);
    expect(recordEnded).toHaveBeenCalledTimes(1);
    await auditEntry(h, audit, 'a paid image whose sweep could not mark it');
    update.mockRestore();
    await h.restart({ crash: true });

    const records = jobRecords(h);
    await vi.waitFor(async () => {
      for await (const { value } of records.entries()) expect(value).toMatchObject({ status: 'completed', endRecorded: true });
    }, { timeout: 15_000 });
    expect(recordEnded).toHaveBeenCalledTimes(1);
    expect(await h.runner.history!.mine(requester)).toHaveLength(1);
    // A second entry would have been posted a moment after it: the runner's stop posts what waits.
    await h.runner.shutdown({ graceMs: 0 });
    const texts = (m: FakeMessage) => m.embeds.map((e) => String(e.description));
    expect(h.discord.channelMessages(audit).flatMap(texts).filter((t) => t.includes('a paid image whose sweep could not mark it'))).toHaveLength(1);
  });

  it('leaves a job whose end a crash cut off while the sweep recorded it to the next sweep, which records it: nothing is marked before its end is recorded', async () => {
    let audit = '';
    const ix = await resultOnItsWay({ prompt: 'a paid image whose sweep died recording it' }, async () => {
      audit = await chooseAuditChannel(h);
    });
    // The next process dies while its sweep records the job's end: that record never resolves.
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', runnerOf(h)).mockImplementationOnce(() => new Promise<void>(() => {}));
    await h.restart({ crash: true });
    await h.discord.waitFor(() => recordEnded.mock.calls.length > 0 || undefined, 'the sweep recording the job’s end');
    const records = jobRecords(h);
    for await (const { value } of records.entries()) expect(value.endRecorded).toBeUndefined();
    await h.restart({ crash: true });

    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    await sweptEndRecorded(h);
    expect(await h.runner.history!.mine(requester)).toHaveLength(1);
    await auditEntry(h, audit, 'a paid image whose sweep died recording it');
    expect(recordEnded).toHaveBeenCalledTimes(2);
  });

  it('shows a swept result once across a crash after showing it: marked ended with its end at once, the next sweep records that end with the link to the reply and shows nothing', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image shown before a crash' });
    // The next process dies once its sweep showed the result, while it records the job's end: that record never resolves.
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', runnerOf(h)).mockImplementationOnce(() => new Promise<void>(() => {}));
    await h.restart({ crash: true });
    await h.finalReply(ix);
    await h.discord.waitFor(() => recordEnded.mock.calls.length > 0 || undefined, 'the sweep recording the job’s end');
    const shown = h.discord.requests.filter((r) => r.token === ix.token && r.method !== 'GET').length;
    const sent = h.discord.channelMessages(ix.channelId).length;
    await h.restart({ crash: true });

    await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg === 'recorded the end of a job the last stop left unrecorded'), 'the next sweep');
    expect(h.discord.requests.filter((r) => r.token === ix.token && r.method !== 'GET').length).toBe(shown);
    expect(h.discord.channelMessages(ix.channelId)).toHaveLength(sent);
    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    const [entry] = await h.runner.history!.mine(requester);
    expect(entry).toMatchObject({ prompt: 'a paid image shown before a crash', status: 'completed' });
    expect(entry!.link).toMatch(/^https:\/\/discord\.com\/channels\//);
    const records = jobRecords(h);
    await vi.waitFor(async () => {
      for await (const { value } of records.entries()) expect(value).toMatchObject({ status: 'completed', endRecorded: true });
    }, { timeout: 15_000 });
  });

  it('marks a swept result ended with its end as soon as it is shown, then its end recorded (its reply kept until then)', async () => {
    await resultOnItsWay({ prompt: 'a paid image marked once' });
    const update = spyOnInstance(JobRecordStore.prototype, 'update', jobStoreOf(h));
    await h.restart({ crash: true });

    await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg === 'showed the result of a job the last stop left unshown'), 'the sweep');
    const records = jobRecords(h);
    await vi.waitFor(async () => {
      for await (const { value } of records.entries()) expect(value).toMatchObject({ status: 'completed', endRecorded: true });
    }, { timeout: 15_000 });
    expect(update.mock.calls.map(([, patch]) => patch)).toEqual([{ end: expect.objectContaining({ type: 'completed' }), status: 'completed' }]);
    for await (const { value } of records.entries()) expect(value.reply).toBeUndefined();
  });

  it('marks a swept result ended with only the facts of its end the runner records (its total cost, not the price of each image)', async () => {
    await resultOnItsWay({ prompt: 'a paid image whose end is kept small', size: '1024x1024', quality: 'low' });
    const update = spyOnInstance(JobRecordStore.prototype, 'update', jobStoreOf(h));
    await h.restart({ crash: true });

    await sweptEndRecorded(h);
    const [[, patch]] = update.mock.calls as [[string, { end?: unknown }]];
    expect(patch.end).toStrictEqual({ type: 'completed', size: '1024x1024', quality: 'low', cost: { totalUsd: expect.any(Number) } });
  });

  it('marks ended, saying nothing and not recording it again, a result its view showed whose mark failed while its runner recorded it: one history entry, one audit post', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const audit = await chooseAuditChannel(h);
    // The view's mark of its shown result fails through the store's tries, as a storage hiccup would: the runner records
    // the job's end, and the record is left running with its result for the next process's sweep.
    spyOnInstance(JobRecordStore.prototype, 'update', jobStoreOf(h))
      .mockRejectedValueOnce(new Error('storage unavailable'))
      .mockRejectedValueOnce(new Error('storage unavailable'))
      .mockRejectedValueOnce(new Error('storage unavailable'));
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', jobPrompted('a paid image recorded live'));
    const ix = h.discord.slashCommand('imagine', { prompt: 'a paid image recorded live' });
    await h.finalReply(ix);
    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    // Recorded by the live runner: its record of the end settles.
    await h.discord.waitFor(() => recordEnded.mock.results[0]?.value as Promise<void> | undefined, 'the runner recording the job’s end');
    expect(await h.runner.history!.mine(requester)).toHaveLength(1);
    await auditEntry(h, audit, 'a paid image recorded live');
    const records = jobRecords(h);
    await vi.waitFor(async () => {
      const values: JobRecord[] = [];
      for await (const { value } of records.entries()) values.push(value);
      expect(values).toMatchObject([{ status: 'running', endRecorded: true }]);
    }, { timeout: 15_000 });
    const writes = () => h.discord.requests.filter((r) => r.token === ix.token && r.method !== 'GET').length;
    const written = writes();
    // Killed before its end, owed, is written again (a stop would write it: nothing left to sweep).
    await h.restart({ crash: true });

    await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg?.startsWith('marked ended, saying nothing')), 'the sweep');
    // Its result reached Discord: shown again, after the token it would be a channel post out of the blue.
    expect(writes()).toBe(written);
    expect(recordEnded).toHaveBeenCalledTimes(1);
    const after = jobRecords(h);
    await vi.waitFor(async () => {
      for await (const { value } of after.entries()) expect(value.status).toBe('completed');
    }, { timeout: 15_000 });
    expect(await h.runner.history!.mine(requester)).toHaveLength(1);
    const texts = (m: FakeMessage) => m.embeds.map((e) => String(e.description));
    expect(h.discord.channelMessages(audit).flatMap(texts).filter((t) => t.includes('a paid image recorded live'))).toHaveLength(1);
  });

  it('keeps the swept result in the history with the link to the message it was shown in, as a job that ended normally is', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image linked from the history' });
    await h.restart({ crash: true });

    const shown = await h.finalReply(ix);
    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    await sweptEndRecorded(h);
    expect(await h.runner.history!.mine(requester)).toHaveLength(1);
    const [entry] = await h.runner.history!.mine(requester);
    expect(entry!.link).toBe(linkTo(h, shown));
  });

  it('links a DM job’s result swept after a crash in its history through @me, as the live path does, and a user install’s through the server it was asked in', async () => {
    h = await DiscordHarness.start({ partialImages: 0, bot: { userInstalls: true }, dmCaps: { dailyUsd: 5 } });
    const ada = h.discord.newUser('ada');
    const inDm = h.discord.slashCommand('imagine', { prompt: 'a paid dm image cut off by a crash', quality: 'low' }, { user: ada, place: 'dm' });
    const installed = h.discord.slashCommand('imagine', { prompt: 'a paid user-install image cut off by a crash', quality: 'low' }, { user: ada, place: 'user-install' });
    const held = [holdTheResult(h, inDm), holdTheResult(h, installed)];
    hung.letGo = () => held.forEach((hold) => hold.release());
    await h.discord.waitFor(() => held.every((hold) => hold.held > 0), 'both jobs’ results on their way to Discord');
    await h.restart({ crash: true });

    const [dmShown, installShown] = [await h.finalReply(inDm), await h.finalReply(installed)];
    const requester = { platform: 'discord' as const, userId: ada.id, channelId: '', scopeId: h.discord.guildId };
    await vi.waitFor(async () => expect(await h.runner.history!.mine(requester)).toHaveLength(2), { timeout: 15_000 });
    await h.runner.history!.settled();
    const links = Object.fromEntries((await h.runner.history!.mine(requester)).map((e) => [e.prompt, e.link]));
    expect(links).toEqual({
      'a paid dm image cut off by a crash': `https://discord.com/channels/@me/${dmShown.channelId}/${dmShown.id}`,
      'a paid user-install image cut off by a crash': `https://discord.com/channels/${h.discord.foreignGuildId}/${installShown.channelId}/${installShown.id}`,
    });
  });

  it('posts the swept result to the audit channel as the entry of a job that ended normally: who, where, options, cost and the link to its message', async () => {
    let audit = '';
    const ix = await resultOnItsWay({ prompt: 'a paid image for the audit', quality: 'low' }, async () => {
      audit = await chooseAuditChannel(h);
    });
    await h.restart({ crash: true });

    const shown = await h.finalReply(ix);
    const entry = await auditEntry(h, audit, 'a paid image for the audit');
    // A job the live process ran and showed, for the same entry side by side.
    const live = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a live image for the audit', quality: 'low' }, { user: ix.user }));
    const liveEntry = await auditEntry(h, audit, 'a live image for the audit');
    const as = (text: string, prompt: string, message: FakeMessage) => text.replace(prompt, '<prompt>').replace(linkTo(h, message), '<link>');
    expect(entry).toContain(linkTo(h, shown));
    expect(entry).toMatch(/\$0\.0\d+/);
    expect(as(entry, 'a paid image for the audit', shown)).toBe(as(liveEntry, 'a live image for the audit', live));
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

  it('keeps a job whose images are no longer kept in the history as completed, with what it cost, and marks its record ended — trying the mark again when the write fails', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image gone from the history' });
    for (const file of keptOutputs(h.dataDir)) await rm(join(h.dataDir, file));
    const records = jobRecords(h);
    let jobKey = '';
    for await (const { key } of records.entries()) jobKey = key;
    // The next process's first write of a record fails once, as a storage hiccup would.
    spyOnInstance(JobRecordStore.prototype, 'update', jobStoreOf(h)).mockRejectedValueOnce(new Error('storage unavailable'));
    await h.restart({ crash: true });

    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    await sweptEndRecorded(h);
    expect(await h.runner.history!.mine(requester)).toHaveLength(1);
    const [entry] = await h.runner.history!.mine(requester);
    expect(entry).toMatchObject({ prompt: 'a paid image gone from the history', status: 'completed' });
    expect(entry!.costUsd).toBeGreaterThan(0);
    const after = jobRecords(h);
    expect((await after.get(jobKey))?.status).toBe('completed');
    expect(JobRecordStore.prototype.update).toHaveBeenCalledTimes(2);
  });

  it('shows the images still kept when some are gone, saying how many are no longer kept', async () => {
    const ix = await resultOnItsWay({ prompt: 'two paid images, one gone', quality: 'low', count: 2 });
    await h.discord.waitFor(() => keptOutputs(h.dataDir).length === 2 || undefined, 'both images kept');
    await rm(join(h.dataDir, keptOutputs(h.dataDir).sort()[1]!));
    await h.restart({ crash: true });

    const shown = await h.finalReply(ix);
    expect(shown.attachments).toHaveLength(1);
    expect(shown.content.split('\n')).toContain(`ℹ️ ${say('en', 'discord.job.some_no_longer_kept', { missing: 1, made: 2 })}`);
    expect(say('en', 'discord.job.some_no_longer_kept', { missing: 1, made: 2 })).toBe(
      'This job finished just as the bot restarted, and one of its 2 images is no longer kept: made and charged, but not shown here.',
    );
    expect(buttonsOf(shown).map((b) => b.label)).toContain('Reroll');
    expect(h.emulator.requests.filter((r) => r.path.includes('/images/'))).toHaveLength(1);
  });

  it('gives each image still kept the Edit of that image when one in the middle is gone: the second shown opens the third made', async () => {
    const ix = await resultOnItsWay({ prompt: 'three paid images, the middle one gone', quality: 'low', count: 3 });
    await h.discord.waitFor(() => keptOutputs(h.dataDir).length === 3 || undefined, 'the three images kept');
    await rm(join(h.dataDir, keptOutputs(h.dataDir).sort()[1]!));
    await h.restart({ crash: true });

    const shown = await h.finalReply(ix);
    expect(shown.attachments).toHaveLength(2);
    expect(buttonsOf(shown).map((b) => b.label)).toEqual(['Reroll', 'Edit 1', 'Edit 3', 'Delete']);
    const click = h.discord.clickButton(shown, buttonId(shown, 'Edit 3'));
    await h.discord.waitFor(() => click.modal, 'the edit modal');
    expect(click.modal!.title).toBe('Edit image 3');
    await h.finalReply(h.discord.submitModal(click, { prompt: 'add a storm' }));

    const edit = h.emulator.requests.filter((r) => r.route === 'edits').at(-1)!;
    expect(edit.images).toHaveLength(1);
    expect(Buffer.from(edit.images[0]!.bytes!).equals(h.discord.fileBytes(shown.attachments[1]!))).toBe(true);
    expect(Buffer.from(edit.images[0]!.bytes!).equals(h.discord.fileBytes(shown.attachments[0]!))).toBe(false);
  });

  it('numbers and counts a swept result’s images as the job made them when one could not be kept: Edit 1 and Edit 3, one of 3 not kept', async () => {
    // The second of the three images is too large to keep for its buttons (the others are kept).
    const saveOutputs = JobRecordStore.prototype.saveOutputs;
    const ix = await resultOnItsWay({ prompt: 'three paid images, the middle one too large', quality: 'low', count: 3 }, async () => {
      spyOnInstance(JobRecordStore.prototype, 'saveOutputs', jobStoreOf(h)).mockImplementation(function (this: JobRecordStore, key, images, ...rest) {
        return saveOutputs.call(this, key, images.map((image, i) => (i === 1 ? Buffer.alloc(MAX_KEPT_IMAGE_BYTES + 1) : image)), ...rest);
      });
    });
    // The sweep reads each kept image from the record it holds, not the record again for each.
    const readOutput = spyOnInstance(JobRecordStore.prototype, 'readOutput', jobStoreOf(h));
    await h.restart({ crash: true });

    const shown = await h.finalReply(ix);
    expect(shown.attachments).toHaveLength(2);
    expect(buttonsOf(shown).map((b) => b.label)).toEqual(['Reroll', 'Edit 1', 'Edit 3', 'Delete']);
    expect(shown.content.split('\n')).toContain(`ℹ️ ${say('en', 'discord.job.some_no_longer_kept', { missing: 1, made: 3 })}`);
    expect(readOutput).not.toHaveBeenCalled();
    const click = h.discord.clickButton(shown, buttonId(shown, 'Edit 3'));
    await h.discord.waitFor(() => click.modal, 'the edit modal');
    await h.finalReply(h.discord.submitModal(click, { prompt: 'add a storm' }));
    const edit = h.emulator.requests.filter((r) => r.route === 'edits').at(-1)!;
    expect(Buffer.from(edit.images[0]!.bytes!).equals(h.discord.fileBytes(shown.attachments[1]!))).toBe(true);
  });

  it('says the images were made, with no Retry, when the facts of the result were saved but none of its images could be kept', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image none of whose copies was kept' });
    // As a record whose every image write failed while its update (the facts of its result) went through.
    const records = jobRecords(h);
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

  it('names and types each image of a swept result by its own format when its answer mixed them', async () => {
    const ix = await resultOnItsWay({ prompt: 'a png and a jpeg in flight', count: 2, quality: 'low', size: '1024x1024' }, async () => secondImageAsJpeg(h));
    await h.restart({ crash: true });

    const shown = await h.finalReply(ix);
    expect(shown.attachments.map((a) => [a.filename.replace(/^pictor-.*-(?=\d+\.\w+$)/, ''), a.contentType])).toEqual([
      ['1.png', 'image/png'],
      ['2.jpg', 'image/jpeg'],
    ]);
  });

  it('shows the kept images, with their buttons, of a record an older version kept without its result’s facts — never “no longer kept” for images it just read', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image kept by an older version' });
    const records = jobRecords(h);
    for await (const { key } of records.entries()) {
      await records.update(key, (record) => {
        if (!record) return record;
        const { result: _result, made: _made, ...older } = record;
        return { ...older, outputs: record.outputs.map(({ index: _index, ...kept }) => kept) };
      });
    }
    await h.restart({ crash: true });

    const shown = await h.discord.waitFor(() => {
      const m = h.discord.original(ix);
      return m?.content.includes(say('en', 'discord.job.result_kept_unshown')) ? m : undefined;
    }, 'the sweep');
    expect(shown.content).not.toMatch(/no longer kept/);
    expect(shown.attachments).toHaveLength(1);
    expect(buttonsOf(shown).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    const after = jobRecords(h);
    await vi.waitFor(async () => {
      for await (const { value } of after.entries()) expect(value).toMatchObject({ status: 'completed', endRecorded: true });
    }, { timeout: 15_000 });
  });

  /** A bot whose `/imagine` job is drawing (a slow service), its message "Drawing…" with Cancel, and its record. */
  async function drawing(prompt: string) {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt });
    const running = await drawingReply(h, ix);
    const records = () => jobRecords(h);
    return { ix, running, records, key: buttonId(running, 'Cancel').split(':')[2]! };
  }

  it('leaves a job its storage fails to show as it was, said once in the log, at the sweep and at a Cancel alike (the member told to press again); pressed again, it shows the job stopped', async () => {
    const { running, records, key } = await drawing('a job its storage fails to show');
    const showAlone = spyOnInstance(JobRecordStore.prototype, 'showAlone', jobStoreOf(h)).mockRejectedValueOnce(new Error('storage unavailable')).mockRejectedValueOnce(new Error('storage unavailable'));
    const left = () => h.logger.entries.filter((e) => e.msg === 'could not show a job its process left; its record is left as it was');
    await h.restart({ crash: true });
    await vi.waitFor(() => expect(left()).toHaveLength(1), { timeout: 15_000 });
    expect(await records().get(key)).toMatchObject({ status: 'running' });
    expect(h.discord.messages.get(running.id)!.content).toContain('Drawing');

    const click = h.discord.clickButton(running, buttonId(running, 'Cancel'));
    const note = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === click.id && (m.flags & EPHEMERAL) === EPHEMERAL), 'the private answer');
    expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.not_updated')}`);
    expect(left().map((e) => (e.obj as { clicked?: boolean }).clicked)).toEqual([false, true]);

    showAlone.mockRestore();
    const { shown } = await cancelShown(h, running);
    expect(shown.content).toContain(say('en-US', 'discord.job.interrupted'));
  });

  it('tells the member a job that made nothing stopped, with Retry, when the bot was down longer than its kept images: never left “Drawing…” with its Cancel', async () => {
    const { running, records, key } = await drawing('a job the bot was down a day for');
    const twoDaysAgo = Date.now() - 2 * 24 * 3_600_000;
    await records().update(key, (record) => record && { ...record, createdAt: twoDaysAgo, reply: record.reply && { ...record.reply, issuedAt: twoDaysAgo } });
    await h.restart({ crash: true });

    // Its token long expired: a channel message mentioning the member.
    const note = await h.discord.waitFor(() => h.discord.channelMessages().find((m) => m.id !== running.id && m.content.includes('restarted')), 'the channel message');
    expect(note.content.startsWith(`<@${h.discord.user.id}> `)).toBe(true);
    expect(buttonsOf(note).map((b) => b.label)).toEqual(['Retry']);
    await vi.waitFor(async () => expect(await records().get(key)).toMatchObject({ status: 'failed' }), { timeout: 15_000 });
  });

  it('shows “stopped” in the message clicked on a Cancel of a job older than its kept images whose sweep’s post failed (sweptAt): not left “Drawing…” for good', async () => {
    const { running, records, key } = await drawing('a job no channel took the stop of');
    const twoDaysAgo = Date.now() - 2 * 24 * 3_600_000;
    await records().update(key, (record) => record && { ...record, createdAt: twoDaysAgo, reply: record.reply && { ...record.reply, issuedAt: twoDaysAgo }, sweptAt: twoDaysAgo + 60_000 });
    // The start's sweep finds nothing to claim yet: the record is left running, held by the gone process, for the Cancel.
    spyOnInstance(JobRecordStore.prototype, 'claimInterrupted', jobStoreOf(h)).mockResolvedValueOnce([]);
    await h.restart({ crash: true });

    const { click, shown: stopped } = await cancelShown(h, running);
    expect(click.ack?.type).toBe(6);
    expect(stopped.content.split('\n')[1]).toBe(say('en', 'discord.job.interrupted'));
    expect(buttonsOf(stopped).map((b) => b.label)).toEqual(['Retry']);
    await vi.waitFor(async () => expect(await records().get(key)).toMatchObject({ status: 'failed' }), { timeout: 15_000 });
  });

  describe('a Cancel of a job older than its kept images whose end was kept (its message never reached Discord): that end in the message clicked, not left “Drawing…”', () => {
    async function clickedOld(final: JobRecord['final']): Promise<{ shown: FakeMessage; status: () => Promise<string | undefined> }> {
      const { running, records, key } = await drawing('a job whose end the bot kept a day ago');
      const twoDaysAgo = Date.now() - 2 * 24 * 3_600_000;
      await records().update(key, (record) => record && { ...record, createdAt: twoDaysAgo, reply: record.reply && { ...record.reply, issuedAt: twoDaysAgo }, endRecorded: true, final });
      // The start's sweep finds nothing to claim yet: the record is left running, held by the gone process, for the Cancel.
      spyOnInstance(JobRecordStore.prototype, 'claimInterrupted', jobStoreOf(h)).mockResolvedValueOnce([]);
      await h.restart({ crash: true });

      const { click, shown } = await cancelShown(h, running);
      expect(click.ack?.type).toBe(6);
      return { shown, status: async () => (await records().get(key))?.status };
    }

    it('a result made and charged: says its images are no longer kept, with no Retry that would charge again', async () => {
      const { shown, status } = await clickedOld({ type: 'completed' });
      expect(shown.content.split('\n')[1]).toBe(say('en', 'discord.job.result_gone', COMMAND_NAMES));
      expect(buttonsOf(shown)).toEqual([]);
      await vi.waitFor(async () => expect(await status()).toBe('completed'), { timeout: 15_000 });
    });

    it('a cancellation by a stop: says so, with Retry', async () => {
      const { shown, status } = await clickedOld({ type: 'cancelled', byUserId: '', reason: 'shutdown' });
      expect(shown.content.split('\n')[1]).toBe(say('en', 'discord.job.restarted_before_done'));
      expect(buttonsOf(shown).map((b) => b.label)).toEqual(['Retry']);
      await vi.waitFor(async () => expect(await status()).toBe('cancelled'), { timeout: 15_000 });
    });
  });

  it('says a job stopped without offering Retry when its member erased its prompt (forget) while it ran: a Retry could only refuse', async () => {
    const { ix, running } = await drawing('a job forgotten as the bot stopped');
    await h.runner.history!.forgetEverywhere({ platform: 'discord', userId: ix.user.id, channelId: '', scopeId: h.discord.guildId });
    await h.restart({ crash: true });

    const stopped = await h.discord.waitFor(() => {
      const m = h.discord.messages.get(running.id);
      return m && !m.content.includes('Drawing') ? m : undefined;
    }, 'the sweep');
    expect(stopped.content).toContain(say('en', 'discord.job.interrupted_no_retry', COMMAND_NAMES));
    expect(buttonsOf(stopped)).toEqual([]);
  });

  it('does not post “stopped” again at a later start when the sweep’s post reached Discord and its mark failed (the try saved first: sweptAt)', async () => {
    const { records, key } = await drawing('a job whose stop was said once');
    const twoDaysAgo = Date.now() - 2 * 24 * 3_600_000;
    await records().update(key, (record) => record && { ...record, createdAt: twoDaysAgo, reply: record.reply && { ...record.reply, issuedAt: twoDaysAgo } });
    spyOnInstance(JobRecordStore.prototype, 'markEnded', jobStoreOf(h)).mockRejectedValueOnce(new Error('storage unavailable'));
    const notes = () => h.discord.channelMessages().filter((m) => m.content.includes('restarted'));
    await h.restart({ crash: true });
    await h.discord.waitFor(() => notes()[0], 'the channel message');
    await vi.waitFor(async () => expect((await records().get(key))?.sweptAt).toBeDefined(), { timeout: 15_000 });

    await h.restart({ crash: true });
    await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg?.startsWith('marked ended, saying nothing')), 'the sweep marking the job ended');
    expect(notes()).toHaveLength(1);
    expect(await records().get(key)).toMatchObject({ status: 'failed' });
  });

  it('keeps on a job’s record when a sweep tried to say it stopped and no post reached Discord (sweptAt), the record left running', async () => {
    const { ix, records, key } = await drawing('a job whose stop no post reached');
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    h.discord.failNext({ route: 'channel-message', method: 'POST' }, { status: 403, code: 50013, message: 'Missing Permissions' });
    const before = Date.now();
    await h.restart({ crash: true });

    await vi.waitFor(async () => expect((await records().get(key))?.sweptAt).toBeGreaterThanOrEqual(before), { timeout: 15_000 });
    expect(await records().get(key)).toMatchObject({ status: 'running' });
  });

  it('says nothing of a job with a kept result that is older than its images can be kept (most likely shown, its record never marked ended), marks it ended, and records its end (made and charged)', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image shown long ago' });
    const records = jobRecords(h);
    const twoDaysAgo = Date.now() - 2 * 24 * 3_600_000;
    let jobKey = '';
    for await (const { key } of records.entries()) {
      jobKey = key;
      await records.update(key, (record) => record && { ...record, reply: record.reply && { ...record.reply, issuedAt: twoDaysAgo } });
    }
    const before = h.discord.original(ix)!.content;
    const messages = h.discord.messages.size;
    await h.restart({ crash: true });

    const after = jobRecords(h);
    await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg?.startsWith('marked ended, saying nothing')), 'the sweep marking the job ended');
    expect((await after.get(jobKey))?.status).toBe('completed');
    expect(h.discord.original(ix)!.content).toBe(before);
    expect(h.discord.messages.size).toBe(messages);
    await sweptEndRecorded(h);
    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    expect(await h.runner.history!.mine(requester)).toMatchObject([{ prompt: 'a paid image shown long ago', status: 'completed' }]);
    expect(await after.get(jobKey)).toMatchObject({ status: 'completed', endRecorded: true });
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
    const records = jobRecords(h);
    for await (const { key } of records.entries()) {
      await records.update(key, (record) => record && { ...record, reply: record.reply && { ...record.reply, issuedAt: Date.now() - 20 * 60_000 } });
    }
    const before = new Set(h.discord.channelMessages().map((m) => m.id));
    await h.restart({ crash: true });

    const posted = await h.discord.waitFor(() => h.discord.channelMessages().find((m) => !before.has(m.id) && m.attachments.length === 1), 'the result in the channel');
    expect(posted.content.startsWith(`<@${ix.user.id}>`)).toBe(true);
    expect(buttonsOf(posted).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    // The sweep is done once the record is marked: one message, no more.
    const after = jobRecords(h);
    await vi.waitFor(async () => {
      for await (const { value } of after.entries()) expect(value.status).toBe('completed');
    }, { timeout: 15_000 });
    expect(h.discord.channelMessages().filter((m) => !before.has(m.id))).toEqual([posted]);
  });

  it('does not ask Discord for the link of a swept result’s reply once its token has expired (a GET that always fails, counted as invalid): its history entry has none', async () => {
    const ix = await resultOnItsWay({ prompt: 'a paid image with no link to ask' });
    const records = jobRecords(h);
    for await (const { key } of records.entries()) {
      await records.update(key, (record) => record && { ...record, reply: record.reply && { ...record.reply, issuedAt: Date.now() - 20 * 60_000 } });
    }
    const asked = h.discord.requests.length;
    await h.restart({ crash: true });

    const requester = { platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId };
    await sweptEndRecorded(h);
    expect(await h.runner.history!.mine(requester)).toHaveLength(1);
    const [entry] = await h.runner.history!.mine(requester);
    expect(entry!.link).toBeUndefined();
    expect(h.discord.requests.slice(asked).filter((r) => r.method === 'GET' && r.token === ix.token)).toEqual([]);
  });
});
