import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobRunner, Requester } from '../../bots/runner/index.js';
import { scopeKeyOf, userKeyOf } from '../../bots/runner/member-keys.js';
import { FileStateStore, UNREADABLE, stateKeyOf, type BotState } from '../../bots/state/index.js';
import type { ScopeSettingEntries } from '../../src/internal.js';

/** The word the intake tables block, and put in every prompt. */
export const BLOCKED_WORD = 'kraken';

/** One way a member's next job is refused, and whether it applies to an entry point. */
export interface IntakeRefusal {
  code: string;
  /** A blocked word refuses only an entry point that carries a prompt (a form gets its own when it is sent); the member's defaults only one that takes them. */
  appliesTo(entry: IntakeEntry): boolean;
  /**
   * Makes the member's next job refused, as an admin of the server/workspace would (`elsewhere`: a channel that is not
   * the member's), or its kept settings or the member's own defaults (`state`) would (`member`: who uses the entry point).
   */
  apply(runner: JobRunner, admin: Requester, elsewhere: string, state: BotState, member?: Pick<Requester, 'platform' | 'userId'>): Promise<unknown>;
}

/** What an entry point of the tables says of itself. */
export interface IntakeEntry {
  name: string;
  prompted: boolean;
  /** false: it takes none of the member's own defaults (Slack's workflow step takes the workspace's). */
  memberDefaults?: false | undefined;
}

/**
 * What refuses a job in the tables of entry points: the member's budget, two rules of the server/workspace, a rule of
 * it that cannot be read, and the member's own defaults that cannot be read.
 */
export const INTAKE_REFUSALS: readonly IntakeRefusal[] = [
  { code: 'budget_user_daily', appliesTo: () => true, apply: (runner, admin) => runner.budgets.setCap(admin, 'userDailyUsd', 0) },
  { code: 'blocked_word', appliesTo: (entry) => entry.prompted, apply: (runner, admin) => runner.policy.set(admin, 'blockedWords', [BLOCKED_WORD]) },
  { code: 'channel_not_allowed', appliesTo: () => true, apply: (runner, admin, elsewhere) => runner.policy.set(admin, 'channels', [elsewhere]) },
  {
    code: 'settings_unreadable',
    appliesTo: () => true,
    // A member blocked, then the stored list damaged (a hand edit, a torn write): never taken for "nobody blocked".
    apply: async (runner, admin, _elsewhere, state) => {
      await runner.policy.set(admin, 'blocked', ['someone-else']);
      const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
      await space.update(stateKeyOf(scopeKeyOf(admin)), (stored) => ({ ...stored, blocked: { value: 'someone-else', by: 'hand-edit', at: 0 } }));
      // A change through the runner's settings then forgets what it kept of them (a read under way meanwhile, by the job before, too).
      await runner.policy.settings.set(scopeKeyOf(admin), 'defaultPreviews', undefined, { by: 'hand-edit', at: 0 });
    },
  },
  {
    code: 'defaults_unreadable',
    appliesTo: (entry) => entry.memberDefaults !== false,
    // The member's private default kept, then its record cut short on disk (a torn write, not JSON any more): never
    // taken for "none set" (a private default would be lost).
    apply: async (_runner, _admin, _elsewhere, state, member) => {
      if (!member) throw new TypeError('the defaults_unreadable case needs the member who uses the entry point');
      if (!(state.store instanceof FileStateStore)) throw new TypeError('the defaults_unreadable case tears a record of the data folder');
      const key = stateKeyOf(userKeyOf(member));
      const space = state.store.space(state.spaces.memberDefaults);
      await space.put(key, { private: true });
      await writeFile(join(state.store.dataDir, state.spaces.memberDefaults.dir, `${key}.json`), '{"pictorState":1,"holder":null,"value":{"private":tr');
      // The store itself reads it as damaged (a value it could parse would be another path: not a set of defaults).
      if ((await space.read(key)) !== UNREADABLE) throw new Error('the member’s defaults record was not torn');
    },
  },
];

/** Every entry point with every refusal that applies to it, as `it.each` rows: [entry name, code, case]. */
export function intakeCases<E extends IntakeEntry>(entries: readonly E[]) {
  return entries.flatMap((entry) => INTAKE_REFUSALS.filter((refusal) => refusal.appliesTo(entry)).map((refusal) => [entry.name, refusal.code, { entry, refusal }] as const));
}
