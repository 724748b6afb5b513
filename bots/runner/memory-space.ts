import type { Space } from '../state/index.js';

/** Records kept in this process's memory, read and changed as a state space's are (a runner given no state: tests, tools). */
export function memorySpace<T>(): Pick<Space<T>, 'get' | 'read' | 'update'> {
  const records = new Map<string, T>();
  return {
    get: async (key) => structuredClone(records.get(key)),
    read: async (key) => structuredClone(records.get(key)),
    async update(key, change) {
      const before = records.get(key);
      const after = change(structuredClone(before));
      if (after === undefined) records.delete(key);
      else records.set(key, structuredClone(after));
      return { before, after };
    },
  };
}
