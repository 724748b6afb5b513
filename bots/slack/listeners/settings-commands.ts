import type { RespondFn } from '@slack/bolt';
import { changeAuditChannel, changeSetting, describeSettings, say, settingOfWord, SETTING_WORDS } from '../../runner/index.js';
import type { BotContext } from '../bot-context.js';
import type { SlackActor } from '../SlackJobs.js';

type Ack = (answer?: { response_type: 'ephemeral'; text: string }) => Promise<void>;

/**
 * `/imagine admin settings`, `/imagine admin set SETTING VALUE`; undefined for
 * anything else (a prompt such as "admin set of icons" stays a prompt). The
 * value keeps Slack's mentions (`<#C1|art>`, `<@U1|sam>`) so ids can be read.
 */
export function settingsCommandOf(
  slackText: string,
): { kind: 'show' } | { kind: 'set'; setting: string | undefined; value: string } | { kind: 'audit'; channel: string | undefined; off: boolean } | undefined {
  const text = slackText.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').trim();
  const words = text.split(/\s+/).filter(Boolean);
  if (words[0]?.toLowerCase() !== 'admin') return undefined;
  const sub = words[1]?.toLowerCase();
  if (sub === 'settings' && words.length === 2) return { kind: 'show' };
  // `admin audit`, `admin audit off`, `admin audit #channel` (Slack sends `<#C0123|name>`); anything else stays a prompt.
  if (sub === 'audit' && words.length <= 3) {
    if (words.length === 2) return { kind: 'audit', channel: undefined, off: false };
    if (words[2]!.toLowerCase() === 'off') return { kind: 'audit', channel: undefined, off: true };
    const channel = /^<#([CG][A-Z0-9]+)(?:\|[^>]*)?>$/.exec(words[2]!)?.[1];
    if (channel) return { kind: 'audit', channel, off: false };
    return undefined;
  }
  if (sub !== 'set') return undefined;
  if (words.length === 2) return { kind: 'set', setting: undefined, value: '' };
  if (!settingOfWord(words[2]!)) return undefined;
  const value = text.replace(/^\S+\s+\S+\s+\S+\s*/, '');
  return { kind: 'set', setting: words[2], value };
}

/** Answers privately; only SLACK_ADMIN_USER_IDS may see or change the settings (the same admins as `admin budget`). */
export async function answerSettingsCommand(
  context: BotContext,
  actor: SlackActor,
  command: NonNullable<ReturnType<typeof settingsCommandOf>>,
  ack: Ack,
  respond: RespondFn,
  /** The bot's user id in the workspace: how to invite it into a channel (`/invite @Pictor`). */
  botUserId?: string,
): Promise<void> {
  const requester = context.jobs.requester(actor);
  const { locale } = actor;
  if (!requester.isAdmin) {
    await ack({ response_type: 'ephemeral', text: say(locale, 'slack.settings.not_admin') });
    return;
  }
  const how = `\`${context.commands.imagine} admin set SETTING VALUE\``;
  if (command.kind === 'set' && (command.setting === undefined || command.value === '')) {
    const show = `\`${context.commands.imagine} admin settings\``;
    await ack({ response_type: 'ephemeral', text: say(locale, 'slack.settings.usage', { how, names: Object.keys(SETTING_WORDS).join(', '), show }) });
    return;
  }
  await ack();
  let text: string;
  try {
    if (command.kind === 'audit') text = await auditAnswer(context, requester, command, botUserId);
    else if (command.kind === 'show') text = describeSettings(await context.runner.policy.effective(requester), how, locale, context.runner.audit.trouble(requester));
    else {
      const answer = await changeSetting(context.runner.policy, requester, command.setting!, command.value);
      // Every Home tab of the workspace shows its settings and defaults.
      if (answer.ok) context.homes.changedFor(actor.teamId);
      text = answer.ok ? `:white_check_mark: ${answer.message}` : `:raised_hand: ${answer.message}`;
    }
  } catch (error) {
    context.logger.error({ err: error, what: `admin ${command.kind}` }, 'a settings command failed');
    text = `:warning: ${say(locale, 'error.on_my_side')}`;
  }
  await respond({ response_type: 'ephemeral', replace_original: false, text });
}

/**
 * `admin audit #channel` (the bot posts its greeting there first: a channel it is not in is refused, saying how to
 * invite it), `admin audit off`, and `admin audit` alone (where the entries go, or how to choose).
 */
async function auditAnswer(context: BotContext, requester: ReturnType<BotContext['jobs']['requester']>, command: { channel: string | undefined; off: boolean }, botUserId: string | undefined): Promise<string> {
  const { locale } = requester;
  if (!command.off && !command.channel) {
    const current = (await context.runner.policy.effective(requester)).auditChannel.value;
    const usage = say(locale, 'slack.audit.usage', { set: `\`${context.commands.imagine} admin audit #channel\``, off: `\`${context.commands.imagine} admin audit off\`` });
    const now = current ? say(locale, 'audit.current', { scope: 'workspace', channel: `<#${current.channelId}>` }) : say(locale, 'audit.already_off');
    return `:receipt: ${now} ${usage}`;
  }
  const invite = `\`/invite ${botUserId ? `<@${botUserId}>` : '@Pictor'}\``;
  const answer = await changeAuditChannel(context.runner, requester, command.off ? undefined : command.channel, invite);
  return answer.ok ? `:white_check_mark: ${answer.message}` : `:raised_hand: ${answer.message}`;
}
