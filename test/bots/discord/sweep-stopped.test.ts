import { describe, expect, it, vi } from 'vitest';
import { COMMAND_NAMES } from '../../../bots/discord/command-words.js';
import { say, usd, type HistoryEntry } from '../../../bots/runner/index.js';
import { makeImage } from '../../helpers/images.js';
import { answerOf, buttonsOf, DiscordHarness } from './harness.js';
import { closeStoppedProcesses, drawingJob, ESTIMATE_USD, jobRecords, stoppedReply } from './sweep-scene.js';

/** Every entry of every member's history, as kept. */
async function historyEntries(h: DiscordHarness): Promise<HistoryEntry[]> {
  const entries: HistoryEntry[] = [];
  for await (const { value } of h.state.store.space<HistoryEntry[]>(h.state.spaces.history).entries()) entries.push(...value);
  return entries;
}

describe('a job a stop cut off, told “stopped” by the next start', () => {
  let h: DiscordHarness;
  const hung = closeStoppedProcesses(() => h);

  /** A bot whose `/imagine` job is drawing (a slow service): its request reached the service. */
  async function drawing(prompt: string) {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    return drawingJob(h, prompt);
  }

  it('says what the ledger charged a job whose request had reached the service, and keeps it in the member’s history with that cost', async () => {
    const { running, key, record } = await drawing('a fox charged as the bot died');
    // The ledger charges the job (at the next start, a reconcile charges its estimate; this harness's crash keeps its
    // ledger's process alive, so the charge is made here, as the ledger makes it).
    await h.quotaStore.settle(record.runnerJobId!, ESTIMATE_USD, { basis: 'estimate', outcome: 'failed' });
    await h.restart({ crash: true });

    const stopped = await stoppedReply(h, running);
    expect(stopped.content.split('\n').slice(1)).toEqual([say('en', 'discord.job.interrupted'), say('en', 'discord.job.charged', { usd: usd(ESTIMATE_USD) })]);
    expect(buttonsOf(stopped).map((b) => b.label)).toEqual(['Retry']);
    // Recorded once, as the runner records every job's end: its record released with it.
    await vi.waitFor(async () => expect(await jobRecords(h).get(key)).toMatchObject({ status: 'failed', endRecorded: true }), { timeout: 15_000 });
    const history = await answerOf(h, h.discord.slashCommand('imagine-history', {}));
    expect(history.content).toContain('a fox charged as the bot died');
    expect(history.content).toContain('$0.0064');
  });

  it('says what the ledger may still charge a job whose reservation a process not gone to the ledger holds (its request sent): its estimate, not settled yet, and keeps it in the history as what it may cost, not as its cost', async () => {
    // This harness's crash keeps its ledger's process alive: its lease on the reservation holds, as a killed replica's
    // does for a while after its lease on the job lapsed, so the ledger has no verdict yet.
    const { running, key, record } = await drawing('a fox not charged yet');
    await h.restart({ crash: true });

    const stopped = await stoppedReply(h, running);
    expect(stopped.content.split('\n').slice(1)).toEqual([say('en', 'discord.job.interrupted'), say('en', 'discord.job.may_be_charged', { usd: usd(ESTIMATE_USD) })]);
    expect((await h.quotaStore.activeJobs()).map((j) => j.jobId)).toEqual([record.runnerJobId]);
    await vi.waitFor(async () => expect(await jobRecords(h).get(key)).toMatchObject({ status: 'failed', endRecorded: true }), { timeout: 15_000 });
    const [entry] = (await historyEntries(h)).filter((e) => e.key === key);
    expect(entry).toMatchObject({ prompt: 'a fox not charged yet', status: 'failed', mayCostUsd: ESTIMATE_USD });
    expect(entry!.costUsd).toBeUndefined();
  });

  it('reads the ledger once per sweep, however many jobs it says “stopped” of: one reconcile, one read of the reservations held', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const first = await drawingJob(h, 'a fox stopped first');
    const second = await drawingJob(h, 'a fox stopped second');
    const reconciles = vi.spyOn(h.quotaStore, 'reconcile');
    const reads = vi.spyOn(h.quotaStore, 'activeJobs');
    await h.restart({ crash: true });

    for (const { key } of [first, second]) {
      await vi.waitFor(async () => expect(await jobRecords(h).get(key)).toMatchObject({ status: 'failed', endRecorded: true }), { timeout: 15_000 });
    }
    expect(reconciles).toHaveBeenCalledTimes(1);
    expect(reads).toHaveBeenCalledTimes(1);
  });

  it('says no charge of a job the ledger released (its process gone before its request was sent), and still keeps it in the history', async () => {
    const { running, key, record } = await drawing('a fox nothing was charged for');
    await h.quotaStore.markUnsent(record.runnerJobId!);
    await h.restart({ crash: true, leaseLapsed: true });

    const stopped = await stoppedReply(h, running);
    expect(stopped.content.split('\n').slice(1)).toEqual([say('en', 'discord.job.interrupted')]);
    await vi.waitFor(async () => expect(await jobRecords(h).get(key)).toMatchObject({ status: 'failed', endRecorded: true }), { timeout: 15_000 });
    const history = await answerOf(h, h.discord.slashCommand('imagine-history', {}));
    expect(history.content).toContain('a fox nothing was charged for');
  });

  it('says an /edit stopped while its images were downloading, rather than leave its public reply “thinking…” for good: nothing charged, no Retry (its images were never kept)', async () => {
    h = await DiscordHarness.start();
    const held = h.discord.holdRequests((method, path) => method === 'GET' && path.startsWith('/attachments'));
    hung.letGo = () => held.release();
    const image1 = h.discord.hostFile({ filename: 'a.png', bytes: await makeImage('png', 16, 16) });
    const ix = h.discord.slashCommand('edit', { prompt: 'paint it blue', image1 });
    await h.discord.waitFor(() => held.held > 0 || undefined, 'the edit’s image downloading');
    await h.restart({ crash: true });

    const stopped = await h.discord.waitFor(() => {
      const message = h.discord.original(ix);
      return message?.content.includes(say('en', 'discord.job.interrupted_no_retry', COMMAND_NAMES)) ? message : undefined;
    }, 'the edit told stopped');
    expect(stopped.content.split('\n').slice(1)).toEqual([say('en', 'discord.job.interrupted_no_retry', COMMAND_NAMES)]);
    expect(buttonsOf(stopped)).toEqual([]);
    expect(h.emulator.requests ?? []).toEqual([]);
  });
});
