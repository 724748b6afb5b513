import { describe, expect, it, vi } from 'vitest';
import { COMMAND_NAMES } from '../../../bots/discord/command-words.js';
import { JobRecordStore, type JobRecord } from '../../../bots/discord/JobRecordStore.js';
import { JobRunner, say, usd, userKeyOf, words } from '../../../bots/runner/index.js';
import { FORGET_CLOCK_MARGIN_MS, type JobEnd } from '../../../bots/runner/job-history.js';
import { stateKeyOf } from '../../../bots/state/index.js';
import type { FakeInteraction, FakeMessage } from '../../fakes/discord/FakeDiscord.js';
import { snowflake } from '../../fakes/discord/snowflake.js';
import { buttonsOf, cancelShown, DiscordHarness, drawingReply } from './harness.js';
import { chooseAuditChannel, closeStoppedProcesses, jobRecords, records } from './sweep-scene.js';
import { jobPrompted, jobStoreOf, runnerOf, spyOnInstance } from '../../helpers/instance-spy.js';

/** The audit channel's entries mentioning `text`, once the runner posted what waits (its stop posts it). */
async function auditPosts(h: DiscordHarness, channelId: string, text: string): Promise<number> {
  await h.runner.shutdown({ graceMs: 0 });
  const texts = (m: FakeMessage) => m.embeds.map((e) => String(e.description));
  return h.discord.channelMessages(channelId).flatMap(texts).filter((t) => t.includes(text)).length;
}

/** What was sent to Discord through the interaction's token (its reply and follow-ups), reads aside. */
function writesThrough(h: DiscordHarness, ix: FakeInteraction): number {
  return h.discord.requests.filter((r) => r.token === ix.token && r.method !== 'GET').length;
}

describe('the end of a live job, recorded once whatever stops where', () => {
  let h: DiscordHarness;
  const hung = closeStoppedProcesses(() => h);

  const requesterOf = (ix: FakeInteraction) => ({ platform: 'discord' as const, userId: ix.user.id, channelId: '', scopeId: h.discord.guildId });

  it('records, at the next start, the end of a job whose process stopped after its view marked it completed and before its runner recorded it — once, showing nothing again', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const audit = await chooseAuditChannel(h);
    // The process dies while its runner records the job's end: that record never resolves.
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', runnerOf(h)).mockImplementationOnce(() => new Promise<void>((resolve) => (hung.letGo = resolve)));
    const ix = h.discord.slashCommand('imagine', { prompt: 'a paid image whose end a stop cut off' });
    await h.finalReply(ix);
    await h.discord.waitFor(() => recordEnded.mock.calls.length > 0 || undefined, 'the runner recording the job’s end');
    expect(await records(h)).toMatchObject([{ status: 'completed' }]);
    expect((await records(h))[0]?.endRecorded).toBeUndefined();
    const written = writesThrough(h, ix);
    await h.restart({ crash: true });

    await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg === 'recorded the end of a job the last stop left unrecorded'), 'the sweep');
    expect(recordEnded).toHaveBeenCalledTimes(2);
    const history = await h.runner.history!.mine(requesterOf(ix));
    expect(history).toMatchObject([{ prompt: 'a paid image whose end a stop cut off', status: 'completed' }]);
    expect(history[0]!.costUsd).toBeGreaterThan(0);
    // Its reply, kept while its end is to be recorded, gives the recorded end its link.
    expect(history[0]!.link).toMatch(/^https:\/\/discord\.com\/channels\//);
    await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ status: 'completed', endRecorded: true }]), { timeout: 15_000 });
    expect(writesThrough(h, ix)).toBe(written);
    expect(await auditPosts(h, audit, 'a paid image whose end a stop cut off')).toBe(1);
  });

  it('records, at the next start, what a job cancelled after it was sent cost when its process stopped before its runner recorded it — in its history entry and its audit post', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const audit = await chooseAuditChannel(h);
    // The service takes the request and holds it: sent (its estimate may be billed), nothing back until it is aborted.
    h.emulator.injectFault('stalled_stream');
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', runnerOf(h)).mockImplementationOnce(() => new Promise<void>((resolve) => (hung.letGo = resolve)));
    const ix = h.discord.slashCommand('imagine', { prompt: 'a paid image cancelled, its end cut off by a stop' });
    const running = await drawingReply(h, ix);
    // "Drawing…" is shown as the job starts, which may come before its request leaves: Cancel once the service has it.
    await h.discord.waitFor(() => h.emulator.requests.length > 0 || undefined, 'the request to reach the service');
    await cancelShown(h, running);
    await h.discord.waitFor(() => recordEnded.mock.calls.length > 0 || undefined, 'the runner recording the job’s end');
    const charged = (recordEnded.mock.calls[0]![2] as JobEnd).cost?.totalUsd;
    expect(charged).toBeGreaterThan(0);
    await h.restart({ crash: true });

    await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg === 'recorded the end of a job the last stop left unrecorded'), 'the sweep');
    expect(await h.runner.history!.mine(requesterOf(ix))).toMatchObject([{ status: 'cancelled', costUsd: charged }]);
    expect(await auditPosts(h, audit, say('en', 'audit.cost', { cost: usd(charged!) }))).toBe(1);
  });

  it('shows at the next start a failure that came with a paid image as that failure, with its image, when its process stopped after saving the image and before marking it — recorded once, failed', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', jobPrompted('a pair of kites, one lost as the bot died'));
    // Two asked, one came (charged); the process dies as its view marks the failure ended, its image saved.
    h.emulator.injectFault('short_result');
    spyOnInstance(JobRecordStore.prototype, 'markEnded', jobStoreOf(h)).mockImplementationOnce(() => new Promise<void>((resolve) => (hung.letGo = resolve)));
    const ix = h.discord.slashCommand('imagine', { prompt: 'a pair of kites, one lost as the bot died', quality: 'low', size: '1024x1024', count: 2 });
    const withDelete = (m: FakeMessage) => buttonsOf(m).some((b) => b.label === 'Delete');
    const failed = { ...(await h.finalReply(ix, withDelete)) };
    expect(failed.content).toContain('💵');
    await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ status: 'running', outputs: [{ index: 0 }] }]), { timeout: 15_000 });
    await h.restart({ crash: true });

    // The failure again, with its kept image and its buttons: never "done" with a Reroll, and no "interrupted".
    await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ status: 'failed', endRecorded: true }]), { timeout: 15_000 });
    const shown = h.discord.original(ix)!;
    expect(shown.content).toBe(failed.content);
    expect(buttonsOf(shown).map((b) => b.label)).toEqual(buttonsOf(failed).map((b) => b.label));
    expect(shown.attachments).toHaveLength(1);
    // Recorded once by the next process (its sweep). The spy sees this job's ends from every runner, the crashed
    // process's too, which goes on inside this test process (a real crash would have ended it, and its state is closed:
    // it writes nothing). Only the next process's calls are what is checked.
    expect(recordEnded.mock.contexts.filter((runner) => runner === h.runner)).toHaveLength(1);
    expect(await h.runner.history!.mine(requesterOf(ix))).toMatchObject([{ status: 'failed' }]);
    expect((await h.runner.history!.mine(requesterOf(ix)))[0]!.costUsd).toBeGreaterThan(0);
  });

  it('marks ended at the next start, saying nothing, a failure a job’s view showed but could not mark ended while its runner recorded it — its end not recorded twice', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', runnerOf(h));
    // The view's mark fails (storage down for a moment, every try): its record stays running.
    const marked = spyOnInstance(JobRecordStore.prototype, 'markEnded', jobStoreOf(h)).mockRejectedValueOnce(new Error('storage unavailable'));
    const ix = h.discord.slashCommand('imagine', { prompt: 'something forbidden' });
    const failure = (await h.finalReply(ix, (m) => m.content.includes('🚫'))).content;
    await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ status: 'running', endRecorded: true, final: { type: 'failed', shown: true } }]), { timeout: 15_000 });
    expect(marked).toHaveBeenCalledTimes(1);
    const written = writesThrough(h, ix);
    await h.restart();

    // The sweep marks it ended: released, nothing left of its end to keep nor to record again; its message is left as shown.
    await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ status: 'failed', endRecorded: true }]), { timeout: 15_000 });
    expect(writesThrough(h, ix)).toBe(written);
    expect(h.discord.original(ix)?.content).toBe(failure);
    expect((await records(h))[0]).not.toHaveProperty('final');
    expect(recordEnded).toHaveBeenCalledTimes(1);
    expect(await h.runner.history!.mine(requesterOf(ix))).toMatchObject([{ status: 'failed' }]);
  });

  it('marks ended at the next start, saying nothing, a result its view showed whose images could not be saved nor its record marked — not “no longer kept” over it', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', runnerOf(h));
    spyOnInstance(JobRecordStore.prototype, 'saveOutputs', jobStoreOf(h)).mockRejectedValueOnce(new Error('storage unavailable'));
    spyOnInstance(JobRecordStore.prototype, 'markEnded', jobStoreOf(h)).mockRejectedValueOnce(new Error('storage unavailable'));
    const ix = h.discord.slashCommand('imagine', { prompt: 'a paid image shown, its save and mark failed' });
    const shown = await h.finalReply(ix);
    await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ status: 'running', endRecorded: true, final: { type: 'completed', shown: true }, outputs: [] }]), { timeout: 15_000 });
    const written = writesThrough(h, ix);
    await h.restart();

    await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ status: 'completed', endRecorded: true }]), { timeout: 15_000 });
    expect(writesThrough(h, ix)).toBe(written);
    expect(h.discord.original(ix)?.content).toBe(shown.content);
    expect(h.discord.channelMessages(h.discord.channelId).filter((m) => m.content.includes(ix.user.id))).toEqual([]);
    expect(recordEnded).toHaveBeenCalledTimes(1);
  });

  it('marks ended at the next start, saying nothing, a result whose first message reached Discord while an image following it and its mark failed — its message not shown again', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a paid image shown, an upload after it and its mark failed' });
    await drawingReply(h, ix);
    // The result lands without its image (too large together); the image alone is refused through the token, and a
    // refusal that leaves the token usable sends it nowhere else.
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 413, code: 40005, message: 'Request entity too large' });
    h.discord.failNext({ route: 'webhook-followup', token: ix.token }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    spyOnInstance(JobRecordStore.prototype, 'markEnded', jobStoreOf(h)).mockRejectedValueOnce(new Error('storage unavailable'));
    const shown = await h.finalReply(ix);
    await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ status: 'running', endRecorded: true }]), { timeout: 15_000 });
    const written = writesThrough(h, ix);
    const posted = h.discord.channelMessages(h.discord.channelId).length;
    await h.restart();

    await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ status: 'completed', endRecorded: true }]), { timeout: 15_000 });
    expect(writesThrough(h, ix)).toBe(written);
    expect(h.discord.channelMessages(h.discord.channelId)).toHaveLength(posted);
    expect(h.discord.original(ix)?.content).toBe(shown.content);
  });

  it('leaves a live job whose history entry could not be written unmarked, and the next start records it', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    // The history's one write of the job fails, as storage that is down for a moment would.
    const history = h.state.store.space(h.state.spaces.history);
    const failed = vi.spyOn(history, 'update').mockRejectedValueOnce(new Error('storage unavailable'));
    const ix = h.discord.slashCommand('imagine', { prompt: 'a paid image whose history write failed' });
    await h.finalReply(ix);
    await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg === 'could not record the end of a job'), 'the failed record');
    expect(failed).toHaveBeenCalled();
    expect(await h.runner.history!.mine(requesterOf(ix))).toEqual([]);
    expect((await records(h))[0]?.endRecorded).toBeUndefined();
    const written = writesThrough(h, ix);
    await h.restart();

    await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg === 'recorded the end of a job the last stop left unrecorded'), 'the next start’s sweep');
    expect(await h.runner.history!.mine(requesterOf(ix))).toMatchObject([{ prompt: 'a paid image whose history write failed', status: 'completed' }]);
    await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ status: 'completed', endRecorded: true }]), { timeout: 15_000 });
    expect(writesThrough(h, ix)).toBe(written);
  });

  describe('an end its runner recorded whose message never reached Discord, left running (no token: the channel)', () => {
    const requester = () => ({ platform: 'discord' as const, userId: snowflake(), channelId: h.discord.channelId, scopeId: h.discord.guildId });
    const left = (key: string, final: JobRecord['final'], createdAt = Date.now()): JobRecord => ({
      key,
      kind: 'generate',
      prompt: `swept ${key}`,
      options: {},
      requester: requester(),
      createdAt,
      status: 'running',
      inputs: [],
      outputs: [],
      endRecorded: true,
      final,
    });
    const plant = async (...records: JobRecord[]) => {
      for (const record of records) await jobRecords(h).put(record.key, record, { hold: true });
    };
    const postFor = (record: JobRecord) => h.discord.channelMessages(h.discord.channelId).find((m) => m.content.includes(record.requester.userId));

    it('shows a cancellation by a stop as “restarted before done” and a retryable failure as that failure, each with Retry, its end not recorded again', async () => {
      h = await DiscordHarness.start({ partialImages: 0 });
      const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', runnerOf(h));
      const cancelled = left('cancelled-1', { type: 'cancelled', byUserId: '', reason: 'shutdown' });
      const failed = left('failed-2', { type: 'failed', code: 'rate_limited', words: words('failure.rate_limited', { known: 'no' }), retryable: true });
      await plant(cancelled, failed);
      await h.restart({ crash: true });

      const restarted = await h.discord.waitFor(() => postFor(cancelled), 'the cancellation’s message');
      expect(restarted.content).toContain(say('en', 'discord.job.restarted_before_done'));
      expect(buttonsOf(restarted).map((b) => b.custom_id)).toEqual(['pictor:retry:cancelled-1']);
      const failure = await h.discord.waitFor(() => postFor(failed), 'the failure’s message');
      expect(failure.content).toContain(say('en', 'failure.rate_limited', { known: 'no' }));
      expect(buttonsOf(failure).map((b) => b.custom_id)).toEqual(['pictor:retry:failed-2']);
      await vi.waitFor(async () => expect((await records(h)).map((r) => [r.key, r.status]).sort()).toEqual([['cancelled-1', 'cancelled'], ['failed-2', 'failed']]), { timeout: 15_000 });
      expect(recordEnded).not.toHaveBeenCalled();
    });

    it('offers no Retry with a cancellation or a retryable failure whose prompt its member’s forget erased: nothing is left to send again', async () => {
      h = await DiscordHarness.start({ partialImages: 0 });
      const cancelled = { ...left('cancelled-1', { type: 'cancelled', byUserId: '', reason: 'shutdown' }), prompt: '' };
      const failed = { ...left('failed-2', { type: 'failed', code: 'rate_limited', words: words('failure.rate_limited', { known: 'no' }), retryable: true }), prompt: '' };
      await plant(cancelled, failed);
      await h.restart({ crash: true });

      const restarted = await h.discord.waitFor(() => postFor(cancelled), 'the cancellation’s message');
      expect(restarted.content).toContain(say('en', 'discord.job.restarted_before_done'));
      expect(buttonsOf(restarted)).toEqual([]);
      const failure = await h.discord.waitFor(() => postFor(failed), 'the failure’s message');
      expect(failure.content).toContain(say('en', 'failure.rate_limited', { known: 'no' }));
      expect(buttonsOf(failure)).toEqual([]);
    });

    it('shows each before it marks it ended, as the other leftovers are: one whose post fails is left running for the next sweep, which shows it once, and the next record still is shown', async () => {
      h = await DiscordHarness.start({ partialImages: 0 });
      const first = left('failed-1', { type: 'failed', code: 'rate_limited', words: words('failure.rate_limited', { known: 'no' }), retryable: true }, Date.now() - 2);
      const second = left('cancelled-2', { type: 'cancelled', byUserId: '', reason: 'shutdown' }, Date.now() - 1);
      await plant(first, second);
      // The first record's channel post is refused; the second's goes through.
      h.discord.failNext({ route: 'channel-message', method: 'POST' }, { status: 403, code: 50013, message: 'Missing Permissions' });
      await h.restart({ crash: true });

      await h.discord.waitFor(() => postFor(second), 'the next record’s message');
      expect(postFor(first)).toBeUndefined();
      await vi.waitFor(async () => expect((await records(h)).find((r) => r.key === 'cancelled-2')?.status).toBe('cancelled'), { timeout: 15_000 });
      expect((await records(h)).find((r) => r.key === 'failed-1')).toMatchObject({ status: 'running', final: first.final });

      await h.restart({ crash: true });
      await h.discord.waitFor(() => postFor(first), 'the failure’s message at the next start');
      await vi.waitFor(async () => expect((await records(h)).find((r) => r.key === 'failed-1')?.status).toBe('failed'), { timeout: 15_000 });
      expect(h.discord.channelMessages(h.discord.channelId).filter((m) => m.content.includes(first.requester.userId))).toHaveLength(1);
      expect(h.discord.channelMessages(h.discord.channelId).filter((m) => m.content.includes(second.requester.userId))).toHaveLength(1);
    });

    it('keeps an end it showed whose mark fails as shown, so the next sweep marks it ended saying nothing: shown once', async () => {
      h = await DiscordHarness.start({ partialImages: 0 });
      const failed = left('failed-1', { type: 'failed', code: 'rate_limited', words: words('failure.rate_limited', { known: 'no' }), retryable: true });
      await plant(failed);
      spyOnInstance(JobRecordStore.prototype, 'markEnded', jobStoreOf(h)).mockRejectedValueOnce(new Error('storage unavailable'));
      await h.restart({ crash: true });

      await h.discord.waitFor(() => postFor(failed), 'the failure’s message');
      await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ key: 'failed-1', status: 'running', final: { type: 'failed', shown: true } }]), { timeout: 15_000 });
      await h.restart({ crash: true });

      await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ key: 'failed-1', status: 'failed' }]), { timeout: 15_000 });
      expect(h.discord.channelMessages(h.discord.channelId).filter((m) => m.content.includes(failed.requester.userId))).toHaveLength(1);
    });

    it('posts such an end in the channel once when the process stops between the post and its mark: the next sweep marks it ended saying nothing', async () => {
      h = await DiscordHarness.start({ partialImages: 0 });
      const failed = left('failed-1', { type: 'failed', code: 'rate_limited', words: words('failure.rate_limited', { known: 'no' }), retryable: true });
      await plant(failed);
      // The process stops right after the post: its mark never comes.
      const markEnded = spyOnInstance(JobRecordStore.prototype, 'markEnded', jobStoreOf(h)).mockImplementationOnce(() => new Promise<void>((resolve) => (hung.letGo = resolve)));
      await h.restart({ crash: true });
      await h.discord.waitFor(() => postFor(failed), 'the failure’s message');
      await h.discord.waitFor(() => markEnded.mock.calls.length > 0 || undefined, 'the mark after the post');
      await h.restart({ crash: true });

      await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ key: 'failed-1', status: 'failed' }]), { timeout: 15_000 });
      expect(h.discord.channelMessages(h.discord.channelId).filter((m) => m.content.includes(failed.requester.userId))).toHaveLength(1);
    });

    it('keeps a “stopped” it posted whose mark fails as shown and still shows the records after it: the next sweep marks it ended saying nothing, posted once', async () => {
      h = await DiscordHarness.start({ partialImages: 0 });
      // Jobs that made nothing, their ends never recorded: each is told "stopped".
      const stopped = (key: string, createdAt: number): JobRecord => {
        const { endRecorded: _recorded, final: _final, ...record } = left(key, undefined, createdAt);
        return record;
      };
      const first = stopped('stopped-1', Date.now() - 2);
      const second = stopped('stopped-2', Date.now() - 1);
      await plant(first, second);
      // The first one's mark fails every try.
      spyOnInstance(JobRecordStore.prototype, 'markEnded', jobStoreOf(h)).mockRejectedValueOnce(new Error('storage unavailable'));
      await h.restart({ crash: true });

      await h.discord.waitFor(() => postFor(second), 'the next record’s message');
      expect(postFor(first)!.content).toContain(say('en', 'discord.job.interrupted'));
      await vi.waitFor(async () => expect((await records(h)).find((r) => r.key === 'stopped-1')).toMatchObject({ status: 'running', final: { type: 'failed', shown: true } }), { timeout: 15_000 });
      await h.restart({ crash: true });

      await vi.waitFor(async () => expect((await records(h)).find((r) => r.key === 'stopped-1')?.status).toBe('failed'), { timeout: 15_000 });
      expect(h.discord.channelMessages(h.discord.channelId).filter((m) => m.content.includes(first.requester.userId))).toHaveLength(1);
    });

    it('offers no Retry in the “stopped” of an edit older than its kept images: its input images are gone, though its record still names them', async () => {
      h = await DiscordHarness.start({ partialImages: 0 });
      const { endRecorded: _recorded, final: _final, ...base } = left('edit-old', undefined, Date.now() - h.state.spaces.discordImages.ttlMs - 60_000);
      const edit: JobRecord = { ...base, kind: 'edit', inputs: [{ file: 'edit-old-in-0', bytes: 100 }] };
      await plant(edit);
      await h.restart({ crash: true });

      const note = await h.discord.waitFor(() => postFor(edit), 'the edit’s “stopped”');
      expect(note.content).toContain(say('en', 'discord.job.interrupted_no_retry', COMMAND_NAMES));
      expect(buttonsOf(note)).toEqual([]);
    });

    it('marks ended, saying nothing, a failure older than its kept images', async () => {
      h = await DiscordHarness.start({ partialImages: 0 });
      const old = left('failed-old', { type: 'failed', code: 'rate_limited', words: words('failure.rate_limited', { known: 'no' }), retryable: true }, Date.now() - h.state.spaces.discordImages.ttlMs - 60_000);
      await plant(old);
      await h.restart({ crash: true });

      await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ key: 'failed-old', status: 'failed' }]), { timeout: 15_000 });
      expect(postFor(old)).toBeUndefined();
    });
  });

  it('records a live job’s end once and leaves nothing to the next start: one history entry, one audit post, its record released', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const audit = await chooseAuditChannel(h);
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', runnerOf(h));
    const ix = h.discord.slashCommand('imagine', { prompt: 'a paid image that ended as usual' });
    await h.finalReply(ix);
    await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ status: 'completed', endRecorded: true }]), { timeout: 15_000 });
    const written = writesThrough(h, ix);
    const claim = spyOnInstance(JobRecordStore.prototype, 'claimInterrupted', jobStoreOf(h));
    await h.restart();

    // The next start's sweep took nothing: the record was released with its end recorded.
    await vi.waitFor(() => expect(claim).toHaveBeenCalled(), { timeout: 15_000 });
    expect(await claim.mock.results[0]!.value).toEqual([]);
    expect(recordEnded).toHaveBeenCalledTimes(1);
    expect(await h.runner.history!.mine(requesterOf(ix))).toHaveLength(1);
    expect(writesThrough(h, ix)).toBe(written);
    expect(await auditPosts(h, audit, 'a paid image that ended as usual')).toBe(1);
  });

  it('shows every swept record without waiting for the recorded ends before it (each waits for its audit post), and a stop still waits for those records', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const audit = await chooseAuditChannel(h);
    const requester = { platform: 'discord' as const, userId: snowflake(), channelId: h.discord.channelId, scopeId: h.discord.guildId };
    const left = jobRecords(h);
    const record = (key: string, createdAt: number, rest: Partial<JobRecord>): JobRecord => ({ key, kind: 'generate', prompt: `swept ${key}`, options: {}, requester, createdAt, status: 'running', inputs: [], outputs: [], ...rest });
    // Two jobs whose ends were shown and are still to be recorded, then one left running: swept in that order.
    const ended = { status: 'completed' as const, end: { type: 'completed' as const } };
    // Made a moment ago (one older than its kept images would be ended saying nothing).
    const now = Date.now();
    await left.put('ended-1', record('ended-1', now - 3, ended), { hold: true });
    await left.put('ended-2', record('ended-2', now - 2, ended), { hold: true });
    await left.put('running-3', record('running-3', now - 1, {}), { hold: true });
    // The audit channel's posts are held: a recorded end waits for its own.
    const posts = h.discord.holdRequests((method, path) => method === 'POST' && path.includes(`/channels/${audit}/messages`));
    const posted = h.discord.channelMessages(audit).length;
    await h.restart({ crash: true });

    await h.discord.waitFor(() => h.discord.channelMessages(h.discord.channelId).find((m) => m.content.includes(requester.userId)), 'the interrupted job’s message');
    expect(h.discord.channelMessages(audit)).toHaveLength(posted);
    const stopping = h.bot.stop();
    await h.discord.waitFor(() => posts.held > 0 || undefined, 'the audit post of the recorded ends');
    posts.release();
    await stopping;
    expect((await records(h)).filter((r) => r.endRecorded === true).map((r) => r.key).sort()).toEqual(['ended-1', 'ended-2']);
    expect(h.discord.channelMessages(audit).flatMap((m) => m.embeds.map((e) => String(e.description))).filter((t) => t.includes('swept ended-'))).toHaveLength(2);
  });

  /** A job that completed, then its process died while its runner recorded its end: its record left for the next start's sweep. */
  async function endCutOff(prompt: string): Promise<FakeInteraction> {
    spyOnInstance(JobRunner.prototype, 'recordEnded', runnerOf(h)).mockImplementationOnce(() => new Promise<void>((resolve) => (hung.letGo = resolve)));
    const ix = h.discord.slashCommand('imagine', { prompt });
    await h.finalReply(ix);
    await vi.waitFor(async () => expect(await records(h)).toMatchObject([{ status: 'completed' }]), { timeout: 15_000 });
    return ix;
  }

  const swept = () => h.discord.waitFor(() => h.logger.entries.find((e) => e.msg === 'recorded the end of a job the last stop left unrecorded'), 'the sweep');

  it('keeps the prompt of a swept job accepted after its member’s forget, while the forget’s mark lives', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const audit = await chooseAuditChannel(h);
    const ix = await endCutOff('a lighthouse asked after a forget');
    // The member asked forget well before this job (more than the replicas' clock margin): their mark is still kept.
    const [record] = await records(h);
    await h.state.store.space<number>(h.state.spaces.forgotten).put(stateKeyOf(userKeyOf(requesterOf(ix))), record!.createdAt - 2 * FORGET_CLOCK_MARGIN_MS);
    await h.restart({ crash: true });

    await swept();
    expect(await h.runner.history!.mine(requesterOf(ix))).toMatchObject([{ prompt: 'a lighthouse asked after a forget', status: 'completed' }]);
    expect(await auditPosts(h, audit, 'a lighthouse asked after a forget')).toBe(1);
  });

  it('records a swept job running at its member’s forget with no prompt even once the mark is gone: the forget erased it from the record', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const audit = await chooseAuditChannel(h);
    const ix = await endCutOff('a lighthouse running at the forget');
    // The member forgets (as on another replica), then the mark is gone (its TTL or its count bound passed).
    await h.runner.history!.forgetEverywhere(requesterOf(ix));
    await h.state.store.space(h.state.spaces.forgotten).delete(stateKeyOf(userKeyOf(requesterOf(ix))));
    await h.restart({ crash: true });

    await swept();
    expect(await h.runner.history!.mine(requesterOf(ix))).toMatchObject([{ prompt: '', status: 'completed' }]);
    expect(await auditPosts(h, audit, 'a lighthouse running at the forget')).toBe(0);
    expect(await auditPosts(h, audit, ix.user.id)).toBe(1);
  });

  it('keeps no prompt in the record of a job whose member forgot between its acceptance and its record’s write (the forget did not find it)', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const add = JobRecordStore.prototype.add;
    let forgot = false;
    spyOnInstance(JobRecordStore.prototype, 'add', jobStoreOf(h)).mockImplementationOnce(async function (this: JobRecordStore, ...args: Parameters<JobRecordStore['add']>) {
      // The job is accepted and its first answer given; its record is not written yet.
      await h.runner.history!.forgetEverywhere(requesterOf(ix));
      forgot = true;
      return add.apply(this, args);
    });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a lighthouse forgotten as it started' });
    await h.finalReply(ix);

    expect(forgot).toBe(true);
    expect(await records(h)).toMatchObject([{ prompt: '' }]);
    expect(JSON.stringify(await records(h))).not.toContain('forgotten as it started');
  });

  it('makes a job’s record with the time its runner accepted it, the one its history entry is measured by (one clock)', async () => {
    // The runner's clock a second behind the bot's: a record stamped by the bot's own would not match.
    h = await DiscordHarness.start({ partialImages: 0, runnerNow: () => Date.now() - 1000 });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a lighthouse on the runner’s clock' });
    await h.finalReply(ix);

    const [record] = await records(h);
    expect(record!.createdAt).toBe(h.runner.get(record!.runnerJobId!)!.submittedAt);
  });
});
