import type { BaseInteraction, REST } from 'discord.js';
import { DEFAULTS } from '../../src/index.js';
import { describeFailure, type InputImage, type JobHandle, type JobOptions, type Requester } from '../runner/index.js';
import type { BotContext } from './bot-context.js';
import { DISCORD_LIMITS } from './discord-facts.js';
import { InputImageError } from './download-images.js';
import { JobView } from './JobView.js';
import { renderFailure } from './render-job.js';
import { ReplyTarget } from './ReplyTarget.js';
import { loggableError } from './loggable-error.js';
import { recordInHistory } from './job-history.js';
import { isPersonalContext } from './requester.js';

/** An interaction that has been deferred (or updated): its token edits the reply that will show the job. */
export interface ReplyingInteraction extends Pick<BaseInteraction, 'context' | 'guildId' | 'authorizingIntegrationOwners'> {
  client: { rest: REST };
  applicationId: string;
  token: string;
  createdTimestamp: number;
  channelId: string | null;
  attachmentSizeLimit?: number | undefined;
}

export interface JobRequest {
  kind: 'generate' | 'edit';
  prompt: string;
  options: JobOptions;
  images?: InputImage[] | undefined;
  requester: Requester;
}

/** A reply target for an acknowledged interaction (also used to show problems before a job exists). */
export function replyTargetOf(ctx: BotContext, interaction: ReplyingInteraction, userId: string): ReplyTarget {
  return new ReplyTarget({
    webhookRest: ctx.webhookRest,
    botRest: interaction.client.rest,
    applicationId: interaction.applicationId,
    token: interaction.token,
    issuedAt: interaction.createdTimestamp,
    channelId: interaction.channelId ?? '',
    userId,
    // In DMs and user installs the bot may not post in the channel: past the token, results go to a DM with the user.
    fallback: isPersonalContext(interaction) ? 'dm' : 'channel',
    logger: ctx.logger,
  });
}

/**
 * Hands a job to the runner with a view of the interaction's reply as its
 * sink, then records it (spec and input images, for its buttons). A job the
 * runner refuses is not recorded: its reply says why and what to do, and
 * nothing is kept (refusals cannot fill the store or push out others' jobs).
 */
export async function startJob(ctx: BotContext, interaction: ReplyingInteraction, job: JobRequest): Promise<void> {
  const key = ctx.store.newKey();
  const view = new JobView({
    target: replyTargetOf(ctx, interaction, job.requester.userId),
    header: { key, kind: job.kind, prompt: job.prompt, n: job.options.n ?? DEFAULTS.n },
    store: ctx.store,
    attachmentSizeLimit: interaction.attachmentSizeLimit ?? DISCORD_LIMITS.defaultAttachmentBytes,
    logger: ctx.logger,
  });
  let handle: JobHandle;
  try {
    handle = await ctx.runner.submit({ kind: job.kind, prompt: job.prompt, options: job.options, images: job.images, requester: job.requester }, view.sink);
  } catch (error) {
    const failure = describeFailure(error);
    if (failure.code === 'internal_error') ctx.logger.error({ err: loggableError(error), jobKey: key }, 'the runner did not take a job');
    else ctx.logger.info({ jobKey: key, code: failure.code }, 'job refused');
    // No record, so no button: the message says what to do.
    await view.showFailure({ ...failure, retryable: false });
    return;
  }
  // Visible to buttons at once (the runner's first update comes on a later turn); saved to disk in the background of this await.
  const reply = { applicationId: interaction.applicationId, token: interaction.token, issuedAt: interaction.createdTimestamp };
  await ctx.store.add({ key, kind: job.kind, prompt: job.prompt, options: job.options, requester: job.requester, status: 'running', runnerJobId: handle.id, reply }, job.images ?? []);
  ctx.track(handle.done);
  // The member's history (`/imagine-history`), once the job has ended; stop() waits for it too. Without the input images: nothing here holds them while the job runs.
  const ended = { kind: job.kind, prompt: job.prompt, options: job.options, requester: job.requester };
  ctx.track(handle.done.then((final) => recordInHistory(ctx, interaction, ended, key, final)).catch(() => undefined));
}

/** Shows why input images were refused (nothing was started or spent); rethrows anything that is not such a refusal. */
export async function showInputProblem(
  ctx: BotContext,
  interaction: ReplyingInteraction,
  userId: string,
  job: { kind: 'generate' | 'edit'; prompt: string },
  error: unknown,
): Promise<void> {
  if (!(error instanceof InputImageError)) throw error;
  ctx.logger.info({ code: error.code, image: error.label }, 'input image refused');
  const header = { key: 'none', kind: job.kind, prompt: job.prompt, n: 1 };
  await replyTargetOf(ctx, interaction, userId).final([renderFailure(header, { code: error.code, message: error.message, retryable: false })]);
}

/** Shows why a job was refused before anything was fetched or started (nothing spent). */
export async function showRefusal(ctx: BotContext, interaction: ReplyingInteraction, userId: string, job: { kind: 'generate' | 'edit'; prompt: string }, error: unknown): Promise<void> {
  const failure = describeFailure(error);
  ctx.logger.info({ code: failure.code }, 'job refused before its images were fetched');
  const header = { key: 'none', kind: job.kind, prompt: job.prompt, n: 1 };
  await replyTargetOf(ctx, interaction, userId).final([renderFailure(header, { ...failure, retryable: false })]);
}
