import type { RepliableInteraction } from 'discord.js';
import { DEFAULTS } from 'pictor';
import type { ImagesToFetch, InputImage, JobOptions, Requester } from '../runner/index.js';
import { acknowledge } from './acknowledge.js';
import type { BotContext } from './bot-context.js';
import { OPTION_NAME_OF_FIELD } from './command-choices.js';
import { DISCORD_LIMITS } from './discord-facts.js';
import { linkToReply } from './job-history.js';
import { JobView } from './JobView.js';
import { refuseAfterAnswer, refusePrivately, type FirstAnswer } from './refuse-privately.js';
import { ReplyTarget } from './ReplyTarget.js';
import { isPersonalContext, publicLocaleOf } from './requester.js';

/** An interaction that can start a job (a command, a button, a modal): its first answer, then its token edits the job's reply. */
export type JobInteraction = RepliableInteraction & { attachmentSizeLimit?: number | undefined };

export interface JobRequest {
  kind: 'generate' | 'edit';
  prompt: string;
  options: JobOptions;
  requester: Requester;
  /** An edit's images: here already, or fetched once the runner admitted the job (room held for their reported bytes meanwhile). */
  images?: InputImage[] | ImagesToFetch | undefined;
  /** A house style the member picked (`style:`): the runner applies it; the reply, the history and Reroll show and send the job as sent. */
  style?: string | undefined;
}

/**
 * The one way a Discord entry point starts a job: one call to the runner's
 * intake, which decides everything that can refuse it before the first
 * answer. A refusal is that answer, private; an admitted job is answered in
 * public (`firstAnswer`), its images fetched, and that reply shows the job.
 * A job that then cannot start is told privately (`refuseAfterAnswer`). A job
 * that started is recorded for its buttons (spec and input images); a refused
 * one is not (refusals cannot fill the store or push out others' jobs).
 */
export async function startJob(ctx: BotContext, interaction: JobInteraction, job: JobRequest, firstAnswer: FirstAnswer): Promise<void> {
  const key = ctx.store.newKey();
  const locale = publicLocaleOf(interaction);
  const header = { key, kind: job.kind, prompt: job.prompt, n: job.options.n ?? DEFAULTS.n, locale };
  // The job as sent (a house style applied), once admitted: what its reply shows and its Reroll sends again.
  let sent = { prompt: job.prompt, options: job.options };
  const view = new JobView({
    target: replyTargetOf(ctx, interaction, job.requester.userId),
    header,
    store: ctx.store,
    attachmentSizeLimit: interaction.attachmentSizeLimit ?? DISCORD_LIMITS.defaultAttachmentBytes,
    logger: ctx.logger,
  });
  // The images the job runs with, kept for its Reroll and Retry.
  let images = Array.isArray(job.images) ? job.images : [];
  const toFetch = Array.isArray(job.images) ? undefined : job.images;
  const handle = await ctx.runner.request(
    {
      kind: job.kind,
      prompt: job.prompt,
      options: job.options,
      requester: job.requester,
      style: job.style,
      fieldNames: OPTION_NAME_OF_FIELD,
      images: toFetch ? { declaredBytes: toFetch.declaredBytes, fetch: async () => (images = await toFetch.fetch()) } : job.images,
    },
    {
      refuse: (reason) => refusePrivately(ctx, interaction, reason),
      accept: async (admitted) => {
        sent = { prompt: admitted.prompt, options: admitted.options };
        Object.assign(header, { prompt: sent.prompt, n: sent.options.n ?? DEFAULTS.n });
        const answer = () => (firstAnswer === 'update' && interaction.isMessageComponent() ? interaction.deferUpdate() : interaction.deferReply());
        if ((await acknowledge(`${job.kind}: ${firstAnswer === 'update' ? 'defer update' : 'defer'}`, answer, ctx.logger)) === 'expired') return undefined;
        return { sink: view.sink, historyKey: key, historyLink: () => linkToReply(ctx, interaction, job.requester.scopeId) };
      },
      fail: (reason) => refuseAfterAnswer(ctx, interaction, firstAnswer, reason),
    },
  );
  if (!handle) return;
  // Visible to buttons at once (the runner's first update comes on a later turn); saved to disk in the background of this await.
  const reply = { applicationId: interaction.applicationId, token: interaction.token, issuedAt: interaction.createdTimestamp };
  await ctx.store.add({ key, kind: job.kind, prompt: sent.prompt, options: sent.options, requester: job.requester, status: 'running', runnerJobId: handle.id, reply, locale }, images);
  ctx.track(handle.done);
}

/** The target a job's updates are written to: the interaction's reply while its token lives, then the channel (or a DM). */
function replyTargetOf(ctx: BotContext, interaction: JobInteraction, userId: string): ReplyTarget {
  return new ReplyTarget({
    webhookRest: ctx.webhookRest,
    botRest: interaction.client.rest,
    applicationId: interaction.applicationId,
    token: interaction.token,
    issuedAt: interaction.createdTimestamp,
    channelId: interaction.channelId ?? '',
    userId,
    locale: publicLocaleOf(interaction),
    // In DMs and user installs the bot may not post in the channel: past the token, results go to a DM with the user.
    fallback: isPersonalContext(interaction) ? 'dm' : 'channel',
    logger: ctx.logger,
  });
}
