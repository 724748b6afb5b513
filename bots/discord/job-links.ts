import { Routes, type APIMessage, type BaseInteraction } from 'discord.js';
import { isDmScope } from '../runner/index.js';
import type { BotContext } from './bot-context.js';
import { loggableError } from './loggable-error.js';

/** What a link to a job's reply is asked with: its interaction (with its server, where it came from one), or a reply handle. */
export type LinkedReply = Pick<BaseInteraction, 'applicationId'> & { token: string; guildId?: string | null | undefined };

/** The place part of a link to a job's message: its server's id, else where it was asked (a user install's server, `@me`), if known. */
export function linkPlaceOf(scopeId: string, reply: LinkedReply): string | undefined {
  if (!isDmScope(scopeId)) return scopeId;
  if (reply.guildId) return reply.guildId;
  return reply.guildId === null ? '@me' : undefined;
}

/** A link to a job's message for its history entry, while Discord still tells it (the token's 15 minutes). */
export async function linkToReply(ctx: BotContext, interaction: LinkedReply, scopeId: string): Promise<string | undefined> {
  const place = linkPlaceOf(scopeId, interaction);
  if (place === undefined) return undefined;
  try {
    const message = (await ctx.webhookRest.get(Routes.webhookMessage(interaction.applicationId, interaction.token, '@original'), { auth: false })) as APIMessage;
    return `https://discord.com/channels/${place}/${message.channel_id}/${message.id}`;
  } catch (error) {
    ctx.logger.debug({ err: loggableError(error) }, 'no link to the job’s message for its history');
    return undefined;
  }
}

/**
 * The link a job's end is recorded with, one rule for the live path and the sweep: asked only while its token reaches
 * the reply (an expired token's GET counts toward Discord's limit of invalid requests); none for a private job's
 * ephemeral reply, which no link opens.
 */
export function jobLinkOf(
  ctx: BotContext,
  job: { reply: LinkedReply | undefined; private: boolean | undefined; scopeId: string },
  target: { replyReachable(): boolean },
): (() => Promise<string | undefined>) | undefined {
  const { reply, scopeId } = job;
  if (!reply || job.private === true) return undefined;
  return async () => (target.replyReachable() ? linkToReply(ctx, reply, scopeId) : undefined);
}
