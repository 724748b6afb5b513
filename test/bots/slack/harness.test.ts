import { existsSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startHarness } from './harness.js';

/**
 * The harness's own promise: the data folder it made is gone when the test ends, whether the test closed the harness,
 * kept the folder for a second process, or failed before it could close anything. Each test looks at its own folder
 * once its end is over: a callback registered before the harness runs after the harness's own (last registered, first run).
 */
describe('the Slack test harness', () => {
  /** Checks, once the test and everything it left have ended, that the folder the test then put in `made` is gone. */
  function expectGoneAtTheEnd(made: { dataDir?: string }): void {
    onTestFinished(() => {
      expect(made.dataDir).toBeTypeOf('string');
      expect(existsSync(made.dataDir!)).toBe(false);
    });
  }

  it('is closed, and its data folder removed, when a test ends before it closes it (as a failing one does)', async () => {
    const made: { dataDir?: string } = {};
    expectGoneAtTheEnd(made);
    const h = await startHarness();
    made.dataDir = h.dataDir;
    expect(existsSync(h.dataDir)).toBe(true);
  });

  it('keeps the data folder past `close` for a second process of the same test, and removes it when the test ends, no second process having taken it', async () => {
    const made: { dataDir?: string } = {};
    expectGoneAtTheEnd(made);
    const before = await startHarness();
    made.dataDir = before.dataDir;
    await before.close({ dataDir: true });
    expect(existsSync(before.dataDir)).toBe(true);
  });
});
