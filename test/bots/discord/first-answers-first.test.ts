import { afterEach, describe, expect, it, vi } from 'vitest';
import { FIRST_ANSWER_WAIT_MS, FirstAnswersInFlight } from '../../../bots/discord/first-answers-first.js';

/** A first answer on its way: `answer` settles it as Discord's reply would. */
function pendingAnswer(inFlight: FirstAnswersInFlight, fails = false) {
  let answer!: () => void;
  const sent = inFlight.track(new Promise<void>((resolve, reject) => (answer = fails ? () => reject(new Error('10062')) : resolve)));
  sent.catch(() => undefined);
  return answer;
}

/** Whether `promise` has settled once the work queued now has run. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('work that waits behind the first answers', () => {
  it('goes at once when no first answer is in flight', async () => {
    await expect(settledYet(new FirstAnswersInFlight().behind())).resolves.toBe(true);
  });

  it('waits for every first answer asked before it, answered or refused, in any order', async () => {
    const inFlight = new FirstAnswersInFlight();
    const first = pendingAnswer(inFlight);
    const second = pendingAnswer(inFlight, true);
    const edit = inFlight.behind();
    second();
    expect(await settledYet(edit)).toBe(false);
    first();
    expect(await settledYet(edit)).toBe(true);
    expect(inFlight.size).toBe(0);
  });

  it('is not held by first answers asked after it, so a stream of interactions cannot starve it', async () => {
    const inFlight = new FirstAnswersInFlight();
    const before = pendingAnswer(inFlight);
    const edit = inFlight.behind();
    const later = pendingAnswer(inFlight);
    before();
    expect(await settledYet(edit)).toBe(true);
    later();
  });

  it('lets waiting work go in the order it asked, each after its own first answers', async () => {
    const inFlight = new FirstAnswersInFlight();
    const a = pendingAnswer(inFlight);
    const early = inFlight.behind();
    const b = pendingAnswer(inFlight);
    const late = inFlight.behind();
    b();
    expect([await settledYet(early), await settledYet(late)]).toEqual([false, false]);
    a();
    expect([await settledYet(early), await settledYet(late)]).toEqual([true, true]);
  });

  it('waits no longer than Discord’s deadline for a first answer that never comes back', async () => {
    vi.useFakeTimers();
    const inFlight = new FirstAnswersInFlight();
    pendingAnswer(inFlight);
    const edit = inFlight.behind();
    await vi.advanceTimersByTimeAsync(FIRST_ANSWER_WAIT_MS - 1);
    let done = false;
    void edit.then(() => (done = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
  });

  it('leaves its fallback timer unref’d, so a stopping process is held up by the first answer in flight, never by the wait behind it', async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      const inFlight = new FirstAnswersInFlight();
      const answer = pendingAnswer(inFlight);
      const edit = inFlight.behind();
      const asked = timers.mock.calls.findIndex(([, ms]) => ms === FIRST_ANSWER_WAIT_MS);
      expect(asked).toBeGreaterThanOrEqual(0);
      expect((timers.mock.results[asked]!.value as NodeJS.Timeout).hasRef()).toBe(false);
      answer();
      await edit;
    } finally {
      timers.mockRestore();
    }
  });
});
