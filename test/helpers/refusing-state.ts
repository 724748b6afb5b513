import type { BotState } from '../../bots/state/index.js';
import { BaseSpace } from '../../bots/state/StateStore.js';
import { isSpaceOf, spyOnInstance } from './instance-spy.js';

/** A write refused as Redis at its `maxmemory` under noeviction refuses one. */
export const refused = (): Promise<never> => Promise.reject(new Error("OOM command not allowed when used memory > 'maxmemory'."));

/**
 * Refuses every write (`update`, `put`) of the bot's state `process.state` holds while `full.now` is set, as Redis at its
 * `maxmemory` under noeviction refuses a SET (or a full disk a file's write); reads go on. Spied on that state's spaces
 * only (`isSpaceOf`), restored by `vi.restoreAllMocks()`.
 */
export function refuseStateWrites(process: { state: BotState }): { now: boolean } {
  const full = { now: false };
  const mine = (space: BaseSpace<unknown>) => full.now && isSpaceOf(space, process.state);
  spyOnInstance(BaseSpace.prototype, 'update', mine).mockImplementation(refused);
  spyOnInstance(BaseSpace.prototype, 'put', mine).mockImplementation(refused);
  return full;
}
