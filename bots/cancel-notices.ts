import type { Requester } from './runner/types.js';
import type { Notice, Space } from './state/StateStore.js';

/**
 * Cancel across replicas (docs/shared-limits.md): replica B checks who may cancel (`mayCancel`) and asks the holder of
 * the job's record; the holder cancels through its runner, which checks `mayCancel` again (a notice grants nothing).
 */

/** Asks the live process holding the record `key` (where its job runs) to cancel it for `by`: true when that process got the request. */
export function askHolderToCancel(space: Pick<Space<unknown>, 'notifyHolder'>, key: string, by: Requester): Promise<boolean> {
  const { platform, userId, userName, channelId, scopeId, isAdmin } = by;
  return space.notifyHolder(key, { cancel: { platform, userId, userName, channelId, scopeId, isAdmin: isAdmin === true } });
}

/** Hands each request to cancel one of this process's jobs (by its record's key) to `cancel`. */
export function cancelWhenAsked(space: Pick<Space<unknown>, 'onNotice'>, cancel: (key: string, by: Requester) => unknown): Promise<void> {
  return space.onNotice((key, notice) => {
    const by = requesterIn(notice);
    if (by) void Promise.resolve(cancel(key, by)).catch(() => undefined);
  });
}

function requesterIn(notice: Notice): Requester | undefined {
  const by = notice.cancel as Partial<Record<keyof Requester, unknown>> | undefined;
  if (typeof by !== 'object' || by === null) return undefined;
  if ((by.platform !== 'discord' && by.platform !== 'slack') || typeof by.userId !== 'string' || typeof by.scopeId !== 'string' || typeof by.channelId !== 'string') return undefined;
  return {
    platform: by.platform,
    userId: by.userId,
    userName: typeof by.userName === 'string' ? by.userName : undefined,
    channelId: by.channelId,
    scopeId: by.scopeId,
    isAdmin: by.isAdmin === true,
  };
}
