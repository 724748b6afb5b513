import { MessageFlags, type RepliableInteraction } from 'discord.js';
import { describeFailure, type JobSpec } from '../runner/index.js';
import { acknowledge } from './acknowledge.js';
import type { BotContext } from './bot-context.js';

/**
 * Checks a job against its server's rules (who, where, what) before the
 * interaction is answered in public: a refusal becomes the first, private
 * (ephemeral) answer, and true is returned (nothing started, nothing sent).
 */
export async function refusedPrivately(ctx: BotContext, interaction: RepliableInteraction, spec: JobSpec): Promise<boolean> {
  const refusal = await ctx.runner.policyRefusal?.(spec);
  if (!refusal) return false;
  const { code, message } = describeFailure(refusal);
  ctx.logger.info({ code }, 'job refused by a rule of the server');
  await acknowledge('refuse privately', () => interaction.reply({ content: `✋ ${message}`, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } }), ctx.logger);
  return true;
}
