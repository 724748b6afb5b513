import { describe, expect, it } from 'vitest';
import { InFlight } from '../../../bots/runner/in-flight.js';

function pending() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const work = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { work, resolve, reject };
}

/** Whether `promise` has settled once the pending callbacks have run. */
async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise<void>((resolve) => setImmediate(resolve));
  return done;
}

describe('the work a stop waits for', () => {
  it('is settled at once when nothing is in flight', async () => {
    expect(await hasSettled(new InFlight().settled())).toBe(true);
  });

  it('waits for every piece tracked, a failed one too, and forgets each once it settles', async () => {
    const inFlight = new InFlight();
    const ok = pending();
    const failing = pending();
    inFlight.track(ok.work);
    inFlight.track(failing.work);
    expect(inFlight.size).toBe(2);
    const settled = inFlight.settled();
    failing.reject(new Error('no post'));
    expect(await hasSettled(settled)).toBe(false);
    expect(inFlight.size).toBe(1);
    ok.resolve();
    expect(await hasSettled(settled)).toBe(true);
    expect(inFlight.size).toBe(0);
  });

  it('waits for work tracked while it waits, not only what was in flight when it began', async () => {
    const inFlight = new InFlight();
    const first = pending();
    const later = pending();
    inFlight.track(first.work);
    const settled = inFlight.settled();
    // A job being started when the stop began: tracked while the stop already waits.
    inFlight.track(later.work);
    first.resolve();
    expect(await hasSettled(settled)).toBe(false);
    later.resolve();
    expect(await hasSettled(settled)).toBe(true);
  });
});
