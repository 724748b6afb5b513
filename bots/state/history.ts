import type { BotState } from './open-state.js';
import { stateKeyOf } from './spaces.js';

/** Jobs kept per member, jobs shown per server/workspace, and members listed per server/workspace. */
export const HISTORY_BOUNDS = { perMember: 20, perScope: 100, membersPerScope: 100 } as const;

/** What the history keeps of an ended job, as far as storage cares: its key, where and when, and the link to its message. */
export interface HistoryItem {
  key: string;
  scopeKey: string;
  at: number;
  link?: string | undefined;
  costUsd?: number | undefined;
}

/** Told the key of a kept list that is damaged (not a list, or items not of its kind: a hand edit), which is skipped and written anew. */
export type DamagedList = (key: string) => void;

/** A kept list's items of its kind (`item`): none of a damaged one, whose key `damaged` is told. */
function listOf<T>(kept: unknown, key: string, damaged: DamagedList | undefined, item: (value: unknown) => boolean = (v) => typeof v === 'object' && v !== null): T[] {
  if (kept === undefined || (Array.isArray(kept) && kept.every(item))) return (kept as T[] | undefined) ?? [];
  damaged?.(key);
  return Array.isArray(kept) ? kept.filter(item) : [];
}

/**
 * Keeps ended jobs in the history: each member's last ones in one record (newest first, within the retention), and each
 * server's/workspace's latest members in another. An item kept again by its key (a sweep after a crash) replaces the
 * first but keeps its time, and its link and cost when the new one has none. A damaged list is written anew.
 */
export async function keepInHistory<T extends HistoryItem>(state: Pick<BotState, 'store' | 'spaces'>, userKey: string, items: readonly T[], now = Date.now(), damaged?: DamagedList): Promise<void> {
  const since = now - state.spaces.history.ttlMs;
  // Told after each write: its `change` may run more than once.
  const found = new Set<string>();
  const note = (key: string) => void found.add(key);
  await state.store.space<T[]>(state.spaces.history).update(stateKeyOf(userKey), (current) => {
    const kept = listOf<T>(current, userKey, note);
    const again = (item: T): T => {
      const first = kept.find((old) => old.key === item.key);
      const keep = (name: 'link' | 'costUsd') => item[name] === undefined && first?.[name] !== undefined && { [name]: first[name] };
      return first ? { ...item, at: first.at, ...keep('link'), ...keep('costUsd') } : item;
    };
    const merged = [...items.map(again), ...kept.filter((old) => !items.some((item) => item.key === old.key))];
    return merged.filter((e) => e.at >= since).sort((a, b) => b.at - a.at).slice(0, HISTORY_BOUNDS.perMember);
  });
  const lists = state.store.space<string[]>(state.spaces.historyScopes);
  for (const scopeKey of new Set(items.map((item) => item.scopeKey))) {
    await lists.update(stateKeyOf(scopeKey), (members) => [userKey, ...listOf<string>(members, scopeKey, note, isString).filter((m) => m !== userKey)].slice(0, HISTORY_BOUNDS.membersPerScope));
    // A forget that erased the entries written above and scanned the lists before this write: the member goes again.
    if ((await historyOf<T>(state, userKey)).some((entry) => entry.scopeKey === scopeKey)) continue;
    const without = (members: string[]) => (members.some((m) => m !== userKey) ? members.filter((m) => m !== userKey) : undefined);
    await lists.update(stateKeyOf(scopeKey), (members) => (Array.isArray(members) ? without(members) : members));
  }
  for (const key of found) damaged?.(key);
}

/** A member's entries, newest first. */
export async function historyOf<T extends HistoryItem>(state: Pick<BotState, 'store' | 'spaces'>, userKey: string, damaged?: DamagedList): Promise<T[]> {
  return listOf(await state.store.space<T[]>(state.spaces.history).get(stateKeyOf(userKey)), userKey, damaged);
}

/** A server's/workspace's entries (of its latest members), newest first; a damaged list of them or of one member's is skipped. */
export async function historyOfScope<T extends HistoryItem>(state: Pick<BotState, 'store' | 'spaces'>, scopeKey: string, damaged?: DamagedList): Promise<T[]> {
  const members = listOf<string>(await state.store.space<string[]>(state.spaces.historyScopes).get(stateKeyOf(scopeKey)), scopeKey, damaged, isString);
  const entries = await Promise.all(members.map((member) => historyOf<T>(state, member, damaged)));
  return entries
    .flat()
    .filter((e) => e.scopeKey === scopeKey)
    .sort((a, b) => b.at - a.at)
    .slice(0, HISTORY_BOUNDS.perScope);
}

function isString(value: unknown): boolean {
  return typeof value === 'string';
}
