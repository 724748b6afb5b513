import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { startRunning } from './npm-start.js';

describe('an npm start a test leaves running', () => {
  let left: ChildProcess | undefined;

  it('is killed when the test ends', () => {
    left = startRunning({}).child;
    expect(left.pid).toBeGreaterThan(0);
  });

  it('has closed by then, its output read to the end: the next test starts with no process of it left', () => {
    expect(left?.signalCode).toBe('SIGKILL');
    expect(left?.stdout?.destroyed).toBe(true);
  });
});
