import type { webApi } from '@slack/bolt';
import type { LoggerLike } from 'pictor';
import { say } from '../runner/index.js';
import { slackErrorCode } from './slack-error-code.js';
import type { Notifier } from './SlackJobView.js';

/**
 * A member's own direct messages with the app (`conversations.open`), where their private job runs, and their Reroll or
 * Edit of a job asked in another member's direct messages: undefined when Slack would not open them (logged; the
 * member is told it failed on our side). Asked only once nothing waits on a trigger: an Edit asks it as its form is submitted, never before
 * the form opens (a trigger lasts 3 s, and Slack may be slow to answer this).
 */
export async function ownDirectMessages(
  context: { logger: LoggerLike },
  client: webApi.WebClient,
  userId: string,
  notify: Notifier,
  locale: string | undefined,
): Promise<string | undefined> {
  try {
    const opened = await client.conversations.open({ users: userId });
    if (opened.channel?.id) return opened.channel.id;
  } catch (error) {
    context.logger.warn({ code: slackErrorCode(error), user: userId }, 'could not open a member’s direct messages with the app; their job does not start');
  }
  await notify(`:warning: ${say(locale, 'error.on_my_side')}`).catch((error: unknown) => context.logger.warn({ code: slackErrorCode(error), user: userId }, 'could not tell a member that their direct messages could not be opened'));
  return undefined;
}
