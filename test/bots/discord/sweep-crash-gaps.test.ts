import { describe, expect, it, vi } from 'vitest';
import { JobRecordStore, type JobRecord } from '../../../bots/discord/JobRecordStore.js';
import { JobRunner, say, usd } from '../../../bots/runner/index.js';
import { answerOf, DiscordHarness, drawingReply } from './harness.js';
import { closeStoppedProcesses, drawingJob, ESTIMATE_USD, jobRecords, stoppedReply } from './sweep-scene.js';
import { jobStoreOf, runnerOf, spyOnInstance } from '../../helpers/instance-spy.js';

describe('a job its process left at the worst moment, charged and recorded by the next start', () => {
  let h: DiscordHarness;
  const hung = closeStoppedProcesses(() => h);

  it('says the charge of a job whose request reached the service before its record named its runner job, and keeps it in the history with that cost', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    // The record's second write (as the job started) never lands: the process dies while its request is out.
    const add = JobRecordStore.prototype.add;
    const adds = spyOnInstance(JobRecordStore.prototype, 'add', jobStoreOf(h)).mockImplementation(function (this: JobRecordStore, ...args: Parameters<JobRecordStore['add']>) {
      return adds.mock.calls.filter(([init]) => init.key === args[0].key).length > 1 ? new Promise<JobRecord>(() => undefined) : add.apply(this, args);
    });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a fox sent before its record knew it', quality: 'low', size: '1024x1024' });
    const running = await drawingReply(h, ix);
    await h.discord.waitFor(() => h.emulator.requests.length > 0 || undefined, 'the request at the service');
    const jobId = await h.discord.waitFor(() => adds.mock.calls[1]?.[0].runnerJobId, 'the record’s write as the job started');
    // The process dies with its ledger; the next start, once its lease lapsed, reconciles: it charges the sent job.
    await h.restart({ crash: true, leaseLapsed: true });
    expect((await h.quotaStore.usage({})).filter((r) => r.jobId === jobId)).toMatchObject([{ costUsd: ESTIMATE_USD }]);

    const stopped = await stoppedReply(h, running);
    expect(stopped.content.split('\n').slice(1)).toEqual([say('en', 'discord.job.interrupted'), say('en', 'discord.job.charged', { usd: usd(ESTIMATE_USD) })]);
    const history = await vi.waitFor(async () => {
      const answer = await answerOf(h, h.discord.slashCommand('imagine-history', {}));
      return answer.content.includes('a fox sent before its record knew it') ? answer : Promise.reject(new Error('not in the history yet'));
    }, { timeout: 15_000 });
    expect(history.content).toContain('$0.0064');
  });

  it('keeps in the history a charged job whose “stopped” could not be marked ended when the process died before its end was recorded: the next start records it', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const { running, key } = await drawingJob(h, 'a fox whose stop was never recorded');
    await h.discord.waitFor(() => h.emulator.requests.length > 0 || undefined, 'the request at the service');
    // The process dies with its ledger; at the next start (its lease lapsed) the reconcile charges the sent job, the sweep
    // says "stopped", its mark fails every try, and the process dies while it records the end.
    spyOnInstance(JobRecordStore.prototype, 'markEnded', jobStoreOf(h)).mockRejectedValueOnce(new Error('storage unavailable'));
    const recordEnded = spyOnInstance(JobRunner.prototype, 'recordEnded', runnerOf(h)).mockImplementationOnce(() => new Promise<void>((resolve) => (hung.letGo = resolve)));
    await h.restart({ crash: true, leaseLapsed: true });
    await h.discord.waitFor(() => recordEnded.mock.calls.length > 0 || undefined, 'the sweep recording the end');
    expect(h.discord.messages.get(running.id)?.content).toContain(say('en', 'discord.job.interrupted'));
    await h.restart({ crash: true });

    await vi.waitFor(async () => expect(await jobRecords(h).get(key)).toMatchObject({ status: 'failed', endRecorded: true }), { timeout: 15_000 });
    const history = await answerOf(h, h.discord.slashCommand('imagine-history', {}));
    expect(history.content).toContain('a fox whose stop was never recorded');
    expect(history.content).toContain('$0.0064');
    expect(h.discord.messages.get(running.id)?.content.split('\n').slice(1)).toEqual([say('en', 'discord.job.interrupted'), say('en', 'discord.job.charged', { usd: usd(ESTIMATE_USD) })]);
  });
});
