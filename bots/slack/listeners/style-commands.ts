import type { RespondFn } from '@slack/bolt';
import { changeStyle, describeStyles, PROMPT_PLACEHOLDER, say, sayWords, StyleOptionsSchema, words, type StyleOptions } from '../../runner/index.js';
import type { BotContext } from '../bot-context.js';
import { FLAG_NAMES, FLAGS, KNOWN_FLAGS, parseImagineText, scanImagineText, type ImagineScan } from '../imagine-text.js';
import { isSlackInputError, SlackInputError } from '../SlackInputError.js';
import type { SlackActor } from '../SlackJobs.js';
import { adminNearMissOf } from './admin-words.js';

type Ack = (answer?: { response_type: 'ephemeral'; text: string }) => Promise<void>;

export type StyleCommand = { kind: 'list' } | { kind: 'define'; name: string | undefined; text: string };

/**
 * `/imagine styles` (every member: the workspace's house styles) and `/imagine
 * admin style NAME TEXT [--size …] …` (define or replace; TEXT `clear` removes
 * it); undefined for anything else (a prompt such as "styles of the 80s" stays
 * a prompt). A near miss of `style` followed by a name (`admin styel neon …`)
 * is the command without a name (its usage); `admin styles` alone stays a prompt.
 */
export function styleCommandOf(slackText: string): StyleCommand | undefined {
  const text = slackText.trim();
  const words = text.split(/\s+/).filter(Boolean);
  if (words.length === 1 && words[0]!.toLowerCase() === 'styles') return { kind: 'list' };
  if (adminNearMissOf(words) === 'style' && words.length > 2) return { kind: 'define', name: undefined, text: '' };
  if (words[0]?.toLowerCase() !== 'admin' || words[1]?.toLowerCase() !== 'style') return undefined;
  return { kind: 'define', name: words[2], text: text.replace(/^\S+\s+\S+\s*(\S+\s*)?/, '') };
}

/** The options a style takes (its schema's), from the flags typed with it (`--size`, `--quality`, `--background`, `--format`, `--n`). */
const STYLE_OPTION_KEYS = Object.keys(StyleOptionsSchema.shape) as (keyof StyleOptions)[];

/** The flags setting those options, in the order of `/imagine`'s help. */
const STYLE_FLAGS = Object.entries(FLAGS)
  .filter(([, spec]) => (STYLE_OPTION_KEYS as readonly string[]).includes(spec.field))
  .map(([flag]) => `--${flag}`);

/**
 * The refusal of a style's text holding a flag of `/imagine` a style cannot keep (`--private`, `--public`,
 * `--compression`, `--moderation`, `--style`): naming it and the flags a style takes, so an admin is never told a style
 * is defined with a choice it dropped. Undefined when every flag is one a style takes, or one `/imagine` does not have
 * (its parser refuses that as `unknown_flag`, naming the flag meant). Takes the text as read for its parse.
 */
export function styleFlagRefusal({ flags: found }: ImagineScan): SlackInputError | undefined {
  const flag = found.find((f) => KNOWN_FLAGS.includes(f) && !STYLE_FLAGS.includes(`--${f}`));
  if (flag === undefined) return undefined;
  const flags = STYLE_FLAGS.map((f) => `\`${f}\``).join(', ');
  return new SlackInputError('flag_not_for_style', words('slack.styles.flag_not_for_style', { flag: `\`--${flag}\``, flags }), { flag: `--${flag}`, allowed: STYLE_FLAGS.join(', ') });
}

/** Answers privately: the list for anyone, a change for the admins of `SLACK_ADMIN_USER_IDS` only. */
export async function answerStyleCommand(context: BotContext, actor: SlackActor, command: StyleCommand, ack: Ack, respond: RespondFn): Promise<void> {
  const requester = context.jobs.requester(actor);
  const { locale } = actor;
  const pick = '`--style NAME`';
  const define = `\`${context.commands.imagine} admin style NAME TEXT\``;
  if (command.kind === 'define' && !requester.isAdmin) {
    await ack({ response_type: 'ephemeral', text: `:raised_hand: ${say(locale, 'styles.not_admin', { scope: 'workspace' })}` });
    return;
  }
  if (command.kind === 'define' && (command.name === undefined || command.text === '')) {
    await ack({ response_type: 'ephemeral', text: say(locale, 'slack.styles.usage', { how: define, placeholder: PROMPT_PLACEHOLDER, clear: '`clear`' }) });
    return;
  }
  let parsed: ReturnType<typeof parseImagineText> | undefined;
  if (command.kind === 'define') {
    try {
      // Read once: its flags checked before any value is read, then parsed from the same words.
      const scan = scanImagineText(command.text);
      const refusal = styleFlagRefusal(scan);
      if (refusal) throw refusal;
      parsed = parseImagineText(scan, { promptRequired: false, locale });
    } catch (error) {
      if (!isSlackInputError(error)) throw error;
      await ack({ response_type: 'ephemeral', text: sayWords(locale, error.words) });
      return;
    }
    // `help` (or `?`) where the style's text goes: how to define one, not a style named after it.
    if (parsed.kind !== 'request') {
      await ack({ response_type: 'ephemeral', text: say(locale, 'slack.styles.usage', { how: define, placeholder: PROMPT_PLACEHOLDER, clear: '`clear`' }) });
      return;
    }
  }
  await ack();
  let text: string;
  try {
    if (command.kind === 'list') text = describeStyles(await context.runner.styles.list(requester), pick, define, locale, { markup: { bold: (t) => `*${t}*` } });
    else {
      const request = parsed as Extract<NonNullable<typeof parsed>, { kind: 'request' }>;
      const options: StyleOptions = {};
      for (const key of STYLE_OPTION_KEYS) if (request.options[key] !== undefined) Object.assign(options, { [key]: request.options[key] });
      const answer = await changeStyle(context.runner.styles, requester, command.name!, request.prompt, options, pick, FLAG_NAMES);
      text = answer.ok ? `:white_check_mark: ${answer.message}` : `:raised_hand: ${answer.message}`;
    }
  } catch (error) {
    context.logger.error({ err: error, what: command.kind === 'list' ? 'styles' : 'admin style' }, 'a style command failed');
    text = `:warning: ${say(locale, 'error.on_my_side')}`;
  }
  await respond({ response_type: 'ephemeral', replace_original: false, text });
}
