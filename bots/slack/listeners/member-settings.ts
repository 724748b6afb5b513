import { definedOf } from 'pictor/internal';
import type { RespondFn } from '@slack/bolt';
import { describeMemberDefaults, MEMBER_DEFAULT_NAMES, onOffOf, say, sayWords, words, type MemberDefaultName, type MemberDefaultsChange } from '../../runner/index.js';
import type { BotContext } from '../bot-context.js';
import { parseImagineText } from '../imagine-text.js';
import { isSlackInputError, SlackInputError } from '../SlackInputError.js';
import type { SlackActor } from '../SlackJobs.js';

type Ack = (answer?: { response_type: 'ephemeral'; text: string }) => Promise<void>;

/** The flags of `/imagine settings`: those of `/imagine` that a member may keep as defaults, and the two switches. */
const DEFAULT_FLAGS = { size: 'size', quality: 'quality', format: 'format', n: 'count', private: 'private', previews: 'previews' } as const satisfies Record<string, MemberDefaultName>;
const SWITCHES = new Set(['private', 'previews']);

/**
 * `/imagine settings` (show), `/imagine settings --size 1536x1024 --private on …` (set), `/imagine settings clear
 * size|…|all`; undefined for anything else, so a prompt such as "settings of a castle" stays a prompt.
 */
export function memberSettingsOf(slackText: string): { text: string } | undefined {
  const text = slackText.trim();
  const [first, second] = text.split(/\s+/);
  if (first?.toLowerCase() !== 'settings') return undefined;
  if (second === undefined || /^(--|—|–)/.test(second) || second.toLowerCase() === 'clear') return { text: text.slice(first.length).trim() };
  return undefined;
}

/** Reads what the member typed after `settings` as a change of their defaults (empty: just show them). Throws SlackInputError naming the flag. */
export function readDefaultsChange(text: string, locale?: string): MemberDefaultsChange {
  const change: Record<string, unknown> = {};
  const clear = /^clear(?:\s+(\S+))?$/i.exec(text);
  if (clear) {
    const which = (clear[1] ?? 'all').toLowerCase();
    const name = which === 'n' ? 'count' : which;
    if (name !== 'all' && !(MEMBER_DEFAULT_NAMES as readonly string[]).includes(name)) throw unknownFlag(which);
    for (const each of MEMBER_DEFAULT_NAMES) if (name === 'all' || each === name) change[each] = null;
    return change as MemberDefaultsChange;
  }
  // The switches take on/off; the other flags are read as `/imagine` reads them (same values, same sentences).
  const rest: string[] = [];
  const tokens = text.split(/\s+/).filter(Boolean);
  for (let i = 0; i < tokens.length; i++) {
    const flag = /^(?:--|—|–)([a-z]+)$/i.exec(tokens[i]!)?.[1]?.toLowerCase();
    if (flag && SWITCHES.has(flag)) {
      const value = onOffOf(tokens[i + 1] ?? '');
      if (value === undefined) throw new SlackInputError('bad_flag_value', words('slack.settings.on_off', { flag: `\`--${flag}\`` }), { flag: `--${flag}` });
      change[flag] = value;
      i++;
      continue;
    }
    if (flag && !(flag in DEFAULT_FLAGS)) throw unknownFlag(flag);
    rest.push(tokens[i]!);
  }
  if (rest.length > 0) {
    const parsed = parseImagineText(rest.join(' '), { promptRequired: false, locale });
    if (parsed.kind !== 'request') return change as MemberDefaultsChange;
    if (parsed.prompt) throw unknownFlag(parsed.prompt.split(/\s+/)[0]!);
    const { size, quality, output_format: format, n: count } = parsed.options;
    Object.assign(change, definedOf({ size, quality, format, count }));
  }
  return change as MemberDefaultsChange;
}

function unknownFlag(given: string): SlackInputError {
  const flags = Object.keys(DEFAULT_FLAGS).map((f) => `\`--${f}\``).join(', ');
  return new SlackInputError('unknown_flag', words('slack.flag.unknown', { flag: `\`${given}\``, near: '', meant: 'no', flags }), { flag: given });
}


/** Sets (when asked) and shows a member's own defaults beside the workspace's: a private answer for anyone. */
export async function answerMemberSettings(context: BotContext, actor: SlackActor, command: { text: string }, ack: Ack, respond: RespondFn): Promise<void> {
  const { locale } = actor;
  let change: MemberDefaultsChange;
  try {
    change = readDefaultsChange(command.text, locale);
  } catch (error) {
    if (!isSlackInputError(error)) throw error;
    await ack({ response_type: 'ephemeral', text: sayWords(locale, error.words) });
    return;
  }
  await ack();
  const requester = context.jobs.requester(actor);
  let text: string;
  try {
    const changed = Object.keys(change).length > 0;
    if (changed) {
      await context.runner.members.change(requester, change);
      // Their Home tab shows their defaults: published again if they opened it lately.
      context.homes.changed(actor.teamId, actor.userId);
    }
    const view = describeMemberDefaults(
      await context.runner.members.view(requester),
      await context.runner.policy.effective(requester),
      requester,
      { change: `\`${context.commands.imagine} settings --size 1536x1024 --private on\``, clear: `\`${context.commands.imagine} settings clear size\``, surface: context.commands.imagine },
      locale,
      { bold: (t) => `*${t}*` },
    );
    text = changed ? `:white_check_mark: ${say(locale, 'member.saved')}\n${view}` : view;
  } catch (error) {
    context.logger.error({ err: error, what: 'member settings' }, 'a settings command failed');
    text = `:warning: ${say(locale, 'error.on_my_side')}`;
  }
  await respond({ response_type: 'ephemeral', replace_original: false, text });
}
