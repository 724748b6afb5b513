import { CLAIM_WAIT_MS } from 'pictor/internal';
import { newClaimToken, type Space } from './StateStore.js';

type Claims = Pick<Space<unknown>, 'claimOnce' | 'releaseClaim'>;

/** A `claimWithin` call: answered once, with the claim's answer or a refusal. */
interface Caller {
  /** Whether it still waits for an answer (its wait has not run out, or it keeps a late answer). */
  waiting(): boolean;
  /** Answers the call; false when it was answered before: the answer is then nobody's. */
  answer(taken: boolean): boolean;
  fail(error: Error): void;
}

/**
 * The claims under way in this process (sent, not answered yet), by space and key, each with the later calls of its
 * key waiting on it: a later call of the same key waits for the one under way.
 */
const flights = new WeakMap<Claims, Map<string, Caller[]>>();

/**
 * Takes a key once in the bots' shared state (`claimOnce`), waiting at most `CLAIM_WAIT_MS`: true when first, false
 * when taken before; rejects when the state fails or is late, and the caller refuses what the claim guards.
 *
 * A late claim that took the key would leave a refused request's retry dropped for good. So, in this process, a call
 * for a key whose claim is under way waits for that claim instead of sending its own (it would lose to it); a late
 * claim that took the key hands it to the first call still waiting, else gives it back (`releaseClaim`, this claim
 * only); one that failed or lost lets the waiting calls claim for themselves. Across processes a retry still loses to
 * a late claim until it is given back.
 *
 * With `keepLate`, a call whose wait runs out is refused with a `LateClaim`, whose `late` is its claim's own answer:
 * a key it took is kept, not given back nor handed on.
 */
export function claimWithin(space: Claims, key: string, options: { waitMs?: number; keepLate?: boolean } = {}): Promise<boolean> {
  const { waitMs = CLAIM_WAIT_MS, keepLate = false } = options;
  return new Promise<boolean>((resolve, reject) => {
    let answered = false;
    // Where the answer goes: this call's promise, or once its wait ran out with `keepLate`, its late answer.
    let to = { resolve, reject };
    const timer = setTimeout(() => {
      answered = !keepLate;
      const late = keepLate ? new Promise<boolean>((resolveLate, rejectLate) => (to = { resolve: resolveLate, reject: rejectLate })) : undefined;
      late?.catch(() => undefined);
      reject(late ? new LateClaim(late) : new Error('the state store did not answer in time'));
    }, waitMs);
    timer.unref?.();
    const caller: Caller = {
      waiting: () => !answered,
      answer(taken) {
        if (answered) return false;
        answered = true;
        clearTimeout(timer);
        to.resolve(taken);
        return true;
      },
      fail(error) {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        to.reject(error);
      },
    };
    claim(space, key, caller);
  });
}

/** The refusal of a `claimWithin` call with `keepLate` whose wait ran out: `late` is its claim's answer, when it comes. */
export class LateClaim extends Error {
  constructor(readonly late: Promise<boolean>) {
    super('the state store did not answer in time');
  }
}

/** Sends `caller`'s claim, or has it wait for the one of the key under way here. */
function claim(space: Claims, key: string, caller: Caller): void {
  if (!caller.waiting()) return;
  let underWay = flights.get(space);
  if (!underWay) flights.set(space, (underWay = new Map()));
  const earlier = underWay.get(key);
  if (earlier) {
    // A call whose wait ran out is dropped here, so a slow spell holds no more than the calls still waiting.
    earlier.splice(0, earlier.length, ...earlier.filter((heir) => heir.waiting()), caller);
    return;
  }
  const waiting: Caller[] = [];
  underWay.set(key, waiting);
  const token = newClaimToken();
  const settle = (): Caller[] => {
    if (underWay.get(key) === waiting) underWay.delete(key);
    if (underWay.size === 0) flights.delete(space);
    return waiting;
  };
  space.claimOnce(key, token).then(
    (taken) => {
      const heirs = settle();
      if (!taken) {
        caller.answer(false);
        // Taken before (here, or by another process): each call waiting asks for itself, in order (it may have been given back since).
        for (const heir of heirs) claim(space, key, heir);
        return;
      }
      // Late, having taken the key: the first call still waiting takes it over, else it is given back.
      const holder = caller.answer(true) || heirs.some((heir) => heir.answer(true));
      if (!holder) void space.releaseClaim(key, token).catch(() => undefined);
      for (const heir of heirs) heir.answer(false);
    },
    (error: unknown) => {
      const heirs = settle();
      caller.fail(error instanceof Error ? error : new Error(String(error)));
      // The state failed this claim: each call waiting on it asks again for itself, in order.
      for (const heir of heirs) claim(space, key, heir);
    },
  );
}
