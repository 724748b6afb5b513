import { afterEach, describe, expect, it, vi } from 'vitest';
import { say, type HistoryEntry } from '../../../bots/runner/index.js';
import { refuseStateWrites } from '../../helpers/refusing-state.js';
import { answerOf, buttonsOf, DiscordHarness } from './harness.js';
import { jobRecords } from './sweep-scene.js';

/** Every entry of every member's history, as kept. */
async function historyEntries(h: DiscordHarness): Promise<HistoryEntry[]> {
  const entries: HistoryEntry[] = [];
  for await (const { value } of h.state.store.space<HistoryEntry[]>(h.state.spaces.history).entries()) entries.push(...value);
  return entries;
}

describe('a job that ends while the bots’ state refuses writes (a full Redis, a full disk)', () => {
  let h: DiscordHarness | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await h?.close();
    h = undefined;
  });

  it('writes its end once the state takes writes again, so a restart never tells the member a delivered job stopped', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 400 } });
    const harness = h;
    const ix = h.discord.slashCommand('imagine', { prompt: 'a fox delivered into a full state', quality: 'low', size: '1024x1024' });
    const running = await h.discord.waitFor(() => {
      const message = harness.discord.original(ix);
      return message && buttonsOf(message).length > 0 ? message : undefined;
    }, 'the job drawing');
    const key = buttonsOf(running)[0]!.custom_id.split(':')[2]!;
    const full = refuseStateWrites(h);
    full.now = true;
    const result = await h.discord.waitFor(() => {
      const message = harness.discord.messages.get(running.id);
      return message && message.attachments.length > 0 ? message : undefined;
    }, 'the result delivered');
    // Its end's tries all refused, and the runner's record of it (the history is in the same state) too.
    await h.discord.waitFor(() => harness.logger.entries.some((e) => e.msg === 'could not record the end of a job') || undefined, 'the end’s record refused');
    full.now = false;
    await h.restart();

    // The next start found nothing to say of it: its end was written, then recorded, once.
    await vi.waitFor(async () => expect(await jobRecords(harness).get(key)).toMatchObject({ status: 'completed', endRecorded: true }), { timeout: 15_000 });
    expect(harness.discord.messages.get(running.id)?.content).not.toContain(say('en', 'discord.job.interrupted'));
    expect(harness.discord.messages.get(running.id)?.content).toBe(result.content);
    expect((await historyEntries(harness)).filter((e) => e.key === key)).toHaveLength(1);
    const history = await answerOf(harness, harness.discord.slashCommand('imagine-history', {}));
    expect(history.content).toContain('a fox delivered into a full state');
  });
  it('says how many ends are lost when stopped with no grace', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 400 } });
    const harness = h;
    const ix = h.discord.slashCommand('imagine', { prompt: 'a fox stopped at once', quality: 'low', size: '1024x1024' });
    await h.discord.waitFor(() => {
      const message = harness.discord.original(ix);
      return message && buttonsOf(message).length > 0 ? message : undefined;
    }, 'the job drawing');
    const full = refuseStateWrites(h);
    full.now = true;
    const owing = 'could not mark a job ended; kept here and written again until the state takes it';
    await h.discord.waitFor(() => harness.logger.entries.some((e) => e.msg === owing) || undefined, 'its end owed');

    await h.bot.stop({ graceMs: 0 });
    full.now = false;
    const lost = harness.logger.entries.filter((e) => e.level === 'error' && 'owed' in e.obj);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.obj).toMatchObject({ owed: 1 });
  });
});
