import type { App } from '@slack/bolt';
import { ephemeralVia, respondVia, type BotContext } from '../bot-context.js';
import { EDIT_VIEW_ID, readEditSubmission } from '../edit-modal.js';
import { downloadImages } from '../input-images.js';
import { isSlackInputError } from '../SlackInputError.js';
import { isJobRefusedError } from '../../runner/index.js';

/**
 * The submitted edit modal: field errors go back into the modal; otherwise
 * the modal closes, the workspace's rules are checked, the images are downloaded from Slack (bot token, Slack's
 * file hosts only, checked by content) and the edit job starts in the
 * channel (and thread) the modal came from.
 */
export function registerEditView(app: App, context: BotContext): void {
  app.view(EDIT_VIEW_ID, async ({ ack, view, body, context: auth }) => {
    const submission = readEditSubmission(view);
    if (!submission.ok) {
      await ack({ response_action: 'errors', errors: submission.errors });
      return;
    }
    await ack();
    const { context: where, prompt, options, files } = submission;
    const actor = { userId: body.user.id, userName: body.user.name, teamId: body.team?.id ?? body.user.team_id ?? '', channelId: where.channelId };
    const { client, botToken } = context.workspace(auth);
    const notify = where.responseUrl
      ? respondVia(where.responseUrl, context.logger)
      : ephemeralVia({ client, writer: context.writer }, { channelId: where.channelId, userId: actor.userId, threadTs: where.threadTs });
    // The workspace's rules (who, where, what) before any download.
    if (await context.jobs.refused({ kind: 'edit', prompt, options, actor, notify })) return;
    let images;
    try {
      images = await downloadImages(files, { client, token: botToken, allowedHosts: context.allowedHosts, holdRoom: context.jobs.roomFor(actor) });
    } catch (error) {
      // A bad image, or a full queue (`queue_full`, before anything was downloaded).
      if (!isSlackInputError(error) && !isJobRefusedError(error)) throw error;
      context.logger.info({ code: error.code, user: actor.userId }, 'edit images refused');
      await notify(error.message);
      return;
    }
    await context.jobs.start({
      kind: 'edit',
      prompt,
      options,
      images,
      inputFiles: files.map((f) => ({ id: f.id, name: f.name })),
      actor,
      threadTs: where.threadTs,
      notify,
      client,
    });
  });
}
