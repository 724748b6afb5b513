import type { App } from '@slack/bolt';
import { respondVia, type BotContext } from '../bot-context.js';
import { FLAG_NAMES, parseImagineText, usageText } from '../imagine-text.js';
import { isSlackInputError } from '../SlackInputError.js';
import { answerAdmin, answerUsage, budgetCommandOf } from './budget-commands.js';
import { answerSettingsCommand, settingsCommandOf } from './settings-commands.js';
import { answerHistoryCommand, historyCommandOf } from './history-commands.js';

/**
 * `/imagine PROMPT [--size WxH] [--quality Q] …`: a bad flag or `help` is
 * answered privately in the acknowledgement itself; a request goes to the
 * runner's intake, which refuses it privately (through the response URL) or
 * starts a job whose message the whole channel sees. `/imagine usage` and
 * `/imagine admin budget …` are answered privately.
 */
export function registerImagineCommand(app: App, context: BotContext): void {
  app.command(context.commands.imagine, async ({ command, ack, respond, context: auth }) => {
    const history = historyCommandOf(command.text);
    if (history) {
      const actor = { userId: command.user_id, userName: command.user_name, teamId: command.team_id, channelId: command.channel_id };
      await answerHistoryCommand(context, actor, history, ack, respond);
      return;
    }
    const settings = settingsCommandOf(command.text);
    if (settings) {
      const actor = { userId: command.user_id, userName: command.user_name, teamId: command.team_id, channelId: command.channel_id };
      await answerSettingsCommand(context, actor, settings, ack, respond);
      return;
    }
    const budget = budgetCommandOf(command.text);
    if (budget) {
      const actor = { userId: command.user_id, userName: command.user_name, teamId: command.team_id, channelId: command.channel_id };
      if (budget.kind === 'usage') await answerUsage(context, actor, ack, respond);
      else await answerAdmin(context, actor, budget.words, ack, respond);
      return;
    }
    let parsed;
    try {
      parsed = parseImagineText(command.text, { example: `${context.commands.imagine} a lighthouse at dusk, watercolor --size 1536x1024` });
    } catch (error) {
      if (!isSlackInputError(error)) throw error;
      await ack({ response_type: 'ephemeral', text: error.message });
      return;
    }
    if (parsed.kind === 'help') {
      await ack({ response_type: 'ephemeral', text: usageText(context.commands) });
      return;
    }
    await ack();
    await context.jobs.start({
      kind: 'generate',
      prompt: parsed.prompt,
      options: parsed.options,
      fieldNames: FLAG_NAMES,
      actor: { userId: command.user_id, userName: command.user_name, teamId: command.team_id, channelId: command.channel_id },
      notify: respondVia(command.response_url, context.logger),
      client: context.workspace(auth).client,
    });
  });
}
