import type { App } from '@slack/bolt';
import { respondVia, SHORTCUT_EDIT_IMAGE, type BotContext } from '../bot-context.js';
import { editModal } from '../edit-modal.js';
import { usageText } from '../imagine-text.js';
import { checkImageFiles, imageFilesOf } from '../input-images.js';
import { isSlackInputError } from '../SlackInputError.js';
import { slackErrorCode } from '../slack-error-code.js';

/**
 * The two ways into the edit modal besides the Edit button: the "Edit image"
 * message shortcut (the images are the message's files) and `/imagine-edit`
 * (a file input for up to 10 images). The modal opens at once, within the
 * trigger's 3 seconds; nothing is downloaded until it is submitted.
 */
export function registerEditEntryPoints(app: App, context: BotContext): void {
  app.shortcut({ callback_id: SHORTCUT_EDIT_IMAGE, type: 'message_action' }, async ({ shortcut, ack, client }) => {
    await ack();
    const notify = respondVia(shortcut.response_url, context.logger);
    const files = imageFilesOf(shortcut.message.files);
    try {
      checkImageFiles(files);
    } catch (error) {
      if (!isSlackInputError(error)) throw error;
      await notify(error.message);
      return;
    }
    const message = shortcut.message as { ts: string; thread_ts?: string };
    try {
      await client.views.open({
        trigger_id: shortcut.trigger_id,
        view: editModal({ channelId: shortcut.channel.id, threadTs: message.thread_ts ?? message.ts, files, responseUrl: shortcut.response_url }),
      });
    } catch (error) {
      context.logger.warn({ code: slackErrorCode(error) }, 'could not open the edit modal');
      await notify('I could not open the edit form; try again.');
    }
  });

  app.command(context.commands.edit, async ({ command, ack, client }) => {
    if (/^\s*(help|--help|\?)\s*$/i.test(command.text)) {
      await ack({ response_type: 'ephemeral', text: usageText(context.commands) });
      return;
    }
    await ack();
    try {
      await client.views.open({
        trigger_id: command.trigger_id,
        view: editModal({ channelId: command.channel_id, responseUrl: command.response_url, initialPrompt: command.text.trim() || undefined }),
      });
    } catch (error) {
      context.logger.warn({ code: slackErrorCode(error) }, 'could not open the edit modal');
      await respondVia(command.response_url, context.logger)('I could not open the edit form; try again.');
    }
  });
}
