import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileStateStore } from '../../bots/state/FileStateStore.js';
import type { BotState } from '../../bots/state/index.js';
import { isSpaceOf, seenCalling, spyOnInstance } from './instance-spy.js';
import { testTempDirSync } from './temp-dir.js';

class Counter {
  constructor(readonly name: string) {}
  next(step: number): string {
    return `${this.name}+${step}`;
  }
}

afterEach(() => vi.restoreAllMocks());

describe('spyOnInstance', () => {
  it('answers and counts only the instance it picks; every other one runs the real method', () => {
    const [mine, other] = [new Counter('mine'), new Counter('other')];
    const spy = spyOnInstance(Counter.prototype, 'next', (counter) => counter === mine).mockReturnValueOnce('faked');
    expect(other.next(1)).toBe('other+1');
    expect(mine.next(2)).toBe('faked');
    expect(mine.next(3)).toBe('mine+3');
    expect(spy.mock.calls).toEqual([[2], [3]]);
  });

  it('refuses a method already spied, naming it, rather than calling itself for the real method', () => {
    spyOnInstance(Counter.prototype, 'next', () => true);
    expect(() => spyOnInstance(Counter.prototype, 'next', () => true)).toThrow(/next is already spied/);
    vi.restoreAllMocks();
    vi.spyOn(Counter.prototype, 'next');
    expect(() => spyOnInstance(Counter.prototype, 'next', () => true)).toThrow(/next is already spied/);
  });

  it("is undone by its own mockRestore(): the prototype's real method is back, and the method can be spied again", () => {
    const real = Counter.prototype.next;
    const spy = spyOnInstance(Counter.prototype, 'next', () => true).mockReturnValue('faked');
    spy.mockRestore();
    expect(Counter.prototype.next).toBe(real);
    expect(new Counter('c').next(1)).toBe('c+1');
    expect(spyOnInstance(Counter.prototype, 'next', () => true)).toBeDefined();
  });

  it('is undone by vi.restoreAllMocks(), after which the method can be spied again', () => {
    spyOnInstance(Counter.prototype, 'next', () => true).mockReturnValue('faked');
    vi.restoreAllMocks();
    expect(new Counter('c').next(1)).toBe('c+1');
    expect(spyOnInstance(Counter.prototype, 'next', () => true)).toBeDefined();
  });
});

describe('seenCalling', () => {
  it('picks the instances that made a call it picks since it was made, each call running the real method', () => {
    const [before, mine, other] = [new Counter('before'), new Counter('mine'), new Counter('other')];
    before.next(7);
    const picks = seenCalling(Counter.prototype, 'next', (step) => step === 7);
    expect(mine.next(7)).toBe('mine+7');
    expect(other.next(1)).toBe('other+1');
    expect([before, mine, other].map(picks)).toEqual([false, true, false]);
  });
});

describe('isSpaceOf', () => {
  it("picks a space by its store's owner", () => {
    const definition = { name: 'probe', dir: 'probe', ttlMs: undefined, maxValueBytes: 100 };
    const [a, b] = ['owner-a', 'owner-b'].map((owner) => new FileStateStore({ dataDir: testTempDirSync('pictor-spy-'), owner }));
    const state = { store: a } as unknown as BotState;
    expect(isSpaceOf(a!.space(definition), state)).toBe(true);
    expect(isSpaceOf(b!.space(definition), state)).toBe(false);
  });
});
