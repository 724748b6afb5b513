import type { webApi } from '@slack/bolt';
import type { JobInfo } from '../runner/index.js';
import { describeFinishedJob } from './render-job.js';
import type { RequestStore } from './RequestStore.js';

/**
 * What a Cancel pressed on a finished job's message answers, privately, while
 * that message still shows the job running (its "Done" is a `chat.update`,
 * which waits for the workspace's budget when many jobs end together): that
 * the job is done, and where its images and their buttons are (a link to
 * them, from `chat.getPermalink`). Read from the saved request, so it answers
 * on every replica, and from the runner's word while the images are still
 * being posted. Undefined when the job did not finish (it failed, was
 * cancelled, or is not known here).
 */
export async function finishedJobNote(input: {
  client: webApi.WebClient;
  store: RequestStore;
  /** From the Cancel button's value (undefined on buttons made before it carried it). */
  requestId: string | undefined;
  /** The workspace of the click: a request of another workspace is not told about. */
  teamId: string;
  /** What this process's runner says of the job, if it ran here. */
  runnerStatus: JobInfo['status'] | undefined;
  /** The language of whoever pressed Cancel (the note is theirs alone). */
  locale?: string | undefined;
}): Promise<string | undefined> {
  const { locale } = input;
  const saved = input.requestId ? await input.store.get(input.requestId) : undefined;
  const request = saved?.teamId === input.teamId ? saved : undefined;
  const actions = request?.actionsMessage;
  if (actions && request) {
    if (actions.channelId !== request.channelId) return describeFinishedJob({ inDirectMessages: true }, locale);
    const link = await input.client.chat
      .getPermalink({ channel: actions.channelId, message_ts: actions.ts })
      .then((result) => result.permalink)
      .catch(() => undefined);
    return describeFinishedJob({ actionsAt: link }, locale);
  }
  // Its images are saved and their buttons are on their way; or the runner has it done and they are being posted.
  if (request?.outputFiles.length || input.runnerStatus === 'completed') return describeFinishedJob({ posting: true }, locale);
  return undefined;
}
