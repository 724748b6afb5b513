import type { LoggerLike } from 'pictor';
import { waitWithin } from 'pictor/internal';
import type { StopBudget } from './stop-once.js';
import { loggableError } from './loggable-error.js';

/** The pauses between the tries of the ends still owed: doubled from the first up to the last. */
const OWED_RETRY_MS = { first: 1_000, last: 15_000 };

/**
 * The ends of jobs the bots' state refused to write (a full Redis under noeviction, a full disk), kept in this process
 * and written again, with longer pauses, until the state takes them; a stop tries them at once (`payNow`) and waits for
 * them within its grace (`payWithin`), ends whose first write is still under way too (refused, they are tried again at
 * once). Each job's ends are written in the order they were owed. A job whose end is owed stays
 * held by this process; only a stop or a crash before it is written leaves it to a sweep, which says the job stopped.
 * Nothing is written once the state is closing: its lease given back, another process's sweep may hold the job by then
 * (on Redis a write would still be taken, and would drop that hold). One for each surface's store of jobs (Discord's
 * job records, Slack's requests).
 */
export class OwedWrites {
  /** The writes owed, by their job's key, in order. */
  readonly #owed = new Map<string, (() => Promise<unknown>)[]>();
  /** The first writes still under way (`writeOrOwe`), each settled once written or owed; never rejected. */
  readonly #trying = new Set<Promise<void>>();
  readonly #logger: LoggerLike;
  /** Whether the state is closing (`StateStore.closing`): the loop ends, what is still owed lost. */
  readonly #closing: () => boolean;
  /** The loop writing the owed ends again, while there are some. */
  #paying: Promise<void> | undefined;
  /** Ends the pause before the next try (`payNow`). */
  #wake: (() => void) | undefined;
  /** `payNow` asked during a round: the next one starts without its pause. */
  #wakeAsked = false;

  constructor(logger: LoggerLike, closing: () => boolean) {
    this.#logger = logger;
    this.#closing = closing;
  }

  /** How many ends are owed, with those whose first write is still under way. */
  get count(): number {
    return [...this.#owed.values()].reduce((n, writes) => n + writes.length, this.#trying.size);
  }

  /** Settled once no end is owed nor under way (written, or the state closed). */
  get paid(): Promise<void> {
    return this.#settled(false);
  }

  /** Tries the owed ends now, not after the pause (a stop's grace is short). */
  payNow(): void {
    if (!this.#paying) return;
    this.#wakeAsked = true;
    this.#wake?.();
  }

  /**
   * A job's end written now (`first`: `write`, or the caller's own tries of it); refused, it is owed (`owe`) and the
   * refusal thrown.
   */
  async writeOrOwe(key: string, write: () => Promise<unknown>, first: () => Promise<unknown> = write): Promise<void> {
    const tried = (async () => {
      try {
        await first();
      } catch (error) {
        this.owe(key, write);
        throw error;
      }
    })();
    // Counted until written or owed, so a stop that comes meanwhile waits for it (`payWithin`).
    const trying: Promise<void> = tried.then(
      () => void this.#trying.delete(trying),
      () => void this.#trying.delete(trying),
    );
    this.#trying.add(trying);
    return tried;
  }

  /**
   * A stop's last call for the owed ends: tried at once, and waited for at most `ms`, never past the stop's deadline.
   * With no time left (a zero grace, a deadline passed) none is tried: the process must go now. Those still owed then
   * are logged once, as an error naming how many are lost (the next sweep may say their jobs stopped).
   */
  async payWithin(budget: StopBudget, ms: number): Promise<void> {
    if (this.count === 0) return;
    const left = waitWithin(Math.max(0, ms), budget.until());
    if (left > 0) {
      if (await budget.within(this.#settled(true), left)) return;
    }
    this.#logger.error({ owed: this.count }, 'stopped with job ends the state still refuses; the next sweep may say those jobs stopped');
  }

  /** Keeps an end to write again, after the others owed of its job; starts the loop writing them if it is not running. */
  owe(key: string, write: () => Promise<unknown>): void {
    this.#owed.set(key, [...(this.#owed.get(key) ?? []), write]);
    this.#logger.warn({ jobKey: key }, 'could not mark a job ended; kept here and written again until the state takes it');
    this.#paying ??= this.#pay().finally(() => {
      this.#paying = undefined;
      // A `payNow` of the last round is spent: ends owed later wait for their pause.
      this.#wakeAsked = false;
    });
  }

  /**
   * Settled once no end is owed nor under way: the first writes waited for, then the loop, again while either is left.
   * `hurry` (a stop): each round of the loop tried at once, ends refused meanwhile too.
   */
  async #settled(hurry: boolean): Promise<void> {
    while (this.#trying.size > 0 || this.#paying) {
      await Promise.all(this.#trying);
      if (hurry) this.payNow();
      await this.#paying;
    }
  }

  /** Writes the owed ends again, each job's in order, pausing longer after each round that left some, until none is left. */
  async #pay(): Promise<void> {
    for (let pause = OWED_RETRY_MS.first; this.#owed.size > 0; pause = Math.min(pause * 2, OWED_RETRY_MS.last)) {
      if (!this.#wakeAsked) {
        await new Promise<void>((resolve) => {
          // Not keeping the process alive: a stop waits for it (`payWithin`), a closed state ends it.
          const timer = setTimeout(resolve, pause).unref();
          this.#wake = () => (clearTimeout(timer), resolve());
        });
      }
      this.#wake = undefined;
      this.#wakeAsked = false;
      for (const [key, writes] of [...this.#owed]) {
        while (writes.length > 0) {
          // A closing state takes nothing more: what is still owed is lost with this process (logged), left to a sweep.
          if (this.#closing()) return this.#lose();
          try {
            await writes[0]!();
            writes.shift();
          } catch (error) {
            if ((error as { code?: unknown }).code === 'state_closed') return this.#lose();
            this.#logger.warn({ err: loggableError(error), jobKey: key }, 'could not mark a job ended; trying again later');
            break;
          }
        }
        if (writes.length === 0) {
          this.#owed.delete(key);
          this.#logger.info({ jobKey: key }, 'marked a job ended that the state refused before');
        }
      }
    }
  }

  /** Logs each job whose end is lost (the state closed first), and forgets them. */
  #lose(): void {
    for (const [lost, left] of this.#owed) this.#logger.error({ jobKey: lost, ends: left.length }, 'the end of a job could not be saved before the state closed; the next sweep may say it stopped');
    this.#owed.clear();
  }
}
