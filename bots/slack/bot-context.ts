import type { Context, webApi } from '@slack/bolt';
import { editModal, type EditContext } from './edit-modal.js';
import { slackErrorCode } from './slack-error-code.js';
import { say } from '../runner/index.js';
import type { LoggerLike } from 'pictor';
import type { ChannelWriter } from './ChannelWriter.js';
import type { FileHost } from './file-hosts.js';
import type { RequestStore } from './RequestStore.js';
import type { SlackJobRunner, SlackJobs } from './SlackJobs.js';
import type { Notifier } from './SlackJobView.js';
import type { Workspace } from './workspace.js';
import type { HomeTabs } from './home-tab.js';
import type { UserLocales } from './user-locales.js';
import type { UserGroups } from './user-groups.js';

/** What every listener gets: the pieces of one running Slack bot. */
export interface BotContext {
  jobs: SlackJobs;
  runner: SlackJobRunner;
  store: RequestStore;
  writer: ChannelWriter;
  /**
   * The workspace a request came from (its bot token, client and bot user
   * id), from Bolt's `context`: every Web API call for a request, and for the
   * job it starts, uses the token of the request's workspace.
   */
  workspace(auth: Context): Workspace;
  allowedHosts: readonly FileHost[];
  /** Each member's Home tab (published on `app_home_opened`, again when what it shows changes). */
  homes: HomeTabs;
  /** Each member's language, asked of Slack once (`users.info`); the middleware puts it in Bolt's `context.locale`. */
  locales: UserLocales;
  /** Each workspace's user groups (`usergroups.list`): who holds a group's budget, and a group by its handle. */
  groups: UserGroups;
  logger: LoggerLike;
  commands: { imagine: string; edit: string };
}

/** Message shortcut and modal ids, as in the app manifest. */
export const SHORTCUT_EDIT_IMAGE = 'pictor_edit_image';

/** Statuses a `response_url` answers once it is used up (5 uses) or expired (30 minutes): its note reached nobody. */
const RESPONSE_URL_GONE = new Set([404, 410]);

/**
 * A private note through a `response_url` (from a command, shortcut or button; valid 30 minutes, 5 uses). Rejects when
 * it cannot be reached, or answers that it is used up or expired (404, 410): the note reached nobody. Another refusal
 * is logged. Only through `privateAnswerVia`, which takes such a note to the member's direct messages.
 */
function respondVia(responseUrl: string, logger: LoggerLike): Notifier {
  return async (text) => {
    const response = await fetch(responseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text }),
      signal: AbortSignal.timeout(15_000),
    });
    await response.arrayBuffer();
    if (RESPONSE_URL_GONE.has(response.status)) throw new ResponseUrlGoneError(response.status);
    if (!response.ok) logger.warn({ status: response.status }, 'a response_url refused a private note');
  };
}

/** A `response_url` used up or expired: what it answered (404, 410). */
class ResponseUrlGoneError extends Error {
  override readonly name = 'ResponseUrlGoneError';
  constructor(readonly status: number) {
    super(`the response_url answered ${status}: used up or expired`);
  }
}

/** A private note in a channel (or thread) through chat.postEphemeral, paced with the channel's other writes. */
export function ephemeralVia(context: Pick<Workspace, 'client'> & Pick<BotContext, 'writer'>, where: { channelId: string; userId: string; threadTs?: string | undefined }): Notifier {
  return async (text) => {
    await context.writer.write(where.channelId, {
      urgent: true,
      run: () =>
        context.client.chat.postEphemeral({
          channel: where.channelId,
          user: where.userId,
          text,
          ...(where.threadTs ? { thread_ts: where.threadTs } : {}),
        }),
    });
  };
}

/**
 * A note in the member's direct messages with the app (its Messages tab), paced with the conversation's other writes:
 * for what comes from the Home tab, which has no `response_url` and no channel.
 */
export function directVia(context: Pick<BotContext, 'writer'>, client: webApi.WebClient, userId: string): Notifier {
  return async (text) => {
    await context.writer.write(userId, { urgent: true, run: () => client.chat.postMessage({ channel: userId, text }) });
  };
}

/**
 * A private answer to a member's press, command or form: through its response URL, else in their direct messages with
 * the app — where there is none (the Home tab gives none), or it cannot be reached, or it answers that it is used up or
 * expired (404, 410) — so a refusal, a private result's note or a job given up as it starts is never left untold.
 */
export function privateAnswerVia(context: Pick<BotContext, 'writer' | 'logger' | 'workspace'>, auth: Context, where: { userId: string; responseUrl?: string | undefined }): Notifier {
  const direct: Notifier = (text) => directVia(context, context.workspace(auth).client, where.userId)(text);
  if (!where.responseUrl) return direct;
  const respond = respondVia(where.responseUrl, context.logger);
  return async (text) => {
    try {
      await respond(text);
    } catch (error) {
      if (error instanceof ResponseUrlGoneError) {
        context.logger.warn({ status: error.status }, 'a response_url is used up or expired: its private note goes to the member’s direct messages');
      } else {
        // Its code only (fetch keeps the system's in its cause): the URL itself is a credential of the press.
        const code = slackErrorCode(error) ?? slackErrorCode((error as { cause?: unknown } | undefined)?.cause) ?? (error instanceof Error ? error.name : undefined);
        context.logger.warn({ code }, 'a response_url could not be reached: its private note goes to the member’s direct messages');
      }
      await direct(text);
    }
  };
}

/** Opens the edit modal for a trigger (valid 3 s); a failure is logged and the person told privately. */
export async function openEditModal(context: Pick<BotContext, 'logger'>, client: webApi.WebClient, triggerId: string, notify: Notifier, edit: EditContext, locale?: string): Promise<void> {
  try {
    await client.views.open({ trigger_id: triggerId, view: editModal(edit, locale) });
  } catch (error) {
    context.logger.warn({ code: slackErrorCode(error) }, 'could not open the edit modal');
    await notify(say(locale, 'slack.edit.could_not_open'));
  }
}
