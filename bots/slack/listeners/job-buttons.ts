import type { App, BlockAction, ButtonAction, Context } from '@slack/bolt';
import { openEditModal, privateAnswerVia, type BotContext } from '../bot-context.js';
import { finishedJobNote } from '../finished-job-note.js';
import { imagesOf } from '../input-images.js';
import { ACTIONS, readCancelValue } from '../render-job.js';
import { refuseInput } from '../refuse-input.js';
import { slackErrorCode } from '../slack-error-code.js';
import { ownDirectMessages } from '../own-direct-messages.js';
import { askedInDirectMessages } from '../slack-text.js';
import type { SavedRequest } from '../RequestStore.js';
import { mayCancel, PressRefusedError, say, words, type Requester } from '../../runner/index.js';
import { promptErased } from '../../state/index.js';
import { localeIn } from '../user-locales.js';
import { formBudget } from '../answer-by.js';
import type { Notifier } from '../SlackJobView.js';

/**
 * The buttons of a job: Cancel on its message while it runs, Reroll, Edit and
 * Delete on the message right after its images once it finished. Each works
 * from its value alone (a job id, or the id of a request saved in the data
 * folder), so they keep working after a restart: Cancel stops a queued or
 * running job (its owner or an admin), and on a job that finished says so and
 * where its buttons are; Reroll runs the same request again for whoever clicks
 * it (a job asked in another member's direct messages: in the clicker's own), Edit opens the edit modal on the job's images and Delete deletes the job's
 * message, its images with their caption, the message with their buttons, and
 * the previews in its thread (each its owner or an admin, as for Cancel).
 */
/**
 * A saved request acts only for the workspace it was made in: a button
 * pressed from another workspace (a channel shared with Slack Connect) must
 * not re-run its files there or charge that workspace for them. `elsewhere`
 * when the request is kept but is another workspace's (the member is told so,
 * not that it is gone); undefined when it is not kept.
 */
function inScope(request: SavedRequest | undefined, body: BlockAction): SavedRequest | 'elsewhere' | undefined {
  const teamId = body.team?.id ?? body.user.team_id;
  if (!request) return undefined;
  return request.teamId === teamId ? request : 'elsewhere';
}

/** What a member of another workspace is told when they press a job's button in a shared channel (Discord's code for a job of another scope). */
function otherWorkspaceRefusal(context: BotContext): PressRefusedError {
  return new PressRefusedError('job_other_scope', words('slack.button.other_workspace', { command: `\`${context.commands.imagine}\`` }));
}

/**
 * The message that shared a job's final images with their caption: beside the job's message, or in the thread the
 * job was asked in. Found by its first file among the messages after the job's; undefined when it is not there.
 */
async function resultMessageTs(client: App['client'], request: SavedRequest): Promise<string | undefined> {
  const first = request.outputFiles[0]?.id;
  if (!first || !request.messageTs) return undefined;
  try {
    const result = request.threadTs
      ? await client.conversations.replies({ channel: request.channelId, ts: request.threadTs, limit: 200 })
      : await client.conversations.history({ channel: request.channelId, oldest: request.messageTs, limit: 200 });
    return result.messages?.find((m) => m.ts !== request.messageTs && (m.files ?? []).some((f) => f.id === first))?.ts;
  } catch {
    return undefined;
  }
}

/**
 * Where a job's Reroll or Edit runs for whoever pressed it: where it was asked, and in its thread; but a job asked in a
 * member's direct messages with the app is theirs alone there — anyone else's (an admin's, from the workspace's
 * history) runs in the presser's own direct messages with the app, as if asked there, never in the member's
 * (`ownDirectMessages`: opened by Reroll at once, by Edit as its form is submitted). Decided from the saved request
 * alone: nothing is asked of Slack.
 */
function inOwnDirectMessages(request: SavedRequest, userId: string): boolean {
  return request.userId !== userId && askedInDirectMessages(request);
}

/**
 * The private answer to a press of a job's button: through the press's response URL (from a message), else in the
 * presser's direct messages with the app (from the Home tab, which gives none, or when that URL cannot be reached: a
 * job given up as it starts, or refused, is never left untold).
 */
function answerOfPress(context: BotContext, auth: Context, body: BlockAction): Notifier {
  return privateAnswerVia(context, auth, { userId: body.user.id, responseUrl: body.response_url });
}

/**
 * What a press of a job's button (Cancel, Reroll, Edit, Delete) is answered when what it needs could not be read — the
 * job's saved request, or who runs its job (the state down, the data unreadable, or too slow for an Edit's form):
 * logged with `about`, and its member told privately that something went wrong on our side. Nothing is started, sent
 * or deleted; the press never ends in silence.
 */
async function tellUnread(context: BotContext, notify: Notifier, locale: string | undefined, error: unknown, about: { button: string; request?: string | undefined }): Promise<void> {
  context.logger.warn({ code: slackErrorCode(error), err: error instanceof Error ? error.name : undefined, ...about }, 'could not read what a press of a job’s button needs; its member is told privately');
  await notify(`:warning: ${say(locale, 'error.on_my_side')}`).catch((e: unknown) => context.logger.warn({ code: slackErrorCode(e), ...about }, 'could not tell a member that their press failed on our side'));
}

/**
 * The saved request a press of a job's button acts on, read once for the press (`read`: how it is waited for; an Edit's
 * within its form's budget): the request, undefined when it is not kept, or `answered` when the press was answered
 * here and nothing more is to follow — its read failed (`tellUnread`), or it is another workspace's (`inScope`: its
 * member is told so, not that it is gone, and it is logged once by the runner's one line: `refuseInput`).
 */
async function savedOfPress(
  context: BotContext,
  press: { body: BlockAction; notify: Notifier; actor: { teamId: string; userId: string; locale: string | undefined }; button: string; requestId: string },
  read: (ask: () => Promise<SavedRequest | undefined>) => Promise<SavedRequest | undefined> = (ask) => ask(),
): Promise<SavedRequest | undefined | 'answered'> {
  let saved: SavedRequest | undefined;
  try {
    saved = await read(() => context.store.get(press.requestId));
  } catch (error) {
    await tellUnread(context, press.notify, press.actor.locale, error, { button: press.button, request: press.requestId });
    return 'answered';
  }
  const request = inScope(saved, press.body);
  if (request !== 'elsewhere') return request;
  await refuseInput(context.logger, press.actor, otherWorkspaceRefusal(context), press.notify);
  return 'answered';
}

export function registerJobButtons(app: App, context: BotContext): void {
  const actorOf = (body: BlockAction, auth: Context) => ({
    userId: body.user.id,
    userName: body.user.name,
    teamId: body.team?.id ?? body.user.team_id ?? '',
    channelId: body.channel?.id ?? body.container?.channel_id ?? '',
    locale: localeIn(auth),
  });
  /** Who pressed a job's Edit or Delete, when they may: the member who asked for it, or an admin (as for Cancel); else undefined. */
  const ownerOrAdmin = (request: SavedRequest, body: BlockAction, auth: Context) => {
    const by = context.jobs.requester(actorOf(body, auth));
    const owner = context.jobs.requester({ userId: request.userId, teamId: request.teamId, channelId: request.channelId });
    return mayCancel(owner, by) ? by : undefined;
  };

  app.action<BlockAction<ButtonAction>>(ACTIONS.cancel, async ({ ack, body, action, client, context: auth }) => {
    await ack();
    const { jobId, requestId } = readCancelValue(action.value ?? '');
    const actor = actorOf(body, auth);
    const requester = context.jobs.requester(actor);
    if (context.runner.cancel(jobId, requester)) return;
    // The job ended but its message never said so (Slack failed every try): the click brings it up to date.
    if (await context.jobs.repair(jobId)) return;
    const notify = answerOfPress(context, auth, body);
    // Decided before it is answered: what it needs (the job's saved request, who runs it) unread is told as trouble on
    // our side; another workspace's job (a channel shared with Slack Connect), running or not, is told so, as its other
    // buttons are. Its saved request is read once, here, for all that follows.
    const saved = requestId ? await savedOfPress(context, { body, notify, actor, button: 'cancel', requestId }) : undefined;
    if (saved === 'answered') return;
    let refusal: PressRefusedError | undefined;
    try {
      refusal = await cancelRefusal(jobId, requestId, saved, client, actor, requester);
    } catch (error) {
      await tellUnread(context, notify, actor.locale, error, { button: 'cancel', request: requestId });
      return;
    }
    // Logged once by the runner's one line and told privately (`refuseInput`), with Discord's codes for the same.
    if (refusal) await refuseInput(context.logger, actor, refusal, notify);
  });

  /**
   * Why a Cancel stopped nothing here, as its presser is told it privately (`saved`: its job's saved request, of the
   * presser's workspace, as the press read it): the job finished or no longer runs (`job_finished`), or the presser
   * neither asked for it nor is an admin (`not_requester`); undefined when another replica was asked to cancel it.
   */
  async function cancelRefusal(jobId: string, requestId: string | undefined, saved: SavedRequest | undefined, client: App['client'], actor: ReturnType<typeof actorOf>, requester: Requester): Promise<PressRefusedError | undefined> {
    const info = context.runner.get(jobId);
    // The job finished while its message still shows Cancel (its "Done" waits for the workspace's budget): where its buttons are.
    const finished = await finishedJobNote({ client, request: saved, runnerStatus: info?.status });
    if (finished) return new PressRefusedError('job_finished', finished);
    // Not a job of this process: with Redis, another replica may run it; it then shows the cancellation in the job's message.
    const elsewhere = !info && requestId ? await context.jobs.cancelElsewhere(requestId, saved, actor.teamId, requester) : undefined;
    if (elsewhere === 'asked') return undefined;
    return elsewhere !== 'not_allowed' && (!info || (info.status !== 'queued' && info.status !== 'running'))
      ? new PressRefusedError('job_finished', words('slack.button.not_running'))
      : new PressRefusedError('not_requester', words('slack.button.only_requester_cancel'));
  }

  app.action<BlockAction<ButtonAction>>(ACTIONS.reroll, async ({ ack, body, action, context: auth }) => {
    await ack();
    // From a message, the answer is private through its response URL; from the Home tab (no response URL), a direct message.
    await reroll(body, action, auth, answerOfPress(context, auth, body));
  });

  /**
   * A Reroll pressed (see `ACTIONS.reroll`): its job started for the presser, or they are told privately why not. Answered
   * at once, the press never ends in silence: a saved request that cannot be read is told as trouble on our side (nothing
   * was sent to the service), and whatever fails once its job is asked for is told by `SlackJobs.start` itself, once.
   */
  async function reroll(body: BlockAction<ButtonAction>, action: ButtonAction, auth: Context, notify: Notifier): Promise<void> {
    const presser = actorOf(body, auth);
    const request = await savedOfPress(context, { body, notify, actor: presser, button: 'reroll', requestId: action.value ?? '' });
    if (request === 'answered') return;
    // Refused before the runner is asked, logged once by the runner's one line and told privately (`refuseInput`): its
    // saved request gone (past its days, removed), or its member erased their prompts (forget) while it ran, or as it
    // started — nothing is left to send again.
    if (!request) {
      await refuseInput(context.logger, presser, new PressRefusedError('job_gone', words('slack.button.gone_reroll', { command: `\`${context.commands.imagine}\`` })), notify);
      return;
    }
    if (promptErased(request)) {
      await refuseInput(context.logger, presser, new PressRefusedError('prompt_erased', words('job.prompt_erased')), notify);
      return;
    }
    const { client, botToken } = context.workspace(auth);
    // A private job's Reroll is private too, under the rules of the channel it was asked in; a public one's is public when
    // its own member presses it, else it follows the clicker's default. Its own member's Reroll sends it again as it was
    // sent (its options hold the defaults it took; no note of those it could not take again); another member's takes
    // their defaults where it chose nothing. A job asked in a member's direct messages runs again in the clicker's own.
    const theirsAlone = inOwnDirectMessages(request, body.user.id);
    const channelId = theirsAlone ? await ownDirectMessages(context, client, body.user.id, notify, localeIn(auth)) : (request.askedIn ?? request.channelId);
    if (!channelId) return;
    const actor = { ...presser, channelId };
    const own = request.userId === actor.userId;
    let images;
    try {
      // An edit's files are downloaded again once the runner's intake admitted the job.
      images = request.kind === 'edit' ? imagesOf(request.inputFiles, { client, token: botToken, allowedHosts: context.allowedHosts }) : undefined;
    } catch (error) {
      // Its saved files refused before the runner is asked (none, too many): the line is the bot's.
      await refuseInput(context.logger, actor, error, notify);
      return;
    }
    await context.jobs.start({
      kind: request.kind,
      prompt: request.prompt,
      options: request.options,
      images,
      inputFiles: request.inputFiles,
      actor,
      threadTs: theirsAlone ? undefined : request.threadTs,
      notify,
      client,
      private: request.private ?? (own ? false : undefined),
      memberDefaults: own ? 'previews' : true,
      // Whoever's job it is, a refusal's advice names no option a button lacks.
      again: true,
    });
  }

  app.action<BlockAction<ButtonAction>>(ACTIONS.delete, async ({ ack, body, action, client, context: auth }) => {
    await ack();
    const locale = localeIn(auth);
    const notify = answerOfPress(context, auth, body);
    const actor = actorOf(body, auth);
    const request = await savedOfPress(context, { body, notify, actor, button: 'delete', requestId: action.value ?? '' });
    if (request === 'answered') return;
    // Refused before anything is deleted, logged once by the runner's one line and told privately (`refuseInput`): its
    // message no longer known (its saved request past its days, removed), or the press another member's.
    if (!request?.messageTs) {
      await refuseInput(context.logger, actor, new PressRefusedError('job_gone', words('slack.button.gone_delete')), notify);
      return;
    }
    const by = ownerOrAdmin(request, body, auth);
    if (!by) {
      await refuseInput(context.logger, actor, new PressRefusedError('not_requester', words('slack.button.only_requester_delete', { user: `<@${request.userId}>` })), notify);
      return;
    }
    try {
      const resultTs = await resultMessageTs(client, request);
      // The images first: a message deleted while they stay would leave them where nobody can reach them to delete.
      for (const file of request.outputFiles) await client.files.delete({ file: file.id });
      // Then their caption (prompt and cost), which Slack keeps when only the files are deleted, and the message with
      // their buttons: the one saved, and the one clicked (the same, unless the click came before it was saved).
      const around = new Map<string, { channel: string; ts: string }>();
      const add = (channel: string | undefined, ts: string | undefined) => channel && ts && ts !== request.messageTs && around.set(`${channel}/${ts}`, { channel, ts });
      add(request.channelId, resultTs);
      add(request.actionsMessage?.channelId, request.actionsMessage?.ts);
      add(body.container?.channel_id as string | undefined, body.container?.message_ts as string | undefined);
      // Paced with the channel's other writes, as every write of the bot.
      const remove = (message: { channel: string; ts: string }) => context.writer.write(message.channel, { urgent: true, run: () => client.chat.delete(message) });
      for (const message of around.values()) {
        await remove(message).catch((error: unknown) => context.logger.warn({ code: slackErrorCode(error) }, 'could not delete a message of deleted images'));
      }
      // And the previews in the thread: drafts of the same images. One already gone (deleted by hand) does not stop the rest.
      for (const file of request.previewFiles) {
        await client.files.delete({ file: file.id }).catch((error: unknown) => context.logger.warn({ code: slackErrorCode(error) }, 'could not delete a preview of deleted images'));
      }
      await remove({ channel: request.channelId, ts: request.messageTs });
      context.logger.info({ request: request.id, by: `slack:${by.userId}` }, 'a result message was deleted');
    } catch (error) {
      context.logger.warn({ code: slackErrorCode(error) }, 'could not delete a result message');
      await notify(say(locale, 'slack.button.could_not_delete'));
    }
  });

  app.action<BlockAction<ButtonAction>>(ACTIONS.edit, async ({ ack, body, action, client, context: auth }) => {
    await ack();
    const locale = localeIn(auth);
    const notify = answerOfPress(context, auth, body);
    const actor = actorOf(body, auth);
    // Its saved request is read within the form's one budget (the trigger's 3 s, `formBudget`), the one the runner's
    // intake waits within after it (`answerBy`: its `endsAt`): a state that does not answer by then is told privately,
    // in time, as trouble on our side; no form opens.
    // Also when it was not read before the form had to open: no form opens.
    const budget = formBudget(auth);
    const request = await savedOfPress(context, { body, notify, actor, button: 'edit', requestId: action.value ?? '' }, (ask) => budget.within(ask));
    if (request === 'answered') return;
    // Refused before the runner is asked, logged once by the runner's one line and told privately (`refuseInput`): its
    // images gone (its saved request past its days, removed), or the press another member's.
    if (!request?.outputFiles.length) {
      await refuseInput(context.logger, actor, new PressRefusedError('job_gone', words('slack.button.gone_edit')), notify);
      return;
    }
    // An edit is paid by whoever presses it, on the images of the member who asked: theirs or an admin's to edit, as for Delete.
    if (!ownerOrAdmin(request, body, auth)) {
      await refuseInput(context.logger, actor, new PressRefusedError('not_requester', words('slack.button.only_requester_edit', { user: `<@${request.userId}>` })), notify);
      return;
    }
    // The runner's intake for a form (who, where, whether its job may be private here, a budget left) before the modal opens.
    // A private result's edit is private too (shown in the member's direct messages), under the rules of the channel it was asked in.
    // A job asked in another member's direct messages is edited in the presser's own, outside the member's conversation:
    // nothing is asked of Slack before the form opens (its trigger lasts 3 s), so those are opened as the form is
    // submitted; until then they go by the presser's id (Slack's name for a member's direct messages with the app; the
    // press's payload names only the conversation it was pressed in, the other member's), which `SlackJobs` takes for
    // their own direct messages, as the job will run: their private default does not make it private.
    const theirsAlone = inOwnDirectMessages(request, body.user.id);
    const channelId = theirsAlone ? body.user.id : (request.askedIn ?? request.channelId);
    await context.jobs.openForm({ ...actor, channelId }, notify, () =>
      openEditModal(context, client, body.trigger_id, notify, {
        channelId,
        threadTs: request.private || theirsAlone ? undefined : (request.threadTs ?? request.messageTs),
        files: request.outputFiles,
        responseUrl: body.response_url,
        private: request.private,
        inOwnDirectMessages: theirsAlone,
      }, locale),
      { private: request.private, answerBy: budget.endsAt },
    );
  });
}
