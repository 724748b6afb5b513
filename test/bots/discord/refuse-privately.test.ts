import { inspect } from 'node:util';
import type { RepliableInteraction } from 'discord.js';
import { describe, expect, it, vi } from 'vitest';
import { refuseAfterAnswer, refusePrivately } from '../../../bots/discord/refuse-privately.js';
import type { BotContext } from '../../../bots/discord/bot-context.js';
import { describeFailure, JobRefusedError, words } from '../../../bots/runner/index.js';
import { LedgerUnreadableError } from '../../../src/internal.js';
import { failureWithSecrets, INTAKE_FAILURES, SECRETS_IN_FAILURE } from '../../helpers/intake-failures.js';
import { RecordingLogger } from './harness.js';

const EPHEMERAL = 64;

function scene() {
  const logger = new RecordingLogger();
  const ctx = { logger } as unknown as BotContext;
  const answers: { content: string; flags: number }[] = [];
  const answer = vi.fn(async (message: { content: string; flags: number }) => void answers.push(message));
  const interaction = { locale: 'en-US', reply: answer, followUp: answer, deleteReply: vi.fn(async () => undefined) } as unknown as RepliableInteraction;
  return { logger, ctx, interaction, answers };
}

describe('a job the runner’s intake did not take, on Discord', () => {
  it.each(INTAKE_FAILURES)('logs %s once, at the level its code has by the runner’s rule, and tells the member privately', async (_, reason, code, level) => {
    const { logger, ctx, interaction, answers } = scene();
    await refusePrivately(ctx, interaction, reason);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(logger.entries).toHaveLength(1);
    expect(logger.entries[0]).toMatchObject({ level, obj: { code } });
    // Only an error line carries the error; the others their code alone.
    const { err } = logger.entries[0]!.obj as { err?: { message?: string } };
    if (level === 'error') expect(err?.message).toBe(reason.message);
    else expect(err).toBeUndefined();
  });

  it('logs a failure whose error holds credentials through the one rule: none of them reaches a log line', async () => {
    const { logger, ctx, interaction } = scene();
    await refusePrivately(ctx, interaction, failureWithSecrets());
    expect(logger.entries).toEqual([{ level: 'error', obj: expect.objectContaining({ code: 'internal_error' }), msg: 'the runner did not take a job' }]);
    const logged = inspect(logger.entries, { depth: null });
    for (const secret of SECRETS_IN_FAILURE) expect(logged).not.toContain(secret);
  });

  it('logs what stopped it after its first answer too', async () => {
    const { logger, ctx, interaction } = scene();
    await refuseAfterAnswer(ctx, interaction, 'reply', new LedgerUnreadableError('/data/quota-ledger.json', 'is not JSON'));
    expect(logger.entries.find((e) => e.level === 'error')).toMatchObject({ obj: { code: 'ledger_unreadable', err: { message: expect.stringContaining('/data/quota-ledger.json') } } });
  });

  it('keeps a refusal of the runner’s to its code: the member’s, not the operator’s, in the runner’s words', async () => {
    const { logger, ctx, interaction, answers } = scene();
    const refusal = new JobRefusedError('restarting', words('refusal.restarting'));
    await refusePrivately(ctx, interaction, refusal);
    expect(answers[0]!.content).toBe(`✋ ${describeFailure(refusal, 'en-US').message}`);
    expect(logger.entries).toEqual([{ level: 'info', obj: { code: 'restarting' }, msg: 'job refused' }]);
  });
});
