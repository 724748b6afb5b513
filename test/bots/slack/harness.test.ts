import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startHarness } from './harness.js';

/**
 * The harness's own promise: the data folder it made is gone when the test ends, whether the test closed the harness,
 * kept the folder for a second process, or failed before it could close anything.
 */
describe('the Slack test harness', () => {
  const left: string[] = [];

  it('is left open by a test that ends before it closes it (as a failing one does)', async () => {
    const h = await startHarness();
    left.push(h.dataDir);
    expect(existsSync(h.dataDir)).toBe(true);
  });

  it('was closed, and its data folder removed, when that test ended', () => {
    expect(left).toHaveLength(1);
    expect(existsSync(left[0]!)).toBe(false);
  });

  it('keeps the data folder past `close` for a second process of the same test', async () => {
    const before = await startHarness();
    await before.close({ dataDir: true });
    left.push(before.dataDir);
    expect(existsSync(before.dataDir)).toBe(true);
  });

  it('removed that data folder too when the test ended, no second process having taken it', () => {
    expect(existsSync(left[1]!)).toBe(false);
  });
});
