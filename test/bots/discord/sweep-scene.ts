import { PermissionFlagsBits } from 'discord.js';
import { afterEach, vi } from 'vitest';
import type { JobRecord } from '../../../bots/discord/JobRecordStore.js';
import { say } from '../../../bots/runner/index.js';
import type { FakeInteraction, FakeMessage } from '../../fakes/discord/FakeDiscord.js';
import { snowflake } from '../../fakes/discord/snowflake.js';
import { answerOf, buttonsOf, DiscordHarness, drawingReply } from './harness.js';

/**
 * What the tests of a process stopped at the worst moment share, and of what the next start (its sweep) makes of the
 * jobs it left.
 */

/** What the job's estimate is charged (1024×1024, low quality): what a reconcile charges a job whose process died after sending it. */
export const ESTIMATE_USD = 0.00636;

/**
 * The teardown of each test (register it in the `describe`): mocks restored, what the test left hanging in a stopped
 * process let go (`letGo`: a held request, a write that never resolves — its state closed, it writes nothing), and the
 * bot of `harness` closed.
 */
export function closeStoppedProcesses(harness: () => DiscordHarness | undefined): { letGo: (() => void) | undefined } {
  const hung: { letGo: (() => void) | undefined } = { letGo: undefined };
  afterEach(async () => {
    vi.restoreAllMocks();
    hung.letGo?.();
    hung.letGo = undefined;
    await harness()?.close();
  });
  return hung;
}

/** The bot's Discord job records (kept in the bots' state: the next process reads them). */
export const jobRecords = (h: DiscordHarness) => h.state.store.space<JobRecord>(h.state.spaces.discordJobs);

/** Every Discord job record kept. */
export async function records(h: DiscordHarness): Promise<JobRecord[]> {
  const values: JobRecord[] = [];
  for await (const { value } of jobRecords(h).entries()) values.push(value);
  return values;
}

/** An admin chooses the server's audit channel (kept in the bots' state: the next process posts there too). */
export async function chooseAuditChannel(h: DiscordHarness): Promise<string> {
  const channel = snowflake();
  const permissions = String(PermissionFlagsBits.ManageGuild);
  await answerOf(h, h.discord.slashCommand('imagine-admin audit', { channel: { channel: { id: channel, name: 'audit' } } }, { permissions }));
  return channel;
}

/**
 * An `/imagine` job of `h` (a slow service: start it with `emulator: { latencyMs }`) drawing, once its runner job is on
 * its record (the record is written as the job is answered, its runner job added as it starts).
 */
export async function drawingJob(h: DiscordHarness, prompt: string): Promise<{ ix: FakeInteraction; running: FakeMessage; key: string; record: JobRecord }> {
  const ix = h.discord.slashCommand('imagine', { prompt, quality: 'low', size: '1024x1024' });
  const running = await drawingReply(h, ix);
  const key = buttonsOf(running)[0]!.custom_id.split(':')[2]!;
  const record = await vi.waitFor(async () => {
    const kept = await jobRecords(h).get(key);
    return kept?.runnerJobId ? kept : Promise.reject(new Error('no runner job yet'));
  });
  return { ix, running, key, record };
}

/** The "stopped" the next start put in place of the job's "Drawing…". */
export function stoppedReply(h: DiscordHarness, running: { id: string }): Promise<FakeMessage> {
  return h.discord.waitFor(() => {
    const message = h.discord.messages.get(running.id);
    return message?.content.includes(say('en', 'discord.job.interrupted')) ? message : undefined;
  }, 'the job told stopped');
}
