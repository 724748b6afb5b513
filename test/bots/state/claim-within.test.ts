import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { claimWithin, FileStateStore, type Space, type SpaceDefinition } from '../../../bots/state/index.js';
import { testTempDir } from '../../helpers/temp-dir.js';

const TAKEN: SpaceDefinition = { name: 'taken', dir: 'taken', ttlMs: 60_000, maxValueBytes: 64 };

/** A data folder's space whose claims answer only when `answer()` is called (a state slow, not down). */
async function slowSpace() {
  const store = new FileStateStore({ dataDir: await testTempDir('pictor-claim-within-') });
  onTestFinished(() => store.close());
  const space = store.space<unknown>(TAKEN);
  const held: (() => void)[] = [];
  const landed: boolean[] = [];
  const released: string[] = [];
  const slow: Pick<Space<unknown>, 'claimOnce' | 'releaseClaim'> = {
    claimOnce: (key, token) =>
      new Promise<void>((resolve) => held.push(resolve))
        .then(() => space.claimOnce(key, token))
        .then((taken) => (landed.push(taken), taken)),
    releaseClaim: (key, token) => space.releaseClaim(key, token).then(() => void released.push(key)),
  };
  return { space, slow, landed, released, answer: () => held.splice(0).forEach((go) => go()) };
}

describe('a claim within the claim wait', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers the claim when the state answers in time: true the first time, false after', async () => {
    const { slow, answer } = await slowSpace();
    const first = claimWithin(slow, 'k1', 60_000);
    answer();
    expect(await first).toBe(true);
    const second = claimWithin(slow, 'k1', 60_000);
    answer();
    expect(await second).toBe(false);
  });

  it('is refused when the state does not answer in time; the claim landing after, having taken the key, gives it back, so a retry takes it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { space, slow, landed, released, answer } = await slowSpace();
    const refused = claimWithin(slow, 'k1', 1_000);
    const check = expect(refused).rejects.toThrow('the state store did not answer in time');
    await vi.advanceTimersByTimeAsync(1_000);
    await check;
    vi.useRealTimers();
    answer();
    await vi.waitFor(() => expect(released).toEqual(['k1']));
    expect(landed).toEqual([true]);
    // The request's retry is the first to take the key.
    expect(await space.claimOnce('k1')).toBe(true);
  });

  it('leaves the key taken when the claim landing late finds it taken by another: that request is answered elsewhere', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { space, slow, landed, released, answer } = await slowSpace();
    expect(await space.claimOnce('k1')).toBe(true);
    const refused = claimWithin(slow, 'k1', 1_000);
    const check = expect(refused).rejects.toThrow('the state store did not answer in time');
    await vi.advanceTimersByTimeAsync(1_000);
    await check;
    vi.useRealTimers();
    answer();
    await vi.waitFor(() => expect(landed).toEqual([false]));
    expect(released).toEqual([]);
    expect(await space.claimOnce('k1')).toBe(false);
  });

  it('is refused with the state’s own error when the claim fails', async () => {
    const failing = { claimOnce: () => Promise.reject(new Error('the state does not answer')), releaseClaim: () => Promise.resolve() };
    await expect(claimWithin(failing, 'k1')).rejects.toThrow('the state does not answer');
  });
});
