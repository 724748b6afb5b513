import type { RespondFn, types } from '@slack/bolt';
import { formatUsd } from '../../../src/index.js';
import type { HistoryEntry } from '../../runner/index.js';
import type { BotContext } from '../bot-context.js';
import { ACTIONS } from '../render-job.js';
import type { SlackActor } from '../SlackJobs.js';
import { plainTextOf } from '../slack-text.js';

type Ack = (answer?: { response_type: 'ephemeral'; text: string }) => Promise<void>;

/** `/imagine history`, `/imagine history workspace` (admins), `/imagine forget`; undefined for a prompt. */
export function historyCommandOf(slackText: string): { kind: 'mine' | 'workspace' | 'forget' } | undefined {
  const words = plainTextOf(slackText).trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 1 && words[0] === 'history') return { kind: 'mine' };
  if (words.length === 1 && words[0] === 'forget') return { kind: 'forget' };
  if (words.length === 2 && words[0] === 'history' && words[1] === 'workspace') return { kind: 'workspace' };
  return undefined;
}

/** Answers privately through the command's response URL. */
export async function answerHistoryCommand(context: BotContext, actor: SlackActor, command: NonNullable<ReturnType<typeof historyCommandOf>>, ack: Ack, respond: RespondFn): Promise<void> {
  const history = context.runner.history;
  if (!history) {
    await ack({ response_type: 'ephemeral', text: ':raised_hand: This bot keeps no history.' });
    return;
  }
  await ack();
  const requester = context.jobs.requester(actor);
  let answer: { text: string; blocks?: types.KnownBlock[] };
  try {
    if (command.kind === 'forget') {
      const count = await history.forget(requester);
      answer = { text: `:broom: Erased your history (${count} ${count === 1 ? 'job' : 'jobs'}). Images already posted stay in their channels.` };
    } else if (command.kind === 'workspace') {
      const entries = await history.ofScope(requester);
      answer = entries ? await renderHistory(context, entries, '*This workspace’s recent images*', true) : { text: ':raised_hand: Only an admin of this workspace can see its history.' };
    } else {
      answer = await renderHistory(context, await history.mine(requester), '*Your last images* (only you see this)', false);
    }
  } catch (error) {
    context.logger.error({ err: error, what: `history ${command.kind}` }, 'a history command failed');
    answer = { text: ':warning: Something went wrong on my side; try again in a moment.' };
  }
  await respond({ response_type: 'ephemeral', replace_original: false, ...answer });
}

/**
 * One section per job, newest first: when, where, the prompt, options and
 * cost, a link to its message (while the request is kept), and a Reroll
 * button that runs it again in its channel, counted against whoever clicks.
 */
async function renderHistory(context: BotContext, entries: readonly HistoryEntry[], title: string, withAuthor: boolean): Promise<{ text: string; blocks: types.KnownBlock[] }> {
  if (entries.length === 0) return { text: `${title}\nNothing yet.`, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: `${title}\nNothing yet.` } }] };
  const lines = await Promise.all(
    entries.map(async (e, i) => {
      const when = `<!date^${Math.floor(e.at / 1000)}^{date_short_pretty} {time}|${new Date(e.at).toISOString()}>`;
      const prompt = e.prompt.length > 80 ? `${e.prompt.slice(0, 79)}…` : e.prompt;
      const cost = e.costUsd === undefined ? e.status : formatUsd(e.costUsd);
      const request = await context.store.get(e.key).catch(() => undefined);
      const where = request?.messageTs ? ` · <https://slack.com/archives/${request.channelId}/p${request.messageTs.replace('.', '')}|message>` : '';
      return `${i + 1}. ${when}${withAuthor ? ` <@${e.userId}>` : ''} in <#${e.channelId}> “${prompt.replace(/[\n`<>&]/g, ' ')}” · ${e.n} × ${e.size ?? 'default size'}, ${e.quality ?? 'default quality'} · ${cost}${where}`;
    }),
  );
  const blocks: types.KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: title } },
    ...lines.map(
      (line, i): types.KnownBlock => ({
        type: 'section',
        text: { type: 'mrkdwn', text: line },
        accessory: { type: 'button', action_id: ACTIONS.reroll, text: { type: 'plain_text', text: 'Reroll' }, value: entries[i]!.key },
      }),
    ),
  ];
  return { text: [title, ...lines].join('\n'), blocks };
}
