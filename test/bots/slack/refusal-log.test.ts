import { describe, expect, it } from 'vitest';
import type { ChannelWriter } from '../../../bots/slack/ChannelWriter.js';
import type { RequestStore } from '../../../bots/slack/RequestStore.js';
import { SlackJobs, type SlackJobRunner } from '../../../bots/slack/SlackJobs.js';
import { sentOnceClient } from '../../../bots/slack/sent-once-client.js';
import { describeFailure } from '../../../bots/runner/index.js';
import { INTAKE_FAILURES } from '../../helpers/intake-failures.js';
import { RecordingLogger } from '../discord/harness.js';

/** Slack's jobs over an intake that stops every form with `reason` (as the runner's `requestForm` hands it to `refuse`). */
function scene(reason: unknown) {
  const logger = new RecordingLogger();
  const runner = {
    requestForm: async (_requester: unknown, answers: { refuse: (reason: unknown) => Promise<void> }) => {
      await answers.refuse(reason);
      return false;
    },
  } as unknown as SlackJobRunner;
  const jobs = new SlackJobs({ runner, writer: {} as ChannelWriter, store: {} as RequestStore, adminUserIds: [], logger, firstPostClientOf: () => sentOnceClient(undefined, {}) });
  const told: string[] = [];
  const notify = async (text: string) => void told.push(text);
  return { logger, jobs, told, notify };
}

describe('a job the runner’s intake did not take, on Slack', () => {
  // The runner logged it (`JobRunner.requestForm`, `JobRunner.request`): the surface that tells the member only renders it.
  it.each(INTAKE_FAILURES)('tells the member privately of %s, and logs nothing of it', async (_, reason) => {
    const { logger, jobs, told, notify } = scene(reason);
    expect(await jobs.openForm({ userId: 'U0ALICE', teamId: 'T0TEAM', channelId: 'C0TEAM' }, notify, async () => undefined)).toBe(false);
    expect(told).toEqual([describeFailure(reason, 'en', '/imagine').message]);
    expect(logger.entries).toEqual([]);
  });
});
