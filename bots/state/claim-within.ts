import { CLAIM_WAIT_MS } from 'pictor/internal';
import { newClaimToken, type Space } from './StateStore.js';

/**
 * Takes a key once in the bots' shared state (`claimOnce`), waiting at most `CLAIM_WAIT_MS`: true when this request is
 * the first, false when the key was taken before; rejects when the state fails, or does not answer in time (a Redis
 * down queues the claim and answers when it is back), and the caller refuses what the claim guards.
 *
 * A claim that did not answer in time may still land later. Had it then taken the key, that key would be marked taken
 * for a request that was refused: the request's retry (Slack sends one, a proxy may) would find it taken and be
 * dropped, and nobody would ever be answered. So a claim that lands late having taken the key gives it back
 * (`releaseClaim`, of this claim only: a key taken again since stays taken): the retry takes it then. Giving it back may fail too (the state still failing): the key then stays
 * taken until the space's TTL, as it would have without this.
 */
export function claimWithin(space: Pick<Space<unknown>, 'claimOnce' | 'releaseClaim'>, key: string, waitMs: number = CLAIM_WAIT_MS): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    let late = false;
    const token = newClaimToken();
    const timer = setTimeout(() => {
      late = true;
      reject(new Error('the state store did not answer in time'));
    }, waitMs);
    timer.unref?.();
    space.claimOnce(key, token).then(
      (taken) => {
        clearTimeout(timer);
        if (!late) resolve(taken);
        else if (taken) void space.releaseClaim(key, token).catch(() => undefined);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
