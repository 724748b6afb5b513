import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { ChannelWriter } from '../../../bots/slack/ChannelWriter.js';
import type { RequestStore } from '../../../bots/slack/RequestStore.js';
import { SlackJobs, type SlackJobRunner } from '../../../bots/slack/SlackJobs.js';
import { failureWithSecrets, INTAKE_FAILURES, SECRETS_IN_FAILURE } from '../../helpers/intake-failures.js';
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
  const jobs = new SlackJobs({ runner, writer: {} as ChannelWriter, store: {} as RequestStore, adminUserIds: [], logger });
  const told: string[] = [];
  const notify = async (text: string) => void told.push(text);
  return { logger, jobs, told, notify };
}

describe('a job the runner’s intake did not take, on Slack', () => {
  it.each(INTAKE_FAILURES)('logs %s once, at the level its code has by the runner’s rule, and tells the member privately', async (_, reason, code, level) => {
    const { logger, jobs, told, notify } = scene(reason);
    expect(await jobs.openForm({ userId: 'U0ALICE', teamId: 'T0TEAM', channelId: 'C0TEAM' }, notify, async () => undefined)).toBe(false);
    expect(told).toHaveLength(1);
    expect(logger.entries).toHaveLength(1);
    expect(logger.entries[0]).toMatchObject({ level, obj: { code } });
    // Only an error line carries the error, made loggable (its name and message, never the object); the others their code alone.
    const { err } = logger.entries[0]!.obj as { err?: unknown };
    if (level === 'error') expect(err).toMatchObject({ name: reason.name, message: reason.message });
    else expect(err).toBeUndefined();
  });

  it('logs a failure whose error holds credentials through the one rule: none of them reaches a log line', async () => {
    const { logger, jobs, told, notify } = scene(failureWithSecrets());
    await jobs.openForm({ userId: 'U0ALICE', teamId: 'T0TEAM', channelId: 'C0TEAM' }, notify, async () => undefined);
    expect(told).toHaveLength(1);
    expect(logger.entries).toEqual([{ level: 'error', obj: expect.objectContaining({ code: 'internal_error', err: expect.objectContaining({ name: 'TypeError' }) }), msg: 'the runner did not take a Slack job' }]);
    // Every string of every line, an error's message and stack too.
    const logged = inspect(logger.entries, { depth: null });
    for (const secret of SECRETS_IN_FAILURE) expect(logged).not.toContain(secret);
    expect(logged).toContain('[redacted]');
  });
});
