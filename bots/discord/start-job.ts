import { MessageFlags, type RepliableInteraction } from 'discord.js';
import { DEFAULTS } from 'pictor';
import { sayWords, type AdmittedJob, type ImagesToFetch, type InputImage, type JobIntent, type JobOptions, type Requester } from '../runner/index.js';
import { acknowledge } from './acknowledge.js';
import { answerBudgetOf } from './answer-budget.js';
import type { BotContext } from './bot-context.js';
import { OPTION_NAME_OF_FIELD } from './command-choices.js';
import { attachmentLimitOf } from './discord-facts.js';
import { jobLinkOf } from './job-links.js';
import { loggableError } from './loggable-error.js';
import { JobView } from './JobView.js';
import type { ReplyHandle } from './JobRecordStore.js';
import { refuseAfterAnswer, refusePrivately, type FirstAnswer } from './refuse-privately.js';
import { privacyOf, ReplyTarget } from './ReplyTarget.js';
import { publicLocaleOf } from './requester.js';

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
  /** `private:` as the member chose it (a Reroll or Retry: as the job was); undefined: their default. */
  private?: boolean | undefined;
  /** Which of the member's own defaults apply (only previews on their own Reroll or Retry): see `JobIntent.memberDefaults`. */
  memberDefaults?: JobIntent['memberDefaults'];
  /** Run again by a job's button (Reroll, Retry), whoever's job it is: see `JobIntent.again`. */
  again?: JobIntent['again'];
  /** Asked with a form (an edit modal submitted): see `JobIntent.inForm`. */
  inForm?: JobIntent['inForm'];
  /**
   * The last step before the admitted job is handed to the runner, so before anything of it can reach the service (its
   * member's Retry marks its take started): awaited by the runner as it starts the job (`AcceptedJob.beforeStart`), for
   * either kind at one place; one that throws is a failed start, logged once by the runner and told privately, nothing
   * sent or charged.
   */
  beforeStart?: (() => Promise<void>) | undefined;
}

/**
 * The one way a Discord entry point starts a job: one call to the runner's
 * intake, which decides everything that can refuse it before the first
 * answer. A refusal is that answer, private; an admitted job is answered in
 * public (`firstAnswer`), its images fetched, and that reply shows the job.
 * A job that then cannot start is told privately (`refuseAfterAnswer`). A job
 * that started is recorded for its buttons (spec and input images); a refused
 * one is not (refusals cannot fill the store or push out others' jobs).
 * Answers whether the job started.
 */
export async function startJob(ctx: BotContext, interaction: JobInteraction, job: JobRequest, firstAnswer: FirstAnswer): Promise<boolean> {
  const key = ctx.store.newKey();
  // Decided by the intake (the member's choice, or their default): what the first answer shows, and to whom.
  let admitted: AdmittedJob | undefined;
  // The images the job runs with, kept for its Reroll and Retry.
  let images = Array.isArray(job.images) ? job.images : [];
  const { kind, requester } = job;
  const toFetch = Array.isArray(job.images) ? undefined : job.images;
  /** The record written as the job was answered (`accept`): whether it was. */
  let recorded: Promise<boolean> | undefined;
  /** An edit's images, here: its runner job put on its record before they are handed to the runner, which may send them at once. */
  /** The job's record as the job was answered (`decided`): running (held by this process), with the reply to edit. */
  const recordOf = (decided: AdmittedJob) => ({
    key,
    kind,
    prompt: decided.prompt,
    options: decided.options,
    requester,
    status: 'running' as const,
    reply: replyOf(interaction),
    locale: localeOf(interaction, decided),
    ...(decided.private && { private: true }),
  });
  const withRunnerJob = async (fetched: InputImage[]): Promise<InputImage[]> => {
    if (admitted && (await recorded)) {
      await ctx.store.update(key, { runnerJobId: admitted.id }).catch((error: unknown) => ctx.logger.warn({ err: loggableError(error), jobKey: key }, 'could not put its runner job on the record of a job as its images came; it is put on once it starts'));
    }
    return fetched;
  };
  const handle = await ctx.runner.request(
    {
      kind: job.kind,
      prompt: job.prompt,
      options: job.options,
      requester: job.requester,
      style: job.style,
      private: job.private,
      memberDefaults: job.memberDefaults,
      again: job.again,
      inForm: job.inForm,
      // The intake's reads wait only for what is left of the interaction's one deadline: a refusal still goes out in time.
      answerBy: answerBudgetOf(interaction).endsAt,
      fieldNames: OPTION_NAME_OF_FIELD,
      images: toFetch
        ? {
            declaredBytes: toFetch.declaredBytes,
            fetch: async () => withRunnerJob((images = await toFetch.fetch())),
          }
        : job.images,
    },
    {
      refuse: (reason) => refusePrivately(ctx, interaction, reason),
      accept: async (decided) => {
        admitted = decided;
        // A private job's reply is ephemeral (a Retry updates the message it is on, which was made as its job was).
        const flags = decided.private ? MessageFlags.Ephemeral : undefined;
        const answer = () => (firstAnswer === 'update' && interaction.isMessageComponent() ? interaction.deferUpdate() : interaction.deferReply({ flags }));
        if ((await acknowledge(`${kind}: ${firstAnswer === 'update' ? 'defer update' : 'defer'}`, answer, ctx.logger)) === 'expired') return undefined;
        // Recorded at once, running (held by this process), with the reply to edit: a process that dies now — an edit's
        // images still downloading — leaves it to the next sweep, which says it stopped rather than leave "thinking…".
        // Its runner job is on it from before the runner can send it (the sweep finds its charge by it, and records its
        // end): here when the runner takes it next, else once its images are here (`withRunnerJob`); until then nothing
        // was sent, so nothing is charged or recorded. Its input images are added once the runner started it.
        recorded = ctx.store
          .add({ ...recordOf(decided), ...(!toFetch && { runnerJobId: decided.id }) })
          .then(
            () => true,
            (error: unknown) => (ctx.logger.warn({ err: loggableError(error), jobKey: key }, 'could not record a job as it was answered; it is recorded once it starts'), false),
          );
        await recorded;
        if (decided.ignoredDefaults) await tellIgnoredDefaults(ctx, interaction, decided);
        // The job's work (its images, its stream, its edits) after the other interactions' first answers asked before this one's.
        await ctx.firstAnswers.behind();
        const target = replyTargetOf(ctx, interaction, { private: decided.private, scopeId: requester.scopeId });
        const view = new JobView({
          target,
          // The job as sent (a house style applied): what its reply shows and its Reroll sends again.
          header: { key, kind, prompt: decided.prompt, n: decided.options.n ?? DEFAULTS.n, locale: localeOf(interaction, decided) },
          store: ctx.store,
          attachmentSizeLimit: attachmentLimitOf(interaction),
          logger: ctx.logger,
        });
        return {
          sink: view.sink,
          // Awaited by the runner as it starts the job (either kind, an edit's images here): one that throws is `fail`.
          beforeStart: job.beforeStart,
          historyKey: key,
          // Asked only while the reply's token lives (a job queued long may end after it); none for a private job.
          historyLink: jobLinkOf(ctx, { reply: interaction, private: decided.private, scopeId: requester.scopeId }, target),
          // Once the runner recorded the job's end: its record, marked ended by its view, is released; one the view could
          // not show or mark (a stop, a failed write) is left held for a sweep, which shows its end (the view's final,
          // kept with it) and does not record it again.
          onEndRecorded: () => ctx.store.markEndRecorded(key, view.final),
        };
      },
      fail: (reason) => refuseAfterAnswer(ctx, interaction, firstAnswer, reason),
    },
  );
  if (!handle || !admitted) {
    // Answered, then not started (its images could not be fetched, the bot stopping): told so privately, nothing
    // charged; its record goes, not to be swept as "stopped".
    if (await recorded) await ctx.store.remove(key).catch((error: unknown) => ctx.logger.warn({ err: loggableError(error), jobKey: key }, 'could not remove the record of a job that did not start'));
    return false;
  }
  // A button's read waits for this write (the runner's first update comes on a later turn): it reads the record with its kept images.
  await ctx.store.add({ ...recordOf(admitted), runnerJobId: handle.id, createdAt: handle.submittedAt }, images);
  // A forget landing between the acceptance and this write did not find the record: asked once it is written (a forget
  // marks first, then erases what is kept), the forget does here what it does to every record it finds.
  if (await ctx.runner.history?.forgotten(requester, handle.submittedAt)) {
    await ctx.store.forget(key).catch((error: unknown) => ctx.logger.warn({ err: loggableError(error), jobKey: key }, 'could not erase the prompt of a job its member forgot as it started'));
  }
  // Shown to its end by its view: a stop waits for it (within its grace).
  ctx.track(handle.done);
  return true;
}

/** The job's reply, as a later process can edit it (its token, for 15 minutes). */
/** The reply a later process edits, with where the job was asked (a sweep links a DM's or a user install's job as the live path does). */
function replyOf(interaction: JobInteraction): ReplyHandle {
  return { applicationId: interaction.applicationId, token: interaction.token, issuedAt: interaction.createdTimestamp, guildId: interaction.guildId };
}

/** The language of a job's messages: the server's for a public one (everyone in the channel reads it), the member's for a private one. */
function localeOf(interaction: JobInteraction, job: Pick<AdmittedJob, 'private'>): string {
  return job.private ? interaction.locale : publicLocaleOf(interaction);
}

/** The member's defaults this server's rules do not allow, which the job did without: told to them alone. */
async function tellIgnoredDefaults(ctx: BotContext, interaction: JobInteraction, job: AdmittedJob): Promise<void> {
  const content = `ℹ️ ${sayWords(interaction.locale, job.ignoredDefaults!)}`;
  await interaction.followUp({ content, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } }).catch((error: unknown) => ctx.logger.warn({ err: String(error) }, 'could not tell a member which of their defaults were not used'));
}

/** The target a job's updates are written to: the interaction's reply while its token lives, then the channel (or a DM). */
function replyTargetOf(ctx: BotContext, interaction: JobInteraction, job: Pick<AdmittedJob, 'private'> & { scopeId: string }): ReplyTarget {
  const userId = interaction.user.id;
  return new ReplyTarget({
    webhookRest: ctx.webhookRest,
    botRest: ctx.botRest,
    applicationId: interaction.applicationId,
    token: interaction.token,
    issuedAt: interaction.createdTimestamp,
    channelId: interaction.channelId ?? '',
    userId,
    locale: localeOf(interaction, job),
    attachmentSizeLimit: attachmentLimitOf(interaction),
    ...privacyOf(job),
    logger: ctx.logger,
    retryDelaysMs: ctx.replyRetryDelaysMs,
    stop: ctx.repliesGivenUp,
  });
}
