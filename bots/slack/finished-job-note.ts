import type { webApi } from '@slack/bolt';
import type { JobInfo, Words } from '../runner/index.js';
import { finishedJobWords } from './render-job.js';
import type { SavedRequest } from './RequestStore.js';

/**
 * What a Cancel pressed on a finished job's message answers, privately, while
 * that message still shows the job running (its "Done" is a `chat.update`,
 * which waits for the workspace's budget when many jobs end together): that
 * the job is done, and where its images and their buttons are (a link to
 * them, from `chat.getPermalink`). Read from the saved request, so it answers
 * on every replica, and from the runner's word while the images are still
 * being posted: as words, said in the presser's language where they are told
 * (a refusal of the Cancel, `job_finished`). Undefined when the job did not
 * finish (it failed, was cancelled, or is not known here).
 */
export async function finishedJobNote(input: {
  client: webApi.WebClient;
  /** The job's saved request, as the press read it (of the presser's workspace: another's is not told about); undefined when not kept. */
  request: SavedRequest | undefined;
  /** What this process's runner says of the job, if it ran here. */
  runnerStatus: JobInfo['status'] | undefined;
}): Promise<Words | undefined> {
  const { request } = input;
  const actions = request?.actionsMessage;
  if (actions && request) {
    if (actions.channelId !== request.channelId) return finishedJobWords({ inDirectMessages: true });
    const link = await input.client.chat
      .getPermalink({ channel: actions.channelId, message_ts: actions.ts })
      .then((result) => result.permalink)
      .catch(() => undefined);
    return finishedJobWords({ actionsAt: link });
  }
  // Its images are saved and their buttons are on their way; or the runner has it done and they are being posted.
  if (request?.outputFiles.length || input.runnerStatus === 'completed') return finishedJobWords({ posting: true });
  return undefined;
}
