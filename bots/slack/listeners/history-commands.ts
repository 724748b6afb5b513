import type { RespondFn } from '@slack/bolt';
import { formatUsd } from '../../../src/index.js';
import type { HistoryEntry } from '../../runner/index.js';
import type { BotContext } from '../bot-context.js';
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
  let text: string;
  try {
    if (command.kind === 'forget') {
      const count = await history.forget(requester);
      text = `:broom: Erased your history (${count} ${count === 1 ? 'job' : 'jobs'}). Images already posted stay in their channels.`;
    } else if (command.kind === 'workspace') {
      const entries = await history.ofScope(requester);
      text = entries ? renderHistory(entries, '*This workspace’s recent images*', true) : ':raised_hand: Only an admin of this workspace can see its history.';
    } else {
      text = renderHistory(await history.mine(requester), '*Your last images* (only you see this)', false);
    }
  } catch (error) {
    context.logger.error({ err: error, what: `history ${command.kind}` }, 'a history command failed');
    text = ':warning: Something went wrong on my side; try again in a moment.';
  }
  await respond({ response_type: 'ephemeral', replace_original: false, text });
}

function renderHistory(entries: readonly HistoryEntry[], title: string, withAuthor: boolean): string {
  if (entries.length === 0) return `${title}\nNothing yet.`;
  const lines = entries.map((e, i) => {
    const when = `<!date^${Math.floor(e.at / 1000)}^{date_short_pretty} {time}|${new Date(e.at).toISOString()}>`;
    const prompt = e.prompt.length > 80 ? `${e.prompt.slice(0, 79)}…` : e.prompt;
    const cost = e.costUsd === undefined ? e.status : formatUsd(e.costUsd);
    return `${i + 1}. ${when}${withAuthor ? ` <@${e.userId}>` : ''} in <#${e.channelId}> “${prompt.replace(/[\n`<>&]/g, ' ')}” · ${e.n} × ${e.size ?? 'default size'}, ${e.quality ?? 'default quality'} · ${cost}`;
  });
  return [title, ...lines].join('\n');
}
