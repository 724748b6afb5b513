import { MessageFlags, type RepliableInteraction } from 'discord.js';
import { describeFailure, logJobFailure, sayWords } from '../runner/index.js';
import { acknowledge } from './acknowledge.js';
import type { BotContext } from './bot-context.js';
import { InputImageError } from './download-images.js';
import { loggableError } from './loggable-error.js';

/** How a job's first public answer was given: a new reply (deferReply), or the message its button is on (deferUpdate). */
export type FirstAnswer = 'reply' | 'update';

/**
 * The first answer to a job the runner's intake (or the surface's own check of
 * the attachments) refused: private (ephemeral), so only the member reads why.
 * Nothing was reserved, fetched or sent.
 */
export async function refusePrivately(ctx: BotContext, interaction: RepliableInteraction, reason: unknown): Promise<void> {
  const { message } = wordsOf(ctx, reason, interaction.locale, 'job refused');
  await acknowledge('refuse privately', () => interaction.reply({ content: `✋ ${message}`, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } }), ctx.logger);
}

/**
 * A job admitted and answered in public that could not start (its images could
 * not be fetched, are not images, or were larger than reported): the public
 * placeholder goes, and the member alone is told why (an ephemeral follow-up).
 * Nothing was sent or charged.
 */
export async function refuseAfterAnswer(ctx: BotContext, interaction: RepliableInteraction, firstAnswer: FirstAnswer, reason: unknown): Promise<void> {
  const { code, message } = wordsOf(ctx, reason, interaction.locale, 'job refused after its first answer');
  try {
    // A Retry's message stays as it was (its job is not started again); a new reply that shows nothing goes.
    if (firstAnswer === 'reply') await interaction.deleteReply();
    await interaction.followUp({ content: `✋ ${message}`, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), code }, 'could not tell a member why their job did not start');
  }
}

/**
 * The code and sentence of a refusal in the member's language: the runner's words (`describeFailure`), or an input
 * image's own; logged once. An input image's refusal is the member's: `info` (`refused`), its code. Anything else by
 * the runner's one rule (`logJobFailure`), unless the runner logged it where it refused it (a rule, the queue, a limit:
 * with the job's id, the limit and the use), which is not logged again here: a refusal of the runner's (a limit, a rule, a setting) `info` with its code
 * (`refused`), a full queue `warn` (the operator's capacity); a core error (Redis or the network gone, the service) `warn` with its code; the rest — the spend ledger
 * unreadable (naming the file), busy or closed, a bug — `error` with the error made loggable (name, message, and for a
 * bug its stack; never a secret or the interaction's token), never the prompt.
 */
function wordsOf(ctx: BotContext, reason: unknown, locale: string, refused: string): { code: string; message: string } {
  if (reason instanceof InputImageError) {
    ctx.logger.info({ code: reason.code }, refused);
    return { code: reason.code, message: sayWords(locale, reason.words) };
  }
  logJobFailure(ctx.logger, reason, {}, { refused, failed: 'the runner did not take a job' });
  return describeFailure(reason, locale);
}
