import type { RespondFn, types, webApi } from '@slack/bolt';
import { describeForgotten, historyLineValues, say, type HistoryEntry } from '../../runner/index.js';
import type { BotContext } from '../bot-context.js';
import { ACTIONS } from '../render-job.js';
import type { SlackActor } from '../SlackJobs.js';
import { historyChannelOf, plainTextOf } from '../slack-text.js';

type Ack = (answer?: { response_type: 'ephemeral'; text: string }) => Promise<void>;

/** `/imagine history`, `/imagine history workspace` (admins), `/imagine forget`; undefined for a prompt. */
export function historyCommandOf(slackText: string): { kind: 'mine' | 'workspace' | 'forget' } | undefined {
  const words = plainTextOf(slackText).trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 1 && words[0] === 'history') return { kind: 'mine' };
  if (words.length === 1 && words[0] === 'forget') return { kind: 'forget' };
  if (words.length === 2 && words[0] === 'history' && words[1] === 'workspace') return { kind: 'workspace' };
  return undefined;
}

/**
 * Answers privately through the command's response URL (`client`: the workspace's, which publishes the member's Home
 * again after a forget).
 */
export async function answerHistoryCommand(
  context: BotContext,
  actor: SlackActor,
  command: NonNullable<ReturnType<typeof historyCommandOf>>,
  ack: Ack,
  respond: RespondFn,
  client: webApi.WebClient,
): Promise<void> {
  const history = context.runner.history;
  const { locale } = actor;
  if (!history) {
    await ack({ response_type: 'ephemeral', text: say(locale, 'history.none_kept', { icon: ':raised_hand:' }) });
    return;
  }
  await ack();
  const requester = context.jobs.requester(actor);
  let answer: { text: string; blocks?: types.KnownBlock[] };
  let erased = false;
  try {
    if (command.kind === 'forget') {
      answer = { text: describeForgotten(await history.forgetEverywhere(requester), locale, ':broom:') };
      erased = true;
    } else if (command.kind === 'workspace') {
      const entries = await history.ofScope(requester);
      answer = entries ? renderHistory(entries, 'scope', locale) : { text: say(locale, 'history.not_admin', { icon: ':raised_hand:', scope: 'workspace' }) };
    } else {
      answer = renderHistory(await history.mine(requester), 'mine', locale);
    }
  } catch (error) {
    context.logger.error({ err: error, what: `history ${command.kind}` }, 'a history command failed');
    answer = { text: `:warning: ${say(locale, 'error.on_my_side')}` };
  }
  // Their Home tab showed their prompts: it is published again with what is left of them, whatever becomes of the
  // answer — a forget that failed partway may have erased their history already. When Slack did not take it, the
  // answer says their Home still shows their prompts, as it says it of the audit posts not edited yet, and what comes
  // next as it will be: sent again shortly, or (the bot stopping, or stopped) only at their next open of it.
  if (command.kind === 'forget') {
    const republished = await context.homes.forgotten(client, actor, requester);
    if (erased && republished !== 'published') {
      const pending = say(locale, republished === 'retrying' ? 'slack.home.forgetPending' : 'slack.home.forgetNextOpen');
      answer = { ...answer, text: `${answer.text} ${pending}` };
    }
  }
  await respond({ response_type: 'ephemeral', replace_original: false, ...answer });
}

/**
 * One section per job, newest first: when, where, the prompt, options and
 * cost, a link to its message (as its entry recorded it when the job ended),
 * and a Reroll button that runs it again in its channel, counted against
 * whoever clicks (a job asked in another member's direct messages: in the
 * clicker's own). A job asked in a direct message with the app says so, without
 * naming that conversation (`historyChannelOf`); in the workspace's view, so does
 * one whose message only its member can open (`memberLink`, recorded as it
 * ended), which has no link unless it is the reader's own (`ofScope`).
 */
function renderHistory(entries: readonly HistoryEntry[], whose: 'mine' | 'scope', locale: string | undefined): { text: string; blocks: types.KnownBlock[] } {
  const title = say(locale, 'history.title', { whose, scope: 'workspace' }, { bold: (text) => `*${text}*` });
  const empty = `${title}\n${say(locale, 'history.empty')}`;
  if (entries.length === 0) return { text: empty, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: empty } }] };
  const lines = entries.map((e, i) => {
    const prompt = e.prompt.length > 80 ? `${e.prompt.slice(0, 79)}…` : e.prompt;
    return say(locale, 'slack.history.line', {
      rank: i + 1,
      // Slack shows the date in each reader's own time zone and language.
      when: `<!date^${Math.floor(e.at / 1000)}^{date_short_pretty} {time}|${new Date(e.at).toISOString()}>`,
      author: whose === 'scope' ? ` <@${e.userId}>` : '',
      channel: historyChannelOf(e, whose),
      prompt: prompt.replace(/[\n`<>&]/g, ' '),
      ...historyLineValues(e),
      hasLink: e.link ? 'yes' : 'no',
      link: e.link ?? '',
    });
  });
  const blocks: types.KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: title } },
    ...lines.map(
      (line, i): types.KnownBlock => ({
        type: 'section',
        text: { type: 'mrkdwn', text: line },
        accessory: { type: 'button', action_id: ACTIONS.reroll, text: { type: 'plain_text', text: say(locale, 'button.reroll') }, value: entries[i]!.key },
      }),
    ),
  ];
  return { text: [title, ...lines].join('\n'), blocks };
}
