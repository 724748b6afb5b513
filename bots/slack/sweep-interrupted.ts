import type { webApi } from '@slack/bolt';
import type { LoggerLike } from 'pictor';
import type { ChannelWriter } from './ChannelWriter.js';
import { DEFAULT_LOCALE } from '../runner/index.js';
import { renderJobMessage } from './render-job.js';
import type { RequestStore, SavedRequest } from './RequestStore.js';
import { slackErrorCode } from './slack-error-code.js';
import { retryTransient } from './slack-faults.js';

/**
 * A job whose process is gone (stopped, killed, or a replica whose lease
 * lapsed) still shows "Drawing…" and a Cancel button. Its message is updated
 * to say the job stopped when the bot restarted, with Reroll — or, when the
 * job had finished and its images were posted but the stop came before the
 * message said so (its "Done" waits for the workspace's update budget, and a
 * stopping bot sheds it), to show it done: without buttons when Reroll, Edit
 * and Delete were posted beside the images, with them when the stop came
 * before that. The request is then released (ended). Runs
 * for each request `RequestStore.claimInterrupted` hands this process, at
 * start and, with Redis, while running. Returns whether the message was
 * updated.
 */
export async function sweepInterrupted(input: {
  /** The Web API client of a request's workspace; undefined when the app is no longer installed there. */
  clientFor: (teamId: string) => Promise<webApi.WebClient | undefined>;
  writer: ChannelWriter;
  store: RequestStore;
  logger: LoggerLike;
  request: SavedRequest;
}): Promise<boolean> {
  const { writer, store, logger, request } = input;
  const finished = request.outputFiles.length > 0 ? request.result : undefined;
  let updated = false;
  const client = request.messageTs ? await input.clientFor(request.teamId).catch(() => undefined) : undefined;
  if (request.messageTs && client) {
    const rendered = renderJobMessage({
      kind: request.kind,
      prompt: request.prompt,
      options: request.options,
      userId: request.userId,
      inputCount: request.inputFiles.length,
      requestId: request.id,
      jobId: undefined,
      ...(finished
        ? { status: 'completed', completed: { ...finished, uploaded: true, actionsBeside: request.actionsMessage !== undefined } }
        : { status: 'cancelled', cancelled: { byUserId: '', reason: 'shutdown' } }),
      ahead: undefined,
      previewsShown: 0,
      locale: request.locale ?? DEFAULT_LOCALE,
    });
    try {
      await retryTransient(
        () =>
          writer.write(request.channelId, {
            urgent: true,
            budgeted: true,
            workspace: request.teamId,
            run: () => client.chat.update({ channel: request.channelId, ts: request.messageTs!, text: rendered.text, blocks: rendered.blocks }),
          }),
        [1000, 3000],
      );
      updated = true;
      logger.info({ channel: request.channelId }, finished ? 'showed the end of a job a stop cut off' : 'marked a job interrupted by a stop');
    } catch (error) {
      logger.warn({ channel: request.channelId, code: slackErrorCode(error) }, 'could not mark a job interrupted by a stop');
    }
  }
  await store.update(request.id, { status: 'ended' }).catch(() => undefined);
  return updated;
}
