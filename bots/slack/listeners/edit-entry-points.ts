import type { App } from '@slack/bolt';
import { openEditModal, privateAnswerVia, SHORTCUT_EDIT_IMAGE, type BotContext } from '../bot-context.js';
import { usageText } from '../imagine-text.js';
import { checkImageFiles, imageFilesOf } from '../input-images.js';
import { refuseInput } from '../refuse-input.js';
import { localeIn } from '../user-locales.js';
import { formBudget } from '../answer-by.js';

/**
 * The two ways into the edit modal besides the Edit button: the "Edit image"
 * message shortcut (the images are the message's files) and `/imagine-edit`
 * (a file input for up to 10 images). The runner's intake for a form checks
 * who and where and that a budget is left (else a private note), then the modal
 * opens, within the trigger's 3 seconds; nothing is downloaded until it is submitted.
 */
export function registerEditEntryPoints(app: App, context: BotContext): void {
  app.shortcut({ callback_id: SHORTCUT_EDIT_IMAGE, type: 'message_action' }, async ({ shortcut, ack, client, context: auth }) => {
    const locale = localeIn(auth);
    await ack();
    const notify = privateAnswerVia(context, auth, { userId: shortcut.user.id, responseUrl: shortcut.response_url });
    const files = imageFilesOf(shortcut.message.files);
    const actor = { userId: shortcut.user.id, userName: shortcut.user.name, teamId: shortcut.team?.id ?? shortcut.user.team_id ?? '', channelId: shortcut.channel.id, locale };
    try {
      checkImageFiles(files);
    } catch (error) {
      // None, too many, too large or not images by what Slack says of them: nothing asked of the runner, so the line is the bot's.
      await refuseInput(context.logger, actor, error, notify);
      return;
    }
    const message = shortcut.message as { ts: string; thread_ts?: string };
    // The runner's intake for a form (who, where, a budget left) before the modal opens.
    await context.jobs.openForm(
      actor,
      notify,
      () => openEditModal(context, client, shortcut.trigger_id, notify, { channelId: shortcut.channel.id, threadTs: message.thread_ts ?? message.ts, files, responseUrl: shortcut.response_url }, locale),
      { answerBy: formBudget(auth).endsAt },
    );
  });

  app.command(context.commands.edit, async ({ command, ack, client, context: auth }) => {
    const locale = localeIn(auth);
    if (/^\s*(help|--help|\?)\s*$/i.test(command.text)) {
      await ack({ response_type: 'ephemeral', text: usageText(context.commands, locale) });
      return;
    }
    await ack();
    const notify = privateAnswerVia(context, auth, { userId: command.user_id, responseUrl: command.response_url });
    const actor = { userId: command.user_id, userName: command.user_name, teamId: command.team_id, channelId: command.channel_id, locale };
    await context.jobs.openForm(
      actor,
      notify,
      () => openEditModal(context, client, command.trigger_id, notify, { channelId: command.channel_id, responseUrl: command.response_url, initialPrompt: command.text.trim() || undefined }, locale),
      { answerBy: formBudget(auth).endsAt },
    );
  });
}
