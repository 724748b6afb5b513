import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { killedAtTestEnd } from '../helpers/killed-at-test-end.js';
import { testTempDir } from '../helpers/temp-dir.js';

const CHILD = fileURLToPath(new URL('./data-folder-lock-child.ts', import.meta.url));

interface Outcome {
  outcome: 'held' | 'refused' | 'error';
  message?: string;
}

/** A child process that takes the data folder's lock when told (see data-folder-lock-child.ts), killed when the test ends. */
async function taker(): Promise<{ take(dir: string): Promise<Outcome> }> {
  const child: ChildProcess = fork(CHILD, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  killedAtTestEnd(child, 'the lock taker');
  await once(child, 'message');
  return {
    take: async (dir) => {
      const answer = once(child, 'message');
      child.send({ take: dir });
      return (await answer)[0] as Outcome;
    },
  };
}

describe('the data folder lock, two processes starting at once on one folder', () => {
  it('each start either takes the folder or is refused naming PICTOR_DATA_DIR and the holder, never a raw error, even as the other lets go', async () => {
    const [a, b] = await Promise.all([taker(), taker()]);
    const seen: Outcome[] = [];
    // Each round a fresh folder, both at once; the winner gives it back at once, while the other is still looking.
    for (let round = 0; round < 60; round++) {
      const dir = await testTempDir('pictor-folder-race-');
      seen.push(...(await Promise.all([a.take(dir), b.take(dir)])));
    }
    expect(seen.filter((s) => s.outcome === 'error')).toEqual([]);
    // Refused naming the holder, or (a lock still being written after every look) saying it names no process: both true.
    for (const refused of seen.filter((s) => s.outcome === 'refused')) {
      expect(refused.message).toMatch(/^PICTOR_DATA_DIR .* is in use by another Pictor process \((pid \d+ on [^)]+|its lock names no process)\)/);
    }
  }, 120_000);
});
