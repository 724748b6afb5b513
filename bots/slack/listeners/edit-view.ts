import type { App, SlackViewAction } from '@slack/bolt';
import { ephemeralVia, privateAnswerVia, type BotContext } from '../bot-context.js';
import { EDIT_VIEW_ID, MODAL_FIELD_NAMES, readEditSubmission } from '../edit-modal.js';
import { imagesOf } from '../input-images.js';
import { ownDirectMessages } from '../own-direct-messages.js';
import { localeIn } from '../user-locales.js';
import { logInputRefusal } from '../../runner/index.js';

/** The workspace a form was submitted in. */
function teamOf(body: SlackViewAction): string {
  return body.team?.id ?? body.user.team_id ?? '';
}

/**
 * The submitted edit modal: field errors go back into the modal; otherwise
 * the modal closes and the job goes to the runner's intake — refused
 * privately, or admitted, its images downloaded from Slack (bot token, Slack's
 * file hosts only, checked by content) and the edit started in the channel
 * (and thread) the modal came from — or, for the edit of a job asked in another
 * member's direct messages, in the submitter's own, opened now.
 */
export function registerEditView(app: App, context: BotContext): void {
  app.view(EDIT_VIEW_ID, async ({ ack, view, body, context: auth }) => {
    const locale = localeIn(auth);
    const submission = readEditSubmission(view, locale);
    if (!submission.ok) {
      await ack({ response_action: 'errors', errors: submission.errors });
      // Its fields refused, shown next to them, or the form out of date: logged once by the runner's one line, as every
      // entry point's — one line per submission, naming the first field refused (`readEditSubmission`).
      logInputRefusal(context.logger, submission.refused, { platform: 'slack', scopeId: teamOf(body), userId: body.user.id });
      return;
    }
    await ack();
    const { context: where, prompt, options, files } = submission;
    const { client, botToken } = context.workspace(auth);
    // Its private answers go through the response URL of the press or shortcut that opened the form (in the member's
    // direct messages when it is used up or expired), else as a note only they see where the form came from.
    const notify = where.responseUrl
      ? privateAnswerVia(context, auth, { userId: body.user.id, responseUrl: where.responseUrl })
      : ephemeralVia({ client, writer: context.writer }, { channelId: where.channelId, userId: body.user.id, threadTs: where.threadTs });
    // The edit of a job asked in another member's direct messages: in the submitter's own, opened now (not before the
    // form opened, whose trigger lasts 3 s).
    const channelId = where.inOwnDirectMessages ? await ownDirectMessages(context, client, body.user.id, notify, locale) : where.channelId;
    if (!channelId) return;
    const actor = { userId: body.user.id, userName: body.user.name, teamId: teamOf(body), channelId, locale };
    // The runner's intake decides (rules, budgets, room) before anything is downloaded or posted.
    await context.jobs.start({
      kind: 'edit',
      prompt,
      options,
      fieldNames: MODAL_FIELD_NAMES,
      images: imagesOf(files, { client, token: botToken, allowedHosts: context.allowedHosts }),
      inputFiles: files.map((f) => ({ id: f.id, name: f.name })),
      actor,
      threadTs: where.threadTs,
      notify,
      client,
      private: where.private ? true : undefined,
      // A form: a refusal of its private rule (turned off while it was open) names no option the form lacks.
      inForm: true,
    });
  });
}
