import type { RepliableInteraction } from 'discord.js';
import { describe, expect, it, vi } from 'vitest';
import { refuseAfterAnswer, refusePrivately } from '../../../bots/discord/refuse-privately.js';
import type { BotContext } from '../../../bots/discord/bot-context.js';
import { JobRefusedError, words } from '../../../bots/runner/index.js';
import { ConnectionError } from '../../../src/index.js';
import { LedgerUnreadableError } from '../../../src/internal.js';
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
  it.each([
    ['the spend ledger cannot be read, naming its file', new LedgerUnreadableError('/data/quota-ledger.json', 'is not JSON'), 'ledger_unreadable', '/data/quota-ledger.json'],
    ['Redis is gone', new ConnectionError('cannot use Redis at redis://redis.internal:6379: connect ECONNREFUSED'), 'connection_failed', 'redis://redis.internal:6379'],
    ['a bug of ours', new TypeError("Cannot read properties of undefined (reading 'caps')"), 'internal_error', "reading 'caps'"],
  ])('logs for the operator what stopped it when %s, and tells the member privately', async (_, reason, code, named) => {
    const { logger, ctx, interaction, answers } = scene();
    await refusePrivately(ctx, interaction, reason);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.flags & EPHEMERAL).toBe(EPHEMERAL);
    const logged = logger.entries.find((e) => e.level === 'error');
    expect(logged).toMatchObject({ msg: 'the runner did not take a job', obj: { code, err: { message: expect.stringContaining(named) } } });
  });

  it('logs what stopped it after its first answer too', async () => {
    const { logger, ctx, interaction } = scene();
    await refuseAfterAnswer(ctx, interaction, 'reply', new LedgerUnreadableError('/data/quota-ledger.json', 'is not JSON'));
    expect(logger.entries.find((e) => e.level === 'error')).toMatchObject({ obj: { code: 'ledger_unreadable', err: { message: expect.stringContaining('/data/quota-ledger.json') } } });
  });

  it('keeps a refusal of the runner’s to its code: the member’s, not the operator’s', async () => {
    const { logger, ctx, interaction, answers } = scene();
    await refusePrivately(ctx, interaction, new JobRefusedError('restarting', words('refusal.restarting')));
    expect(answers[0]!.content).toBe('✋ The bot is restarting; try again in a minute.');
    expect(logger.entries).toEqual([{ level: 'info', obj: { code: 'restarting' }, msg: 'job refused' }]);
  });
});
