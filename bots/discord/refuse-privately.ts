import { MessageFlags, type RepliableInteraction } from 'discord.js';
import { errorCodeOf } from 'pictor/internal';
import { describeFailure, logInputRefusal, type InputRefusedError } from '../runner/index.js';
import { acknowledge } from './acknowledge.js';
import type { BotContext } from './bot-context.js';
import { loggableError } from './loggable-error.js';
import { scopeOf } from './requester.js';

/** How a job's first public answer was given: a new reply (deferReply), or the message its button is on (deferUpdate). */
export type FirstAnswer = 'reply' | 'update';

/**
 * The first answer to a job the runner's intake refused: private (ephemeral),
 * so only the member reads why. Nothing was reserved, fetched or sent. The
 * runner logged it (`JobRunner.request`, `requestForm`): this only says it.
 */
export async function refusePrivately(ctx: BotContext, interaction: RepliableInteraction, reason: unknown): Promise<void> {
  const message = describeFailure(reason, interaction.locale).message;
  await acknowledge('refuse privately', () => interaction.reply({ content: `✋ ${message}`, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } }), ctx.logger);
}

/**
 * What the bot refused itself, before the runner's intake was asked (what Discord reported of a job's attachments:
 * their host, count or size; a press of a job's button, or an edit form, for what its job no longer has or is not, or
 * for who pressed it): logged once by the runner's one line (`logInputRefusal`: the member's, with its code, naming who
 * asked where), then said privately — as a refusal of the runner's is (`refusePrivately`), unless `answer` says it
 * otherwise (a button's answer that may follow a deferral, a form's). Where it is asked is where it counts: the place it
 * came from, or `scopeId` (a private server job's press in its member's DM counts in that server).
 */
export async function refuseInputPrivately(
  ctx: BotContext,
  interaction: RepliableInteraction,
  refusal: InputRefusedError,
  answer: () => Promise<unknown> = () => refusePrivately(ctx, interaction, refusal),
  scopeId: string = scopeOf(interaction),
): Promise<void> {
  logInputRefusal(ctx.logger, refusal, { platform: 'discord', scopeId, userId: interaction.user.id });
  await answer();
}

/**
 * A job admitted and answered in public that could not start (its images could
 * not be fetched, are not images, or were larger than reported): the public
 * placeholder goes, and the member alone is told why (an ephemeral follow-up).
 * Nothing was sent or charged. The runner logged it, with the job's id.
 */
export async function refuseAfterAnswer(ctx: BotContext, interaction: RepliableInteraction, firstAnswer: FirstAnswer, reason: unknown): Promise<void> {
  const message = describeFailure(reason, interaction.locale).message;
  try {
    // A Retry's message stays as it was (its job is not started again); a new reply that shows nothing goes.
    if (firstAnswer === 'reply') await interaction.deleteReply();
    await interaction.followUp({ content: `✋ ${message}`, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
  } catch (error) {
    ctx.logger.warn({ err: loggableError(error), code: errorCodeOf(reason) }, 'could not tell a member why their job did not start');
  }
}
