import { vi } from 'vitest';

/**
 * Runs `body` on a fake clock: its timers and `Date` are fake, while promises, I/O and turns of the event loop stay real
 * (a real Redis still answers on its own time). The clock is the real one again afterwards, passed or failed.
 */
export async function onFakeClock<T>(body: () => T | Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  try {
    return await body();
  } finally {
    vi.useRealTimers();
  }
}
