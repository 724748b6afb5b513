import type { RepliableInteraction } from 'discord.js';
import { describe, expect, it, vi } from 'vitest';
import { InputImageError } from '../../../bots/discord/download-images.js';
import { refuseAfterAnswer, refuseInputPrivately, refusePrivately } from '../../../bots/discord/refuse-privately.js';
import type { BotContext } from '../../../bots/discord/bot-context.js';
import { describeFailure, JobRefusedError, sayWords, words } from '../../../bots/runner/index.js';
import { INTAKE_FAILURES } from '../../helpers/intake-failures.js';
import { RecordingLogger } from './harness.js';

const EPHEMERAL = 64;

function scene() {
  const logger = new RecordingLogger();
  const ctx = { logger } as unknown as BotContext;
  const answers: { content: string; flags: number }[] = [];
  const answer = vi.fn(async (message: { content: string; flags: number }) => void answers.push(message));
  // Asked in a server that installed the bot (its scope).
  const where = { guildId: 'G1', context: 0, authorizingIntegrationOwners: { guildId: 'G1' } };
  const interaction = { locale: 'en-US', user: { id: 'U1' }, ...where, reply: answer, followUp: answer, deleteReply: vi.fn(async () => undefined) } as unknown as RepliableInteraction;
  return { logger, ctx, interaction, answers };
}

describe('a job the runner’s intake did not take, on Discord', () => {
  // The runner logged it (`JobRunner.request`): the surface that tells the member only renders it.
  it.each(INTAKE_FAILURES)('tells the member privately of %s, and logs nothing of it', async (_, reason) => {
    const { logger, ctx, interaction, answers } = scene();
    await refusePrivately(ctx, interaction, reason);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(logger.entries).toEqual([]);
  });

  it.each(INTAKE_FAILURES)('tells the member privately of %s after its first answer too, and logs nothing of it', async (_, reason) => {
    const { logger, ctx, interaction, answers } = scene();
    await refuseAfterAnswer(ctx, interaction, 'reply', reason);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(logger.entries).toEqual([]);
  });

  it('says a refusal of the runner’s in the runner’s words', async () => {
    const { ctx, interaction, answers } = scene();
    const refusal = new JobRefusedError('restarting', words('refusal.restarting'));
    await refusePrivately(ctx, interaction, refusal);
    expect(answers[0]!.content).toBe(`✋ ${describeFailure(refusal, 'en-US').message}`);
  });

  it('says an input image’s refusal in its own words', async () => {
    const { ctx, interaction, answers } = scene();
    const refusal = new InputImageError('not_an_image', words('discord.input.not_an_image', { label: 'image1', file: '`cat.png`' }), 'image1');
    await refuseAfterAnswer(ctx, interaction, 'reply', refusal);
    expect(answers[0]!.content).toBe(`✋ ${sayWords('en-US', refusal.words)}`);
  });
});

describe('an input image the Discord bot refused itself, before the runner', () => {
  it('is logged once by the runner’s one rule: the member’s (info), with its own code and who asked, and told privately', async () => {
    const { logger, ctx, interaction, answers } = scene();
    const refusal = new InputImageError('host_not_allowed', words('discord.input.host_not_allowed', { label: 'image1' }), 'image1');
    await refuseInputPrivately(ctx, interaction, refusal);
    expect(answers).toEqual([expect.objectContaining({ content: `✋ ${sayWords('en-US', refusal.words)}`, flags: EPHEMERAL })]);
    expect(logger.entries).toEqual([{ level: 'info', obj: { platform: 'discord', scopeId: 'G1', userId: 'U1', code: 'host_not_allowed' }, msg: expect.any(String) }]);
  });
});
