import { RecentKeys, say } from '../../runner/index.js';
import { localeIn } from '../user-locales.js';
import type { App } from '@slack/bolt';
import { ephemeralVia, type BotContext } from '../bot-context.js';
import { FLAG_NAMES, parseImagineText, usageText } from '../imagine-text.js';
import { imageFilesOf, imagesOf, type SlackFileRef } from '../input-images.js';
import { refuseInput } from '../refuse-input.js';
import { slackErrorCode } from '../slack-error-code.js';
import { requestIdOfJobMessage } from '../render-job.js';
import { mentions, withoutMention } from '../slack-text.js';
import { imagineCommandOf } from './imagine-command.js';
import { isPreviewFileName } from '../upload-files.js';
import type { Workspace } from '../workspace.js';
import { claimWithin, digestKeyOf, type Space } from '../../state/index.js';

interface Mention {
  channelId: string;
  ts: string;
  threadTs: string | undefined;
  userId: string;
  teamId: string;
  text: string;
  files: unknown;
  /** An `app_mention` event may leave out the message's files. */
  mayLackFiles: boolean;
  isDirectMessage: boolean;
  /** The workspace the message came from: its token reads the conversation and the files. */
  workspace: Workspace;
  /** The member's language (`UserLocales`). */
  locale: string | undefined;
}

/**
 * "@Pictor make the sky purple" in a message with images edits those images;
 * in a thread without its own images it edits the latest images of the thread
 * (Pictor's results included); with no image in reach it makes a new image.
 * In a direct message no mention is needed. Slack sends the `message` event
 * (which carries a file share's files) and an `app_mention` (which may not);
 * whichever comes first handles the message, looking its files up when needed.
 * A text that `/imagine` reads as a command (`admin …`, `settings …`, `history`)
 * is no prompt here either: the member is told privately to use the command.
 *
 * A message is taken once in the bots' shared state (`taken`: the `slack-messages` space, by workspace, channel and
 * ts) before anything is answered or charged: its two events, Slack's retries of either (signed again, so the replay
 * guard lets them through) and Socket Mode's redeliveries answer it once, on whichever replica each reaches and after
 * a restart. Every event asks `claimWithin`, the one mechanism: an event whose twin's claim is still under way in
 * this process waits for that claim (it is 'already' once the twin took the message, or claims for itself when the
 * twin's claim failed). When the state cannot answer — an error, or no answer within `CLAIM_WAIT_MS` (a Redis down
 * queues the claim) — the message starts no job (it may be a paid one), as the replay guard refuses a request it
 * cannot check: the member is told privately that it failed on our side, and that is logged; its other event or a
 * redelivery is tried again (failing again, it is neither told nor logged as an error a second time).
 */
export function registerMentions(app: App, context: BotContext, taken: Pick<Space<unknown>, 'claimOnce' | 'releaseClaim' | 'definition'>): void {
  const told = RecentKeys.for(taken);

  app.event('app_mention', async ({ event, body, context: auth }) => {
    if (!event.user || (event as { bot_id?: string }).bot_id) return;
    await handle({
      channelId: event.channel,
      ts: event.ts,
      threadTs: event.thread_ts,
      userId: event.user,
      teamId: (body as { team_id?: string }).team_id ?? event.team ?? '',
      text: event.text,
      files: (event as { files?: unknown }).files,
      mayLackFiles: true,
      isDirectMessage: false,
      workspace: context.workspace(auth),
      locale: localeIn(auth),
    });
  });

  app.message(async ({ message, body, context: auth }) => {
    const m = message as {
      subtype?: string;
      bot_id?: string;
      user?: string;
      text?: string;
      ts: string;
      thread_ts?: string;
      channel: string;
      channel_type?: string;
      files?: unknown;
      team?: string;
    };
    if ((m.subtype && m.subtype !== 'file_share') || m.bot_id || !m.user) return;
    const isDirectMessage = m.channel_type === 'im';
    const workspace = context.workspace(auth);
    if (!isDirectMessage && !mentions(m.text ?? '', workspace.botUserId)) return;
    await handle({
      channelId: m.channel,
      ts: m.ts,
      threadTs: m.thread_ts,
      userId: m.user,
      teamId: (body as { team_id?: string }).team_id ?? m.team ?? '',
      text: m.text ?? '',
      files: m.files,
      mayLackFiles: false,
      isDirectMessage,
      workspace,
      locale: localeIn(auth),
    });
  });

  /**
   * 'taken' for the first of a message's events and deliveries, in every process sharing the state; 'already' after;
   * 'failed' when the state did not answer in time (nothing is kept of it here, so a later delivery is tried again),
   * and 'failed again' when the member was already told of a failure for this message.
   */
  async function take(mention: Mention): Promise<'taken' | 'already' | 'failed' | 'failed again'> {
    const key = `${mention.teamId}:${mention.channelId}:${mention.ts}`;
    const where = { team: mention.teamId, channel: mention.channelId, ts: mention.ts };
    try {
      if (await claimWithin(taken, digestKeyOf(key))) return 'taken';
      context.logger.debug(where, 'a Slack message already taken: not answered again');
      return 'already';
    } catch (err) {
      if (!told.first(key)) {
        context.logger.debug({ err, ...where }, 'could not check a Slack message again: no job started, the member was told already');
        return 'failed again';
      }
      context.logger.error({ err, ...where }, 'could not check a Slack message against the ones taken lately: no job started, the member is told');
      return 'failed';
    }
  }

  async function handle(mention: Mention): Promise<void> {
    const taking = await take(mention);
    if (taking === 'already' || taking === 'failed again') return;
    const { botUserId, client } = mention.workspace;
    const notify = ephemeralVia({ client, writer: context.writer }, { channelId: mention.channelId, userId: mention.userId, threadTs: mention.threadTs ?? mention.ts });
    if (taking === 'failed') {
      await notify(`:warning: ${say(mention.locale, 'error.on_my_side')}`);
      return;
    }
    const text = withoutMention(mention.text, botUserId);
    // `/imagine`'s own commands (admin, usage, styles, history, defaults) make no image here: a pointer to `/imagine`.
    if (imagineCommandOf(text)) {
      await notify(say(mention.locale, 'slack.mention.use_command', { command: `\`${context.commands.imagine} …\`` }));
      return;
    }
    let parsed;
    try {
      parsed = parseImagineText(text, { example: say(mention.locale, 'slack.mention.example'), locale: mention.locale });
    } catch (error) {
      // A flag refused before the runner is asked: the line is the bot's.
      await refuseInput(context.logger, mention, error, notify);
      return;
    }
    if (parsed.kind === 'help') {
      await notify(usageText(context.commands, mention.locale));
      return;
    }
    let files = imageFilesOf(mention.files);
    if (files.length === 0 && mention.mayLackFiles) files = await filesOfMessage(mention);
    if (files.length === 0 && mention.threadTs) files = await latestImagesOfThread(mention);
    const actor = { userId: mention.userId, teamId: mention.teamId, channelId: mention.channelId, locale: mention.locale };
    const threadTs = mention.isDirectMessage ? mention.threadTs : (mention.threadTs ?? mention.ts);
    let images;
    try {
      images = files.length === 0 ? undefined : imagesOf(files, { client, token: mention.workspace.botToken, allowedHosts: context.allowedHosts });
    } catch (error) {
      // Too many images, too large, not images by what Slack says of them: nothing asked of the runner, so the line is
      // the bot's, by the runner's one rule (the member's: info, with the image's code).
      await refuseInput(context.logger, mention, error, notify);
      return;
    }
    // One call to the runner's intake: a refusal is told privately; an edit's images are downloaded once it is admitted.
    // A job that cannot be started (its request cannot be saved) is told privately by `SlackJobs.start`: it failed on our side.
    await context.jobs.start({
      kind: images ? 'edit' : 'generate',
      prompt: parsed.prompt,
      options: parsed.options,
      style: parsed.style,
      private: parsed.private,
      fieldNames: FLAG_NAMES,
      images,
      inputFiles: images && files.map((f) => ({ id: f.id, name: f.name })),
      actor,
      threadTs,
      notify,
      client,
    });
  }

  /** The final images of the job whose message has these blocks (none when it is not a job's message, or has none yet). */
  async function resultsOfJobMessage(blocks: unknown, teamId: string): Promise<SlackFileRef[]> {
    const requestId = requestIdOfJobMessage(blocks);
    const request = requestId ? await context.store.get(requestId) : undefined;
    return request?.teamId === teamId ? request.outputFiles.map((f) => ({ id: f.id, name: f.name })) : [];
  }

  /** The mentioning message's own files, read back from the conversation. */
  async function filesOfMessage(mention: Mention): Promise<SlackFileRef[]> {
    try {
      const inThread = mention.threadTs && mention.threadTs !== mention.ts;
      const result = inThread
        ? await mention.workspace.client.conversations.replies({ channel: mention.channelId, ts: mention.threadTs!, latest: mention.ts, inclusive: true, limit: 200 })
        : await mention.workspace.client.conversations.history({ channel: mention.channelId, latest: mention.ts, inclusive: true, limit: 1 });
      const message = (result.messages ?? []).find((m) => m.ts === mention.ts);
      return imageFilesOf(message?.files);
    } catch (error) {
      context.logger.warn({ code: slackErrorCode(error) }, 'could not read the files of a mention');
      return [];
    }
  }

  /**
   * The images of the latest message before the mention, in its thread, that
   * has any. In the thread of a job's message, whose final images are posted
   * beside it in the channel, the job's previews give way to those images, and
   * so does a thread without any image: previews are best-effort (none when
   * they are off, or when the job ended before their turn).
   */
  async function latestImagesOfThread(mention: Mention): Promise<SlackFileRef[]> {
    try {
      const result = await mention.workspace.client.conversations.replies({ channel: mention.channelId, ts: mention.threadTs!, latest: mention.ts, inclusive: false, limit: 200 });
      const earlier = (result.messages ?? []).filter((m) => m.ts !== mention.ts && Number(m.ts) < Number(mention.ts));
      const parent = earlier.find((m) => m.ts === mention.threadTs);
      for (const message of earlier.reverse()) {
        const files = imageFilesOf(message.files);
        if (!files.length) continue;
        if (files.every((f) => isPreviewFileName(f.name))) {
          const results = await resultsOfJobMessage(parent?.blocks, mention.teamId);
          if (results.length) return results;
        }
        return files;
      }
      return await resultsOfJobMessage(parent?.blocks, mention.teamId);
    } catch (error) {
      context.logger.warn({ code: slackErrorCode(error) }, 'could not read the thread of a mention');
    }
    return [];
  }
}
