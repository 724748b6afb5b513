import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { claimWithin, FileStateStore, LateClaim, type Space, type SpaceDefinition } from '../../../bots/state/index.js';
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

/** A claim of `key` through `slow` with a 1 s wait, refused as the fake clock passes that second with the state silent. */
async function refusedAfterTheWait(slow: Pick<Space<unknown>, 'claimOnce' | 'releaseClaim'>, key: string): Promise<void> {
  const refused = claimWithin(slow, key, { waitMs: 1_000 });
  const check = expect(refused).rejects.toThrow('the state store did not answer in time');
  await vi.advanceTimersByTimeAsync(1_000);
  await check;
}

describe('a claim within the claim wait', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers the claim when the state answers in time: true the first time, false after', async () => {
    const { slow, answer } = await slowSpace();
    const first = claimWithin(slow, 'k1', { waitMs: 60_000 });
    answer();
    expect(await first).toBe(true);
    const second = claimWithin(slow, 'k1', { waitMs: 60_000 });
    answer();
    expect(await second).toBe(false);
  });

  it('is refused when the state does not answer in time; the claim landing after, having taken the key, gives it back, so a retry takes it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { space, slow, landed, released, answer } = await slowSpace();
    await refusedAfterTheWait(slow, 'k1');
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
    await refusedAfterTheWait(slow, 'k1');
    vi.useRealTimers();
    answer();
    await vi.waitFor(() => expect(landed).toEqual([false]));
    expect(released).toEqual([]);
    expect(await space.claimOnce('k1')).toBe(false);
  });

  it('hands a late claim that took the key to a retry sent during the slow spell: the retry is answered true, sends no claim of its own, and nothing is given back', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { space, slow, landed, released, answer } = await slowSpace();
    await refusedAfterTheWait(slow, 'k1');
    // Slack's retry, while the state is still slow: its claim would only be answered after the late one, and lose.
    const retry = claimWithin(slow, 'k1', { waitMs: 60_000 });
    vi.useRealTimers();
    answer();
    expect(await retry).toBe(true);
    expect(landed).toEqual([true]);
    expect(released).toEqual([]);
    expect(await space.claimOnce('k1')).toBe(false);
  });

  it('answers a twin sent while the first claim is still in time false once the first takes the key: one of them is the first', async () => {
    const { slow, landed, answer } = await slowSpace();
    const first = claimWithin(slow, 'k1', { waitMs: 60_000 });
    const twin = claimWithin(slow, 'k1', { waitMs: 60_000 });
    answer();
    expect(await Promise.all([first, twin])).toEqual([true, false]);
    expect(landed).toEqual([true]);
  });

  it('gives the key back when the retry’s own wait runs out too before the late claim lands, so the next retry takes it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { space, slow, released, answer } = await slowSpace();
    const refused = [claimWithin(slow, 'k1', { waitMs: 1_000 }), claimWithin(slow, 'k1', { waitMs: 1_000 })].map((claim) => expect(claim).rejects.toThrow('the state store did not answer in time'));
    await vi.advanceTimersByTimeAsync(1_000);
    await Promise.all(refused);
    vi.useRealTimers();
    answer();
    await vi.waitFor(() => expect(released).toEqual(['k1']));
    expect(await space.claimOnce('k1')).toBe(true);
  });

  it('has a call waiting on a claim that failed ask the state itself, and take the key', async () => {
    const { space } = await slowSpace();
    let fail: (error: Error) => void = () => {};
    let claims = 0;
    const failingOnce: Pick<Space<unknown>, 'claimOnce' | 'releaseClaim'> = {
      claimOnce: (key, token) => (++claims === 1 ? new Promise<boolean>((_, reject) => (fail = reject)) : space.claimOnce(key, token)),
      releaseClaim: (key, token) => space.releaseClaim(key, token),
    };
    const first = claimWithin(failingOnce, 'k1', { waitMs: 60_000 });
    const second = claimWithin(failingOnce, 'k1', { waitMs: 60_000 });
    fail(new Error('the state does not answer'));
    await expect(first).rejects.toThrow('the state does not answer');
    expect(await second).toBe(true);
    expect(claims).toBe(2);
  });

  it('keeps a late claim that took the key with keepLate: the caller is told true when it lands, nothing is given back, and a retry sent meanwhile is answered false', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { space, slow, released, answer } = await slowSpace();
    const refused = claimWithin(slow, 'k1', { waitMs: 1_000, keepLate: true }).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1_000);
    const late = await refused;
    expect(late).toBeInstanceOf(LateClaim);
    const retry = claimWithin(slow, 'k1', { waitMs: 60_000 });
    answer();
    expect(await (late as LateClaim).late).toBe(true);
    expect(await retry).toBe(false);
    expect(released).toEqual([]);
    expect(await space.claimOnce('k1')).toBe(false);
  });

  it('tells a late claim kept with keepLate that the key was taken before (false), or the state’s error', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { space, slow, answer } = await slowSpace();
    expect(await space.claimOnce('k1')).toBe(true);
    const lost = claimWithin(slow, 'k1', { waitMs: 1_000, keepLate: true }).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1_000);
    answer();
    expect(await ((await lost) as LateClaim).late).toBe(false);

    let fail: (error: Error) => void = () => {};
    const failing = { claimOnce: () => new Promise<boolean>((_, reject) => (fail = reject)), releaseClaim: () => Promise.resolve() };
    const failed = claimWithin(failing, 'k2', { waitMs: 1_000, keepLate: true }).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1_000);
    fail(new Error('the state does not answer'));
    await expect(((await failed) as LateClaim).late).rejects.toThrow('the state does not answer');
  });

  it('is refused with the state’s own error when the claim fails', async () => {
    const failing = { claimOnce: () => Promise.reject(new Error('the state does not answer')), releaseClaim: () => Promise.resolve() };
    await expect(claimWithin(failing, 'k1')).rejects.toThrow('the state does not answer');
  });
});
