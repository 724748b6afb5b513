import { InteractionContextType, InteractionType, MessageFlags, Routes, type APIGuildMember, type BaseInteraction, type ButtonInteraction, type ModalSubmitInteraction } from 'discord.js';
import { isDmScope, mayCancel, PressRefusedError, say, sayWords, words, type JobOptions, type Requester, type Words } from '../runner/index.js';
import { acknowledge } from './acknowledge.js';
import { answerBudgetOf } from './answer-budget.js';
import type { BotContext } from './bot-context.js';
import { COMMAND_NAMES } from './command-words.js';
import { encodeCustomId, type CustomIdData } from './custom-ids.js';
import { editPromptModal } from './edit-modal.js';
import { keptOutput, madeCount, whyNotRunAgain } from './job-rules.js';
import type { FinalShown, JobRecord } from './JobRecordStore.js';
import { isRunning } from '../state/index.js';
import { loggableError } from './loggable-error.js';
import { isPersonalContext, requesterOf, scopeOf } from './requester.js';
import { refuseInputPrivately, refusePrivately } from './refuse-privately.js';
import { startJob } from './start-job.js';
import { showClickedLeftover } from './sweep-interrupted.js';
import { showKeptEnd } from './show-kept-end.js';
import { declaredBytesOf, InputImageError } from './download-images.js';
import { DISCORD_ERRORS, discordErrorCode } from './discord-facts.js';
import type { ImagesToFetch } from '../runner/index.js';

const TOO_OLD = words('discord.button.too_old', COMMAND_NAMES);

/**
 * A private answer to a button (or form), in the member's language: its first answer, or a follow-up once it was
 * deferred. `mark` leads it: ✋ for a refusal, ⚠️ for a failure on the bot's side.
 */
export async function tell(ctx: Pick<BotContext, 'logger'>, interaction: ButtonInteraction | ModalSubmitInteraction, what: Words, mark = '✋'): Promise<void> {
  const answer = { content: `${mark} ${sayWords(interaction.locale, what)}`, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } } as const;
  await acknowledge('button: explain', () => (interaction.deferred || interaction.replied ? interaction.followUp(answer) : interaction.reply(answer)), ctx.logger);
}

/**
 * A press the bot refused itself, before the runner is asked, for what its job no longer has or is not, or for who
 * pressed it: logged once and told privately (`refuseInputPrivately`), as a button's answer (`tell`: after a deferral too).
 */
function refusePress(ctx: BotContext, interaction: ButtonInteraction, refusal: InputImageError | PressRefusedError): Promise<void> {
  return refuseInputPrivately(ctx, interaction, refusal, () => tell(ctx, interaction, refusal.words));
}

/**
 * A button whose job's kept images are gone (past their day, pushed out by newer ones, never kept), found before the
 * runner is asked: refused as the images the bot refused itself (`no_images`, as the same images found gone once the
 * job is admitted are).
 */
function refuseImagesGone(ctx: BotContext, interaction: ButtonInteraction): Promise<void> {
  return refusePress(ctx, interaction, new InputImageError('no_images', TOO_OLD));
}

/**
 * Why a Reroll or Retry cannot send its job again, by the one rule (`whyNotRunAgain`), as the refusal of its code: its
 * prompt erased (`prompt_erased`, a press refused), an edit's kept images gone (`no_images`, as the images the bot
 * refused itself).
 */
function runAgainRefusal(record: JobRecord): InputImageError | PressRefusedError | undefined {
  const why = whyNotRunAgain(record);
  if (!why) return undefined;
  return why.code === 'no_images' ? new InputImageError(why.code, why.words) : new PressRefusedError(why.code, why.words);
}

/** Reroll, Retry, Edit, Cancel and Delete. What they need comes from the store (`record`, read once by the router), so they work after a restart. */
export async function handleButton(ctx: BotContext, interaction: ButtonInteraction, id: CustomIdData, record: JobRecord | undefined): Promise<void> {
  // Its record gone (past its day, deleted): told as too old, and logged so.
  if (!record) return refusePress(ctx, interaction, new PressRefusedError('job_gone', TOO_OLD));
  // A custom_id is only a string: one carrying another server's key must not reach that server's job (its inputs, its
  // budget). Told as a job gone, logged as what it is.
  const by = await pressedBy(ctx, record, interaction, id.action);
  if (!by) return refusePress(ctx, interaction, new PressRefusedError('job_other_scope', TOO_OLD));
  if ('refused' in by) return refuseWho(ctx, interaction, by);
  switch (id.action) {
    case 'reroll':
    case 'retry':
      return runAgain(ctx, interaction, record, id.action, by);
    case 'edit':
      return openEdit(ctx, interaction, record, id.index ?? 0, by);
    case 'cancel':
      return cancel(ctx, interaction, record, by);
    case 'delete':
      return deleteResult(ctx, interaction, record, by);
    default:
      // An id of ours that names no action a button has (a form's, on a button an older version left).
      return refusePress(ctx, interaction, new PressRefusedError('unknown_button', words('discord.button.unknown')));
  }
}

/**
 * Reroll posts a new reply; Retry reuses the message it is on — unless its job made images and was charged for them (a
 * failure or cancellation that came with some: its record's `made`, as its message shows them), or it is pressed by
 * someone other than the job's member (as their Reroll, the run is theirs): then it posts a new reply, leaving that
 * message, its images and its Delete as they were. The clicker is the requester (their budget). Its member's Retry
 * runs the job once: its member's first press takes the job's record over (`takeRetry`) before anything is admitted or charged;
 * any other press of theirs (a double click, two at once, a client that did not refresh) is told privately, and nothing
 * is sent: once the first press's job started, that it ran (`already_retried`); while it is still starting (the intake
 * may yet refuse it), to press again in a moment if it does not run. Another member's Retry takes nothing over: it is
 * their new job, as their Reroll is (their defaults, private results included), so it never takes the member's Retry away.
 */
async function runAgain(ctx: BotContext, interaction: ButtonInteraction, record: JobRecord, action: 'reroll' | 'retry', requester: Requester): Promise<void> {
  // Its member erased their prompts (`forget`), or an edit whose images are no longer kept: nothing is left to send again.
  const refusal = runAgainRefusal(record);
  if (refusal) return refusePress(ctx, interaction, refusal);
  // Images gone (past their day, or pushed out by newer ones) refuse before any answer, privately; images that lapse
  // after this look are still refused by their read, once the job is admitted.
  // That look waits only for what is left of the press's answer budget: a state too slow is told as a failure, to press again.
  if (record.kind === 'edit') {
    const kept = await readInTime(ctx, interaction, () => ctx.store.inputsKept(record), 'its kept images');
    if (kept === undefined) return;
    if (!kept) return refuseImagesGone(ctx, interaction);
  }
  const images: ImagesToFetch | undefined =
    record.kind === 'edit'
      ? {
          // Read once the job is admitted (their sizes as saved hold room in the queue until then).
          declaredBytes: declaredBytesOf(record.inputs),
          fetch: async () => {
            const kept = await ctx.store.readInputs(record.key);
            if (kept.length === 0) throw new InputImageError('no_images', TOO_OLD);
            return kept;
          },
        }
      : undefined;
  // A private job's Reroll and Retry are private; a public job's stays public when its member presses it, and by another
  // member follows their default (their new job, as their own are: private when theirs is). Its own member's Reroll or Retry sends it again as it was sent (its options hold the defaults it
  // took; no note of those it could not take again); another member's takes their defaults where it chose nothing.
  // Whoever's job it is, a refusal's advice names no option a button lacks (`again`).
  const own = record.requester.userId === interaction.user.id;
  const privately = record.private === true ? true : own ? false : undefined;
  const job = { kind: record.kind, prompt: record.prompt, options: record.options, images, requester, private: privately, memberDefaults: own ? ('previews' as const) : true, again: true };
  // The job's paid images (its record says how many it made, saved or not) are not replaced by the retry, nor is the
  // message of another member's job: its member's still, with their Delete.
  const firstAnswer = action === 'reroll' || !own || madeCount(record) > 0 ? 'reply' : 'update';
  // Another member's Retry is their own new job, as their Reroll is: it takes nothing of the job's record, so the job's
  // own member's Retry is still theirs (a double click of theirs runs twice, as a double Reroll does).
  if (action === 'reroll' || !own) {
    await startJob(ctx, interaction, job, firstAnswer);
    return;
  }
  const take = ctx.store.takeRetry(record.key, interaction.id);
  const taken = await readInTime(ctx, interaction, () => take, 'its Retry');
  if (taken === undefined) {
    // Told to press again: a take answered too late is given back, so that press is not refused as a second one.
    void take.then((late) => (late === 'taken' ? ctx.store.giveBackRetry(record.key, interaction.id) : undefined)).catch(() => undefined);
    return;
  }
  if (taken === 'retried') return refusePress(ctx, interaction, new PressRefusedError('already_retried', words('discord.button.already_retried')));
  // Another press of theirs is starting it (at the intake still, which may refuse it): not told it ran, as it may not;
  // told to press again in a moment if it does not — once that press is refused, it is given back, and theirs runs.
  if (taken === 'starting') return tell(ctx, interaction, words('discord.button.retry_starting'));
  // Its take is marked started as the last step before its job is handed to the runner (`beforeStart`), so before anything
  // of it can reach the service; a mark that cannot be written (after a few tries) refuses the press privately, nothing
  // sent. Unmarked, nothing was handed (refused by the intake, answered and then not started, its first answer failed,
  // its mark failed): its Retry is the member's again. Marked, it is spent whatever fails after (a record write, a read):
  // given back only when the runner answered that the job did not start (an edit's images too large, the bot stopping).
  let marked = false;
  const beforeStart = async () => {
    const mark = await ctx.store.retryStarted(record.key, interaction.id);
    // The take lapsed and another press took it meanwhile: that press runs the job (or ran it).
    if (mark === 'held') throw new PressRefusedError('already_retried', words('discord.button.already_retried'));
    // The take lapsed, and the press that took it since gave it back (refused): nothing ran, so a press again runs it.
    if (mark === 'free') throw new PressRefusedError('retry_starting', words('discord.button.retry_starting'));
    marked = true;
  };
  let started: boolean | undefined;
  try {
    started = await startJob(ctx, interaction, { ...job, beforeStart }, firstAnswer);
  } finally {
    if (!marked || started === false) {
      await ctx.store.giveBackRetry(record.key, interaction.id).catch((error: unknown) => ctx.logger.warn({ err: loggableError(error), jobKey: record.key }, 'could not give back the Retry of a job that did not run again'));
    }
  }
}

/**
 * The Edit button of a result: the runner's intake for a form (who, where, private results for a private result's edit,
 * which is private too, a budget left), then the modal asking what to change.
 */
async function openEdit(ctx: BotContext, interaction: ButtonInteraction, record: JobRecord, index: number, requester: Requester): Promise<void> {
  if (!keptOutput(record, index)) return refuseImagesGone(ctx, interaction);
  const title = say(interaction.locale, 'discord.edit.title_result', { images: madeCount(record), index: index + 1 });
  await ctx.runner.requestForm(
    requester,
    {
      refuse: (reason) => refusePrivately(ctx, interaction, reason),
      accept: async () => {
        await acknowledge('edit: modal', () => interaction.showModal(editPromptModal(encodeCustomId({ action: 'edit-result', key: record.key, index }), title, interaction.locale)), ctx.logger);
      },
    },
    { private: record.private === true ? true : undefined, answerBy: answerBudgetOf(interaction).endsAt },
  );
}

/**
 * What a Cancel on a job its process left tells the member when it did not show that job's end in the message clicked:
 * it ended (its end shown long ago: marked so, its message left as it was); another path shows its end
 * now, here or in a new message (this process’s sweep, or that of another live process that claimed it); or nothing could be done now (the
 * claim, a post or a mark failed: the record is left as it was, and a Cancel pressed again tries again).
 */
const LEFTOVER_NOT_SHOWN: Record<Exclude<Awaited<ReturnType<typeof showClickedLeftover>>, 'shown'>, Words> = {
  ended: words('discord.button.finished'),
  busy: words('discord.button.being_shown'),
  elsewhere: words('discord.button.being_shown'),
  left: words('discord.button.not_updated'),
  unclaimed: words('discord.button.not_updated'),
};

async function cancel(ctx: BotContext, interaction: ButtonInteraction, record: JobRecord, by: Requester): Promise<void> {
  // Its end reached no message (the channel refused it too): its Cancel, left on the reply, shows that end privately.
  if (!isRunning(record) && record.unshown) return showUnshownEnd(ctx, interaction, record, record.unshown, by);
  const info = record.runnerJobId ? ctx.runner.get(record.runnerJobId) : undefined;
  // Recorded as it was answered and not started yet here (an edit's images downloading): no leftover of a gone process.
  // Its looks at who holds the job wait only for what is left of the press's answer budget; one that fails or does not
  // answer in time cannot tell, and is told as a failure, to press again (never taken for "not held here").
  if (!info && !record.runnerJobId && isRunning(record)) {
    const here = await readInTime(ctx, interaction, () => ctx.store.heldHere(record.key), 'who runs its job');
    if (here === undefined) return;
    if (here) return tell(ctx, interaction, words('discord.button.not_updated'));
  }
  if (!info) {
    // Running on another replica: the same rule as here, from the record, then that replica cancels it (its reply shows it).
    const elsewhere = await readInTime(ctx, interaction, () => ctx.store.runsElsewhere(record.key), 'who runs its job');
    if (elsewhere === undefined) return;
    if (elsewhere) return cancelElsewhere(ctx, interaction, record, by);
    // The runner does not know the job: the bot restarted while it ran, or its runner forgot it long after it ended
    // (its record left running, its view's mark failed). Shown here as the sweep shows such a record: the end it kept
    // (a result, made and charged, is not offered a Retry), else "stopped when the bot restarted" with Retry — once
    // claimed here through the sweep's claim, so a sweep on another replica does not show it too.
    if (isRunning(record)) {
      if ((await acknowledge('cancel: left over', () => interaction.deferUpdate(), ctx.logger)) === 'expired') return;
      const clicked = { applicationId: interaction.applicationId, token: interaction.token, issuedAt: interaction.createdTimestamp, userId: interaction.user.id };
      const shown = await showClickedLeftover(ctx, ctx.botRest, record, clicked);
      if (shown === 'shown') return;
      // Not shown here: the member is told privately why, truthfully (its end shown long ago: a refusal, logged so).
      if (shown === 'ended') return refusePress(ctx, interaction, new PressRefusedError('job_finished', LEFTOVER_NOT_SHOWN[shown]));
      return tell(ctx, interaction, LEFTOVER_NOT_SHOWN[shown]);
    }
    return refusePress(ctx, interaction, new PressRefusedError('job_finished', words('discord.button.finished')));
  }
  if (info.status !== 'queued' && info.status !== 'running') return refusePress(ctx, interaction, new PressRefusedError('job_finished', words('discord.button.finished')));
  if (!ctx.runner.cancel(info.id, by)) {
    // Every image has arrived (billed, about to complete), or the presser is neither its member nor an admin.
    const refusal = mayCancel(info.requester, by)
      ? new PressRefusedError('job_finished', words('discord.button.too_late_to_cancel'))
      : new PressRefusedError('not_requester', words('discord.button.only_requester', { user: `<@${info.requester.userId}>`, action: 'cancel' }));
    return refusePress(ctx, interaction, refusal);
  }
  // The job's own reply shows the cancellation.
  await acknowledge('cancel: defer update', () => interaction.deferUpdate(), ctx.logger);
}

/**
 * A Cancel left on the reply of a job whose end no message took (`JobRecord.unshown`): that end shown privately
 * (`showKeptEnd`) to its member, or an admin — who may cancel a job may see its end; anyone else is refused privately
 * (`not_requester`) and shown nothing of it. Answered first with a private deferral (Discord's 3 s: kept images are read).
 */
async function showUnshownEnd(ctx: BotContext, interaction: ButtonInteraction, record: JobRecord, unshown: FinalShown, by: Requester): Promise<void> {
  if (!mayCancel(record.requester, by)) return refusePress(ctx, interaction, notRequester(record, 'cancel'));
  if ((await acknowledge('cancel: show the end privately', () => interaction.deferReply({ flags: MessageFlags.Ephemeral }), ctx.logger)) === 'expired') return;
  const pressed = { applicationId: interaction.applicationId, token: interaction.token, issuedAt: interaction.createdTimestamp, userId: interaction.user.id };
  if (!(await showKeptEnd(ctx, record, unshown, pressed))) await tell(ctx, interaction, words('error.on_my_side'), '⚠️');
}

/** The refusal of a press of a job's Cancel or Delete by someone who is neither its member nor an admin. */
function notRequester(record: JobRecord, action: 'cancel' | 'delete'): PressRefusedError {
  return new PressRefusedError('not_requester', words('discord.button.only_requester', { user: `<@${record.requester.userId}>`, action }));
}

async function cancelElsewhere(ctx: BotContext, interaction: ButtonInteraction, record: JobRecord, by: Requester): Promise<void> {
  if (!mayCancel(record.requester, by)) return refusePress(ctx, interaction, notRequester(record, 'cancel'));
  // Answered first (Discord's 3 s): the ask goes through Redis, and the job's own reply shows the cancellation.
  if ((await acknowledge('cancel: defer update', () => interaction.deferUpdate(), ctx.logger)) === 'expired') return;
  if (!(await ctx.askHolderToCancel(record.key, by))) {
    await tell(ctx, interaction, words('discord.button.runs_elsewhere'));
  }
}

/**
 * Deletes a result message, and its images with it, for the person who asked
 * for the job or an admin of the server (who may cancel it may delete it).
 */
async function deleteResult(ctx: BotContext, interaction: ButtonInteraction, record: JobRecord, by: Requester): Promise<void> {
  if (!mayCancel(record.requester, by)) return refusePress(ctx, interaction, notRequester(record, 'delete'));
  // Already gone (a second click of the same Delete, or deleted by hand meanwhile): what was asked is done. Discord
  // says so to the click's answer (no message left to update) or to the deletion.
  const done = async (step: () => Promise<unknown>): Promise<'gone' | 'ok' | 'expired'> =>
    step().then(
      (outcome) => (outcome === 'expired' ? 'expired' : 'ok'),
      (error: unknown) => {
        if (discordErrorCode(error) !== DISCORD_ERRORS.unknownMessage) throw error;
        return 'gone';
      },
    );
  const answered = await done(() => acknowledge('delete: defer update', () => interaction.deferUpdate(), ctx.logger));
  if (answered === 'expired') return;
  const gone = answered === 'gone' || (await done(() => interaction.deleteReply())) === 'gone';
  ctx.logger.info({ jobKey: record.key, by: `discord:${by.userId}`, ...(gone && { alreadyGone: true }) }, 'a result message was deleted');
}

/** The record was made in the server (or, outside a server, the DM) the interaction comes from. */
export function inScope(record: JobRecord, interaction: BaseInteraction): boolean {
  return record.requester.platform === 'discord' && record.requester.scopeId === scopeOf(interaction);
}

/**
 * A private server job's own message in its member's DM: its result, or its "stopped when the bot restarted", sent
 * there once its token expired (or a job's answer to a press of such a message there). Only its requester is shown
 * it, so only their press there acts on it — taken even while DMs are off (`DISCORD_USER_INSTALLS`), as the job is not
 * a DM job but their server's. A command's answer listing the job (`/imagine-history` asked in the DM) is not that
 * message: its Reroll runs where it is clicked, as any history Reroll.
 */
export function isOwnPrivateJobInDm(record: JobRecord, interaction: BaseInteraction): boolean {
  return (
    record.requester.platform === 'discord' &&
    record.private === true &&
    !isDmScope(record.requester.scopeId) &&
    record.requester.userId === interaction.user.id &&
    interaction.context === InteractionContextType.BotDM &&
    !onCommandAnswer(interaction)
  );
}

/** The button (or the form opened from it) is on a slash command's answer, such as `/imagine-history`'s list. */
function onCommandAnswer(interaction: BaseInteraction): boolean {
  const message = interaction.isMessageComponent() || interaction.isModalSubmit() ? interaction.message : null;
  return message?.interactionMetadata?.type === InteractionType.ApplicationCommand;
}

/**
 * A press that is the job's but is refused, with what the member is told privately; `refusal` when it is the member's
 * (`not_member`), to log in the server the press counts in — a read that failed is not, and was logged as it failed.
 */
export interface RefusedPress {
  refused: Words;
  refusal?: { error: PressRefusedError; scopeId: string } | undefined;
}

/** Tells a refused press (or its form) privately: logged once as the member's (`refuseInputPrivately`) when it is theirs. */
export function refuseWho(ctx: BotContext, interaction: ButtonInteraction | ModalSubmitInteraction, by: RefusedPress): Promise<void> {
  const answer = () => tell(ctx, interaction, by.refused);
  return by.refusal ? refuseInputPrivately(ctx, interaction, by.refusal.error, answer, by.refusal.scopeId) : answer();
}

/**
 * Who presses a job's button or sends its form, and where it counts — undefined where it may not act on that job
 * (another server's record: its inputs, its budget). In the job's own server (or DM): the presser, there. On a private
 * server job's message in its member's DM (`isOwnPrivateJobInDm`): the member in that job's server and channel, under
 * that server's rules and budget, with the roles they have there now (`memberNow`; no admin) — a Reroll, Retry or Edit
 * refused when they are no longer a member, or their roles could not be read (their Delete and Cancel are theirs still). A member's Reroll of their own job made elsewhere (from
 * `/imagine-history`): a new job where it is pressed, on this place's rules and budget. A job made outside the servers
 * the bot is in (a DM, a user install), pressed in its own channel by someone else: that presser, on their own budget
 * (their Delete or Cancel is refused as anyone else's).
 */
export async function pressedBy(
  ctx: Pick<BotContext, 'adminRoleIds' | 'botRest' | 'logger'>,
  record: JobRecord,
  interaction: BaseInteraction,
  action: CustomIdData['action'],
): Promise<Requester | RefusedPress | undefined> {
  if (record.requester.platform !== 'discord') return undefined;
  if (isOwnPrivateJobInDm(record, interaction)) {
    const { channelId, parentChannelId, scopeId } = record.requester;
    const there = { ...requesterOf(interaction, ctx.adminRoleIds), channelId, parentChannelId, scopeId, isAdmin: false };
    // Their Delete and Cancel spend nothing and need no roles: theirs even once they left the server.
    if (action === 'delete' || action === 'cancel') return { ...there, roleIds: [] };
    const member = await memberNow(ctx, scopeId, interaction);
    if ('refused' in member) return member;
    return { ...there, roleIds: member.roles };
  }
  const presser = requesterOf(interaction, ctx.adminRoleIds);
  if (inScope(record, interaction)) return presser;
  if (action === 'reroll' && record.requester.userId === presser.userId) return presser;
  const outsideServers = isDmScope(record.requester.scopeId) && isPersonalContext(interaction) && record.requester.channelId === presser.channelId;
  return outsideServers ? presser : undefined;
}

/**
 * A member's roles in a server as Discord has them now (`GET /guilds/{guild}/members/{user}`), for a press made
 * outside it: one who left, was kicked or banned, is refused, and a role given or taken since the job counts. Read
 * within what is left of the press's answer budget (answer-budget.ts: its claim and job record came first); no time
 * left, Discord not answering in time, or failing, refuses the press privately rather than run it on roles that may be
 * stale.
 */
async function memberNow(ctx: Pick<BotContext, 'botRest' | 'logger'>, guildId: string, interaction: BaseInteraction): Promise<{ roles: string[] } | RefusedPress> {
  const userId = interaction.user.id;
  const budget = answerBudgetOf(interaction);
  const waitedMs = budget.timeLeft();
  try {
    const member = (await budget.within(() => ctx.botRest.get(Routes.guildMember(guildId, userId)), 'Discord')) as APIGuildMember;
    return { roles: [...member.roles] };
  } catch (error) {
    if (discordErrorCode(error) === DISCORD_ERRORS.unknownMember) {
      const refused = words('discord.button.not_member', { why: 'gone' });
      return { refused, refusal: { error: new PressRefusedError('not_member', refused), scopeId: guildId } };
    }
    ctx.logger.warn({ err: loggableError(error), guildId, userId, waitedMs }, 'refused a press of a server job in a DM: its member’s roles there could not be read');
    return { refused: words('discord.button.not_member', { why: 'unknown' }) };
  }
}

/**
 * A read before a press's first answer, within what is left of its answer budget: its answer, or undefined once the
 * press was told privately that it could not be read (`tellUnread`).
 */
async function readInTime<T>(ctx: Pick<BotContext, 'logger'>, interaction: ButtonInteraction, read: () => Promise<T>, what: string): Promise<T | undefined> {
  try {
    return await answerBudgetOf(interaction).within(read, 'the state store');
  } catch (error) {
    await tellUnread(ctx, interaction, error, { what });
    return undefined;
  }
}

/**
 * What a press (a button, or the form opened from one) is answered when what it needs could not be read before its
 * first answer (its job record, an edit's kept images, who runs its job: the read failed, or did not answer within what
 * is left of its answer budget): logged with `about`, and its member told privately that something went wrong on the
 * bot's side, to press again in a moment. Nothing is started.
 */
export async function tellUnread(ctx: Pick<BotContext, 'logger'>, interaction: ButtonInteraction | ModalSubmitInteraction, error: unknown, about: Record<string, unknown>): Promise<void> {
  ctx.logger.warn({ err: loggableError(error), ...about }, 'could not read what a press needs; told its member privately');
  await tell(ctx, interaction, words('error.on_my_side'), '⚠️');
}

/** The options of an edit of a finished job's image: the same look, one image. */
export function editOptionsFrom(record: JobRecord): JobOptions {
  const { n: _n, ...rest } = record.options;
  return rest;
}
