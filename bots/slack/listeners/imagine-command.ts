import type { App } from '@slack/bolt';
import { respondVia, type BotContext } from '../bot-context.js';
import { FLAG_NAMES, parseImagineText, usageText } from '../imagine-text.js';
import { isSlackInputError } from '../SlackInputError.js';
import { localeIn } from '../user-locales.js';
import { say, sayWords } from '../../runner/index.js';
import { answerAdmin, answerUsage, budgetCommandOf } from './budget-commands.js';
import { answerSettingsCommand, settingsCommandOf } from './settings-commands.js';
import { answerHistoryCommand, historyCommandOf } from './history-commands.js';
import { answerStyleCommand, styleCommandOf } from './style-commands.js';
import { answerMemberSettings, memberSettingsOf } from './member-settings.js';

/**
 * `/imagine PROMPT [--size WxH] [--quality Q] …`: a bad flag or `help` is
 * answered privately in the acknowledgement itself; a request goes to the
 * runner's intake, which refuses it privately (through the response URL) or
 * starts a job whose message the whole channel sees. `/imagine usage` and
 * `/imagine admin budget …` are answered privately.
 */
export function registerImagineCommand(app: App, context: BotContext): void {
  app.command(context.commands.imagine, async ({ command, ack, respond, context: auth }) => {
    const locale = localeIn(auth);
    const actor = { userId: command.user_id, userName: command.user_name, teamId: command.team_id, channelId: command.channel_id, locale };
    const history = historyCommandOf(command.text);
    if (history) {
      await answerHistoryCommand(context, actor, history, ack, respond);
      return;
    }
    const style = styleCommandOf(command.text);
    if (style) {
      await answerStyleCommand(context, actor, style, ack, respond);
      return;
    }
    const settings = settingsCommandOf(command.text);
    if (settings) {
      await answerSettingsCommand(context, actor, settings, ack, respond, context.workspace(auth).botUserId);
      return;
    }
    const mine = memberSettingsOf(command.text);
    if (mine) {
      await answerMemberSettings(context, actor, mine, ack, respond);
      return;
    }
    const budget = budgetCommandOf(command.text);
    if (budget) {
      if (budget.kind === 'usage') await answerUsage(context, actor, ack, respond);
      else await answerAdmin(context, actor, budget.words, ack, respond, budget.group);
      return;
    }
    let parsed;
    try {
      parsed = parseImagineText(command.text, { example: say(locale, 'slack.imagine.example', { command: context.commands.imagine }), locale });
    } catch (error) {
      if (!isSlackInputError(error)) throw error;
      await ack({ response_type: 'ephemeral', text: sayWords(locale, error.words) });
      return;
    }
    if (parsed.kind === 'help') {
      await ack({ response_type: 'ephemeral', text: usageText(context.commands, locale) });
      return;
    }
    await ack();
    await context.jobs.start({
      kind: 'generate',
      prompt: parsed.prompt,
      options: parsed.options,
      style: parsed.style,
      private: parsed.private,
      fieldNames: FLAG_NAMES,
      actor,
      notify: respondVia(command.response_url, context.logger),
      client: context.workspace(auth).client,
    });
  });
}
