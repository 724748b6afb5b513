import type { RespondFn } from '@slack/bolt';
import { capOfName, notAdminMessage, parseCapAmount, say } from '../../runner/index.js';
import type { BotContext } from '../bot-context.js';
import { renderUsage } from '../render-usage.js';
import type { SlackActor } from '../SlackJobs.js';
import { plainTextOf } from '../slack-text.js';
import { adminNearMissOf } from './admin-words.js';

/** A user group as the admin typed it, once Slack's mention is plain text: `@designers` (`<!subteam^S0123|@designers>`). */
const GROUP_SHAPE = /^@[\w.-]+$/;
/** Slack's mention of a user group, when the command's text carries it: its id. */
const GROUP_MENTION = /<!subteam\^([A-Z0-9]+)(?:\|[^>]*)?>/;

/** A user group named in `admin budget @group CAP USD`: its handle as typed, and its id when Slack sent the mention. */
export interface NamedGroup {
  handle: string;
  id?: string | undefined;
}

type Ack = (answer?: { response_type: 'ephemeral'; text: string }) => Promise<void>;

/**
 * What `/imagine <text>` asks for when it is not a picture: `usage`, or `admin budget …`; undefined for a prompt.
 * `admin` alone and every text starting with `admin budget` are the budget command (one that does not parse gets its
 * usage, never becomes a prompt); so does a near miss of `budget` (`admin budegt user-daily 5`, `admin budgets`), alone
 * or followed by a cap's name or a group. `admin` followed by another word ("admin panel, flat design") stays a prompt.
 */
export function budgetCommandOf(slackText: string): { kind: 'usage' } | { kind: 'admin'; words: string[]; group?: NamedGroup } | undefined {
  const words = plainTextOf(slackText).trim().split(/\s+/).filter(Boolean);
  const first = words[0]?.toLowerCase();
  if (first === 'usage' && words.length === 1) return { kind: 'usage' };
  if (first !== 'admin') return undefined;
  if (words.length === 1) return { kind: 'admin', words: [] };
  if (adminNearMissOf(words) === 'budget' && (words.length === 2 || capOfName(words[2]!) || GROUP_SHAPE.test(words[2]!))) return { kind: 'admin', words: [] };
  if (words[1]!.toLowerCase() !== 'budget') return undefined;
  // "admin budget @group CAP [USD]": a user group's budget of each member.
  if (GROUP_SHAPE.test(words[2] ?? '')) {
    const id = GROUP_MENTION.exec(slackText)?.[1];
    return { kind: 'admin', words: [words[1]!, ...words.slice(3)], group: { handle: words[2]!, ...(id && { id }) } };
  }
  return { kind: 'admin', words: words.slice(1) };
}

/** `/imagine usage`: acknowledged at once, then answered privately through the command's response URL. */
export async function answerUsage(context: BotContext, actor: SlackActor, ack: Ack, respond: RespondFn): Promise<void> {
  await ack();
  await answerLater(context, respond, 'usage', actor.locale, async () => renderUsage(await context.runner.budgets.summary(context.jobs.requester(actor)), actor.locale, context.commands.imagine));
}

/** Answers privately once `work` is done; a failure (the ledger unreachable) is logged and the person told briefly. */
async function answerLater(context: BotContext, respond: RespondFn, what: string, locale: string | undefined, work: () => Promise<string>): Promise<void> {
  let text: string;
  try {
    text = await work();
  } catch (error) {
    context.logger.error({ err: error, what }, 'a budget command failed');
    text = `:warning: ${say(locale, 'error.on_my_side')}`;
  }
  await respond({ response_type: 'ephemeral', replace_original: false, text });
}

/**
 * `/imagine admin budget [@group] CAP USD|clear`: only for SLACK_ADMIN_USER_IDS; every answer is private. With a user
 * group, its budget of each member (`ChatBudgets.setRoleBudget`), the group found by its mention's id or its handle.
 */
export async function answerAdmin(context: BotContext, actor: SlackActor, words: string[], ack: Ack, respond: RespondFn, group?: NamedGroup): Promise<void> {
  const requester = context.jobs.requester(actor);
  if (!requester.isAdmin) {
    await ack({ response_type: 'ephemeral', text: notAdminMessage('slack', actor.locale) });
    return;
  }
  const usage = [
    say(actor.locale, 'slack.budget.usage', { how: `\`${context.commands.imagine} admin budget CAP USD\`` }),
    say(actor.locale, 'slack.budget.group_usage', { how: `\`${context.commands.imagine} admin budget @group user-daily 5\`` }),
  ].join('\n');
  const [subcommand, capName, amountText, ...rest] = words;
  const cap = capName === undefined ? undefined : capOfName(capName);
  const amount = parseCapAmount(amountText);
  if (subcommand?.toLowerCase() !== 'budget' || !cap || rest.length > 0 || !amount.ok) {
    await ack({ response_type: 'ephemeral', text: usage });
    return;
  }
  await ack();
  await answerLater(context, respond, 'admin budget', actor.locale, async () => {
    let change;
    if (group) {
      const found = group.id ? { id: group.id, handle: group.handle } : await context.groups.byHandle(actor.teamId, group.handle);
      if (found === undefined || found === 'missing_scope') {
        return `:raised_hand: ${say(actor.locale, 'slack.budget.unknown_group', { group: group.handle, missingScope: found === 'missing_scope' ? 'yes' : 'no' })}`;
      }
      change = await context.runner.budgets.setRoleBudget(requester, { id: found.id, name: `@${found.handle.replace(/^@/, '')}` }, cap, amount.usd);
    } else change = await context.runner.budgets.setCap(requester, cap, amount.usd);
    // Every Home tab of the workspace shows what is left of its budgets.
    if (change.ok) context.homes.changedFor(actor.teamId);
    return change.ok ? `:white_check_mark: ${change.message}` : `:raised_hand: ${change.message}`;
  });
}
