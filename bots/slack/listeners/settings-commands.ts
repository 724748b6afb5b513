import type { RespondFn } from '@slack/bolt';
import { closestWord } from 'pictor/internal';
import { changeAuditChannel, changeSetting, CLEAR_VALUE, describeSettings, LIST_VERB, repairSettings, say, settingOfWord, SETTING_WORDS } from '../../runner/index.js';
import type { BotContext } from '../bot-context.js';
import type { SlackActor } from '../SlackJobs.js';
import { escapeMrkdwn, plainTextOf } from '../slack-text.js';
import { adminNearMissOf } from './admin-words.js';

type Ack = (answer?: { response_type: 'ephemeral'; text: string }) => Promise<void>;

/** What `/imagine admin settings|set|repair|audit …` asks for. */
export type SettingsCommand =
  | { kind: 'show' }
  | { kind: 'set'; setting: string | undefined; value: string }
  /** Clear the settings that cannot be read (`repairSettings`). */
  | { kind: 'repair' }
  | { kind: 'audit'; channel: string | undefined; off: boolean }
  /** `admin settings …`, `admin repair …` or `admin audit …` that does not parse: answered with that command's usage (the settings' for repair). */
  | { kind: 'usage'; of: 'settings' | 'audit' }
  /** A channel or member typed as plain text (`#art`, `@sam`, `mallory`) where an id is needed: `field` names where, `of` what it should be. */
  | { kind: 'plain_mention'; field: string; typed: string; of: 'channel' | 'member' };

/** The settings whose values are channels or members (`#art`, `@sam` must reach the bot as Slack's mentions). */
const MENTION_SETTINGS = new Set(['channels', 'allowed', 'blocked', 'highQualityFor']);
/** A channel or member as typed, not as Slack's mention: `#art-audit`, `@sam`. */
const PLAIN_MENTION = /^[#@][^\s<>]+$/;
/** A channel's or a member's id typed bare (`C0123ABCD`, `U0123ABCD`; `user:U0123ABCD` as the value grammar takes it). */
const CHANNEL_ID = /^[CG][A-Z0-9]{8,}$/;
const MEMBER_ID = /^(?:user:)?[UW][A-Z0-9]{8,}$/;

/**
 * `/imagine admin settings`, `/imagine admin set SETTING VALUE`, `/imagine admin repair`, `/imagine admin audit …`; undefined
 * for anything else. A text whose second word is `settings`, `repair` or `audit`, or `set` followed by a setting's name (or a near miss of one,
 * `max-image`), is always a command: one that does not parse gets its usage, never becomes a prompt. `admin set` followed
 * by other words ("admin set of icons") stays a prompt. A near miss of `settings`, `set`, `repair` or `audit` (`admin setting`,
 * `admin sets channels #art`, `admin audti off`), alone or followed by what that command takes, gets its usage. The value of a channel or member setting keeps Slack's mentions
 * (`<#C1|art>`, `<@U1|sam>`) so ids can be read, and one that came as plain text (`#art`: an app whose command does not
 * escape them, or a name Slack does not know) or a bare name (`mallory`, no id's shape) is `plain_mention`; any other
 * value is read as typed (`plainTextOf`).
 */
export function settingsCommandOf(slackText: string): SettingsCommand | undefined {
  const text = slackText.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').trim();
  const words = text.split(/\s+/).filter(Boolean);
  if (words[0]?.toLowerCase() !== 'admin') return undefined;
  const sub = words[1]?.toLowerCase();
  const miss = adminNearMissOf(words);
  if (miss === 'settings' || miss === 'set') {
    if (words.length === 2 || settingOfWord(words[2]!) || closestWord(words[2]!, Object.keys(SETTING_WORDS))) return { kind: 'usage', of: 'settings' };
  }
  if (miss === 'audit' && (words.length === 2 || (words.length === 3 && /^(off|<#[^>]+>|#\S+)$/i.test(words[2]!)))) return { kind: 'usage', of: 'audit' };
  if (miss === 'repair' && words.length === 2) return { kind: 'usage', of: 'settings' };
  if (sub === 'settings') return words.length === 2 ? { kind: 'show' } : { kind: 'usage', of: 'settings' };
  if (sub === 'repair') return words.length === 2 ? { kind: 'repair' } : { kind: 'usage', of: 'settings' };
  // `admin audit`, `admin audit off`, `admin audit #channel` (Slack sends `<#C0123|name>`).
  if (sub === 'audit') {
    if (words.length === 2) return { kind: 'audit', channel: undefined, off: false };
    if (words.length === 3) {
      if (words[2]!.toLowerCase() === 'off') return { kind: 'audit', channel: undefined, off: true };
      const channel = /^<#([CG][A-Z0-9]+)(?:\|[^>]*)?>$/.exec(words[2]!)?.[1];
      if (channel) return { kind: 'audit', channel, off: false };
      if (words[2]!.startsWith('#')) return { kind: 'plain_mention', field: 'audit', typed: words[2]!, of: 'channel' };
    }
    return { kind: 'usage', of: 'audit' };
  }
  if (sub !== 'set') return undefined;
  if (words.length === 2) return { kind: 'set', setting: undefined, value: '' };
  const afterName = /^\S+\s+\S+\s+\S+\s*/;
  const name = settingOfWord(words[2]!);
  if (!name) return closestWord(words[2]!, Object.keys(SETTING_WORDS)) ? { kind: 'set', setting: words[2], value: text.replace(afterName, '') } : undefined;
  if (!MENTION_SETTINGS.has(name)) {
    // Words, not ids: as typed (`blocked-words https://spam.example` is matched against prompts, which are read so too).
    return { kind: 'set', setting: words[2], value: plainTextOf(slackText.trim().replace(afterName, '')) };
  }
  const value = text.replace(afterName, '');
  const field = words[2]!.toLowerCase();
  const plain = value.split(/[\s,]+/).find((word) => PLAIN_MENTION.test(word));
  if (plain) return { kind: 'plain_mention', field, typed: plain, of: plain.startsWith('#') ? 'channel' : 'member' };
  // A bare name (`mallory`) would be kept as an id that matches no one: refused like a plain mention.
  const of = name === 'channels' ? 'channel' : 'member';
  const bare = CLEAR_VALUE.test(value.trim())
    ? undefined
    : value
        .replace(/<[^>]*>/g, ' ')
        .split(/[\s,]+/)
        .filter(Boolean)
        .find((word, i) => !(i === 0 && LIST_VERB.test(word)) && !(of === 'channel' ? CHANNEL_ID : MEMBER_ID).test(word));
  if (bare) return { kind: 'plain_mention', field, typed: bare, of };
  return { kind: 'set', setting: words[2], value };
}

/** Answers privately; only SLACK_ADMIN_USER_IDS may see or change the settings (the same admins as `admin budget`). */
export async function answerSettingsCommand(
  context: BotContext,
  actor: SlackActor,
  command: SettingsCommand,
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
  if ((command.kind === 'set' && (command.setting === undefined || command.value === '')) || (command.kind === 'usage' && command.of === 'settings')) {
    const show = `\`${context.commands.imagine} admin settings\``;
    const repair = `\`${context.commands.imagine} admin repair\``;
    await ack({ response_type: 'ephemeral', text: say(locale, 'slack.settings.usage', { how, names: Object.keys(SETTING_WORDS).join(', '), show, repair }) });
    return;
  }
  if (command.kind === 'usage') {
    await ack({ response_type: 'ephemeral', text: `:receipt: ${auditUsage(context, locale)}` });
    return;
  }
  if (command.kind === 'plain_mention') {
    await ack({ response_type: 'ephemeral', text: `:raised_hand: ${plainMentionAnswer(context, command, locale)}` });
    return;
  }
  await ack();
  let text: string;
  try {
    if (command.kind === 'audit') text = await auditAnswer(context, requester, command, botUserId);
    else if (command.kind === 'show') text = describeSettings(await context.runner.policy.effective(requester), how, locale, context.runner.audit.trouble(requester), context.commands.imagine);
    else {
      const answer = command.kind === 'repair' ? await repairSettings(context.runner.policy, requester, context.commands.imagine) : await changeSetting(context.runner.policy, requester, command.setting!, command.value);
      // Every Home tab of the workspace shows its settings and defaults: published again when they changed.
      if (answer.ok && !answer.unchanged) context.homes.changedFor(actor.teamId);
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
    const usage = auditUsage(context, locale);
    const now = current ? say(locale, 'audit.current', { scope: 'workspace', channel: `<#${current.channelId}>` }) : say(locale, 'audit.already_off');
    return `:receipt: ${now} ${usage}`;
  }
  const invite = `\`/invite ${botUserId ? `<@${botUserId}>` : '@Pictor'}\``;
  const answer = await changeAuditChannel(context.runner, requester, command.off ? undefined : command.channel, invite);
  return answer.ok ? `:white_check_mark: ${answer.message}` : `:raised_hand: ${answer.message}`;
}

function auditUsage(context: BotContext, locale: string | undefined): string {
  return say(locale, 'slack.audit.usage', { set: `\`${context.commands.imagine} admin audit #channel\``, off: `\`${context.commands.imagine} admin audit off\`` });
}

/**
 * A channel or member that reached the bot as plain text: nothing is changed, and the admin is told which field, that
 * Slack did not send it as a link (a name Slack does not know, or an app whose command does not escape names: its
 * manifest is older), and how to give it (pick it from Slack's list, or its id).
 */
function plainMentionAnswer(context: BotContext, command: { field: string; typed: string; of: 'channel' | 'member' }, locale: string | undefined): string {
  const channel = command.of === 'channel';
  return say(locale, 'slack.admin.plain_mention', {
    field: `\`${command.field}\``,
    typed: `\`${escapeMrkdwn(command.typed)}\``,
    kind: channel ? 'channel' : 'member',
    id: channel ? '`C0123ABCD`' : '`U0123ABCD`',
    command: `\`${context.commands.imagine}\``,
  });
}
