import { vi } from 'vitest';
import type { RedisLink } from '../../src/internal.js';

/**
 * Resolves once a renewal of the upgrade's lease by `link` is answered that the lease is not its own, and that answer
 * was had (the holder gives the upgrade up as the event loop turns). A test deletes the lease key to make it so.
 */
export function renewalFindsLeaseGone(link: RedisLink): Promise<void> {
  const evalBy = link.commands.eval.bind(link.commands) as (...args: unknown[]) => Promise<unknown>;
  return new Promise<void>((leaseLost) => {
    vi.spyOn(link.commands, 'eval').mockImplementation((async (...args: unknown[]) => {
      const answer = await evalBy(...args);
      if (args[5] !== '0' && answer === 0) setImmediate(leaseLost);
      return answer;
    }) as never);
  });
}
