import { spawn, type ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { killedAtTestEnd } from './killed-at-test-end.js';

describe('a child process a test leaves running', () => {
  let left: ChildProcess | undefined;

  it('is killed when the test ends', () => {
    left = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'pipe'] });
    killedAtTestEnd(left);
    expect(left.pid).toBeGreaterThan(0);
  });

  it('has closed by then, its output read to the end: the next test starts with no process of it left', () => {
    expect(left?.signalCode).toBe('SIGKILL');
    expect(left?.stdout?.destroyed).toBe(true);
  });
});
