import type { App } from '@slack/bolt';
import { privateAnswerVia, type BotContext } from '../bot-context.js';
import { FLAG_NAMES, parseImagineText, usageText } from '../imagine-text.js';
import { refuseInput } from '../refuse-input.js';
import { localeIn } from '../user-locales.js';
import { say } from '../../runner/index.js';
import { answerAdmin, answerUsage, budgetCommandOf } from './budget-commands.js';
import { answerSettingsCommand, settingsCommandOf } from './settings-commands.js';
import { answerHistoryCommand, historyCommandOf } from './history-commands.js';
import { answerStyleCommand, styleCommandOf } from './style-commands.js';
import { answerMemberSettings, memberSettingsOf } from './member-settings.js';

/**
 * The command `/imagine <text>` asks for when the text is not a prompt (history, a house style, the settings, the
 * member's own defaults, usage and budgets), each parser in turn; undefined for a prompt. The one list: a mention or a
 * direct message with such a text makes no image either.
 */
export function imagineCommandOf(text: string) {
  const history = historyCommandOf(text);
  if (history) return { of: 'history', command: history } as const;
  const style = styleCommandOf(text);
  if (style) return { of: 'style', command: style } as const;
  const settings = settingsCommandOf(text);
  if (settings) return { of: 'settings', command: settings } as const;
  const member = memberSettingsOf(text);
  if (member) return { of: 'member', command: member } as const;
  const budget = budgetCommandOf(text);
  if (budget) return { of: 'budget', command: budget } as const;
  return undefined;
}

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
    const asked = imagineCommandOf(command.text);
    if (asked) {
      if (asked.of === 'history') await answerHistoryCommand(context, actor, asked.command, ack, respond, context.workspace(auth).client);
      else if (asked.of === 'style') await answerStyleCommand(context, actor, asked.command, ack, respond);
      else if (asked.of === 'settings') await answerSettingsCommand(context, actor, asked.command, ack, respond, context.workspace(auth).botUserId);
      else if (asked.of === 'member') await answerMemberSettings(context, actor, asked.command, ack, respond);
      else if (asked.command.kind === 'usage') await answerUsage(context, actor, ack, respond);
      else await answerAdmin(context, actor, asked.command.words, ack, respond, asked.command.group);
      return;
    }
    let parsed;
    try {
      parsed = parseImagineText(command.text, { example: say(locale, 'slack.imagine.example', { command: context.commands.imagine }), locale });
    } catch (error) {
      // A flag refused before the runner is asked: the line is the bot's.
      await refuseInput(context.logger, actor, error, (text) => ack({ response_type: 'ephemeral', text }));
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
      // Private answers through the command's response URL; in the member's direct messages when it is used up or expired.
      notify: privateAnswerVia(context, auth, { userId: command.user_id, responseUrl: command.response_url }),
      client: context.workspace(auth).client,
    });
  });
}
