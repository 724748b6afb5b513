import { z } from 'zod';
import { MODERATIONS, QUALITIES, SIZES, type LoggerLike } from 'pictor';
import { type ScopeSettingEntries } from 'pictor/internal';
import { isDamagedSettings, stateKeyOf, type Space } from '../state/index.js';
import { BLOCKED_WORDS_LIMITS } from './blocked-words.js';
import { memorySpace } from './memory-space.js';
import { ToldOnce } from './told-once.js';

/**
 * What the admins of one server/workspace decided from chat (the operator's
 * environment bounds every one of them; see scope-policy.ts). Unset means the
 * default: every channel, everyone, nothing blocked, the operator's choices.
 */
const id = z.string().min(1).max(64);
/** Roles (Slack user groups) of one server/workspace that may have a budget: `roleBudgets`' bound in `LIST_MOST`. */
export const ROLE_BUDGETS_MAX = 25;
/** A list of channels, users or roles. Its shape only: how many entries it may hold is `LIST_MOST`'s. */
const ids = z.array(id);
/**
 * The most entries each list an admin sets may hold: the one bound of a list, applied by `valueRefusal` alone (the
 * schema below gives each list's shape, never its length) — a list stored under a higher bound is read by `readStored`.
 */
const LIST_MOST: Partial<Record<StoredSettingName, number>> = {
  channels: 100,
  allowed: 100,
  blocked: 1000,
  highQualityFor: 100,
  blockedWords: BLOCKED_WORDS_LIMITS.entries,
  roleBudgets: ROLE_BUDGETS_MAX,
};
const blockedWords = z.array(z.string().min(1).max(BLOCKED_WORDS_LIMITS.length));
export const ScopeSettingsSchema = z.object({
  /** Channels where the bot takes jobs (empty or unset: every channel it can see). */
  channels: ids.optional(),
  /** Users or roles who may generate (unset: everyone). */
  allowed: ids.optional(),
  /** Users who may not generate. */
  blocked: ids.optional(),
  /** Words and phrases refused in prompts (whole words, case- and accent-insensitive). */
  blockedWords: blockedWords.optional(),
  /** Most images in one job. */
  maxImages: z.number().int().min(1).max(10).optional(),
  /** Qualities members may ask for. */
  qualities: z.array(z.enum(QUALITIES)).min(1).optional(),
  /** Sizes members may ask for. */
  sizes: z.array(z.enum(SIZES)).min(1).optional(),
  /** Only these users or roles may ask for `high` quality (unset: whoever may use the qualities above). */
  highQualityFor: ids.optional(),
  /** The moderation level sent with every job (within what the operator allows). */
  moderation: z.enum(MODERATIONS).optional(),
  /** Applied when a member does not choose. */
  defaultSize: z.enum(SIZES).optional(),
  defaultQuality: z.enum(QUALITIES).optional(),
  /** Previews streamed per image, 0–3 (at most the operator's PICTOR_PARTIAL_IMAGES). */
  defaultPreviews: z.number().int().min(0).max(3).optional(),
  /** Whether members may ask for private results (shown only to them); unset: they may. */
  privateResults: z.boolean().optional(),
  /**
   * Budgets of roles (Discord roles, Slack user groups): what each member holding one may spend a day and a month, in
   * place of the cap of each user (`memberLimits`: the most generous of a member's roles). The role's name as it was
   * when set, for the usage view. Changed through `ChatBudgets.setRoleBudget`, not `/imagine-admin set`.
   */
  roleBudgets: z
    .array(
      z.object({
        roleId: id,
        name: z.string().max(100),
        userDailyUsd: z.number().nonnegative().optional(),
        userMonthlyUsd: z.number().nonnegative().optional(),
      }),
    )
    .optional(),
  /** Where every job and every refusal by a rule or a budget is posted (`audit-log.ts`), in the language of the admin who chose it. */
  auditChannel: z.object({ channelId: id, locale: z.string().max(35).optional() }).optional(),
});

export type ScopeSettings = z.output<typeof ScopeSettingsSchema>;
/** Every setting the store keeps. */
export type StoredSettingName = keyof ScopeSettings;
/** The settings `/imagine-admin set` and `/imagine admin set` change (role budgets have their budget command). */
export type SettingName = Exclude<StoredSettingName, 'roleBudgets'>;
export const SETTING_NAMES = Object.keys(ScopeSettingsSchema.shape) as StoredSettingName[];
/** The settings that are lists: an admin may add to one or remove from it (`ScopePolicy.update`). */
export const LIST_SETTINGS = ['channels', 'allowed', 'blocked', 'blockedWords', 'qualities', 'sizes', 'highQualityFor'] as const satisfies readonly SettingName[];
export type ListSettingName = (typeof LIST_SETTINGS)[number];

export function isListSetting(name: StoredSettingName): name is ListSettingName {
  return (LIST_SETTINGS as readonly string[]).includes(name);
}

/**
 * The settings whose default (unset) is wider than any value an admin can set: every channel, everyone, nothing
 * blocked, the operator's most images, qualities and sizes, high quality for all, private results allowed. One of them
 * stored and unreadable is never taken for unset, which would lift the restriction it held: the scope's jobs are
 * refused until an admin sets it again or clears it (`ScopePolicy`). The role budgets fail closed their own way
 * (`ChatBudgets`: nothing to spend); moderation's default (`auto`) is the strictest, so it falls back like the
 * scope's defaults of size, quality and previews and its audit channel.
 */
export const FAIL_CLOSED_SETTINGS: readonly SettingName[] = ['channels', 'allowed', 'blocked', 'blockedWords', 'maxImages', 'qualities', 'sizes', 'highQualityFor', 'privateResults'];

export function isFailClosed(name: StoredSettingName): boolean {
  return (FAIL_CLOSED_SETTINGS as readonly string[]).includes(name);
}

/** Who changed a setting last, and when (ms since the epoch). */
export interface SettingChange {
  by: string;
  at: number;
}

/** One scope's settings as stored: the values and who set each. */
export interface StoredScopeSettings {
  values: ScopeSettings;
  setBy: Partial<Record<StoredSettingName, SettingChange>>;
  /**
   * Settings that are stored but cannot be read (a damaged value; every setting when the scope's record itself is
   * damaged): left out of `values`. Present only when there are some. A reader for whom "unset" is the generous
   * answer (the role budgets) must not take these for unset.
   */
  unreadable?: StoredSettingName[] | undefined;
}

/** What `update`'s change is told of the value it changes besides the value. */
export interface SettingUpdateContext {
  /** The setting is stored and cannot be read (`value` is then undefined): what it held is unknown, never none. */
  unreadable: boolean;
  /**
   * Set when what cannot be read is a list longer than today's bound (`valueRefusal`'s `most`, which it is): a later
   * version's, which `repair` leaves as it is (`isWellFormed`) — a change that replaces it would erase it.
   */
  overBound?: number | undefined;
}

/**
 * The settings of every server/workspace, kept in the bots' state (the
 * `scope-settings` space, which never expires: the data folder, or Redis with
 * `REDIS_URL`), so every process of the account applies one set and a restart
 * keeps them. A store is storage: the rules that bound a value live in
 * scope-policy.ts, but for the most entries of a list, which only the store
 * checks against what is stored now (`checkBound`).
 */
export interface ScopeSettingsStore {
  /** The scope's settings (`discord:<guild>`, `slack:<team>`); empty when none were set. */
  get(scopeKey: string): Promise<StoredScopeSettings>;
  /** Sets one setting (`undefined` clears it); answers what it was before (`unreadable`: stored and unreadable). */
  set<K extends StoredSettingName>(scopeKey: string, name: K, value: ScopeSettings[K] | undefined, change: SettingChange): Promise<{ previous: ScopeSettings[K] | undefined; unreadable: boolean }>;
  /**
   * Changes one setting from what it is now, atomically (two admins on two replicas lose neither change): `change`
   * gets the current value (and whether it is stored and unreadable) and answers the new one (`undefined` clears
   * it), or throws to change nothing.
   */
  update<K extends StoredSettingName>(scopeKey: string, name: K, change: SettingUpdate<K>, by: SettingChange): Promise<ScopeSettings[K] | undefined>;
  /**
   * Clears, atomically, every setting of the scope that is stored and cannot be read (each back to its default; all of
   * them when the record itself is damaged), leaving the readable ones as they are; answers those it cleared, in the
   * order of the settings (none: nothing was unreadable). A value this version cannot read but whose shape is right
   * (`isWellFormed`: a later version's, in a rolling deploy or after a rollback) is not cleared: named in `left`.
   */
  repair(scopeKey: string): Promise<SettingsRepair>;
}

/** What `ScopeSettingsStore.repair` did: the settings it cleared, and those it left unreadable as they are (`isWellFormed`). */
export interface SettingsRepair {
  cleared: StoredSettingName[];
  left: StoredSettingName[];
}

/** A change of one setting from its current value (`ScopeSettingsStore.update`). */
export type SettingUpdate<K extends StoredSettingName> = (value: ScopeSettings[K] | undefined, context: SettingUpdateContext) => ScopeSettings[K] | undefined;

/**
 * The settings as the state keeps them: one record per scope, `{ <name>: { value, by, at } }`, changed atomically.
 * A stored value this version cannot read (an unknown name, a damaged or out-of-range value) is left out of `values`;
 * `get` names the known settings it left out (`unreadable`; all of them when the record itself is damaged) and warns
 * of them once a scope while they stay so (`tell`). What an unreadable setting means is its readers' to decide: a
 * restriction (`FAIL_CLOSED_SETTINGS`, the role budgets) holds the scope's jobs back, a default falls back. A damaged
 * record written anew keeps those unreadable (`UNREADABLE_MARK`) but the one set; `repair` clears them all at once.
 * Sizes and qualities a later version dropped are left out on read, warned of once a scope while they stay so.
 * Without a space, a store of this process alone.
 */
export function settingsInState(space: Pick<Space<ScopeSettingEntries>, 'read' | 'update'> = memorySpace<ScopeSettingEntries>(), logger?: LoggerLike): ScopeSettingsStore {
  const isKnown = (name: string): name is StoredSettingName => (SETTING_NAMES as string[]).includes(name);
  const read = (name: string, value: unknown, dropped?: Dropped): unknown => (isKnown(name) ? readStored(name, value, dropped) : undefined);
  /** What each scope was last warned of (what it could not read), while it stays so: the oldest forgotten past the bound. */
  const told = new ToldOnce<string>();
  /** Warns of a scope's unreadable settings once while they stay so (again when they change), never on every read. */
  const tell = (scopeKey: string, unreadable: StoredSettingName[] | undefined, record: boolean): void => {
    const what = record ? 'record' : (unreadable ?? []).join(' ');
    if ((told.last(scopeKey) ?? '') === what) return;
    told.remember(scopeKey, what === '' ? undefined : what);
    if (what === '') return;
    const names = record ? [...SETTING_NAMES] : (unreadable ?? []);
    logger?.warn(
      {
        scopeKey,
        // A damaged record: every setting of the scope.
        ...(record ? { damagedRecord: true } : { settings: names }),
        // What each kind of unreadable setting holds back meanwhile: a restriction refuses every job, the role budgets give nothing to spend, a default falls back.
        jobsRefused: names.some(isFailClosed),
        roleBudgetsUnreadable: names.includes('roleBudgets'),
      },
      'stored chat settings of a server/workspace are unreadable: an admin sets or clears each again, or repairs them all at once',
    );
  };
  /** What each scope was last warned of dropping (sizes and qualities this version does not know), while it stays so. */
  const toldDropped = new ToldOnce<string>();
  const tellDropped = (scopeKey: string, dropped: Dropped): void => {
    const what = JSON.stringify(dropped);
    if ((toldDropped.last(scopeKey) ?? '{}') === what) return;
    toldDropped.remember(scopeKey, what === '{}' ? undefined : what);
    if (what !== '{}') logger?.warn({ scopeKey, dropped }, 'stored sizes or qualities of a server/workspace that this version does not know are left out of its settings');
  };
  const update: ScopeSettingsStore['update'] = async (scopeKey, name, change, by) => {
    let value: ScopeSettings[typeof name] | undefined;
    await space.update(
      stateKeyOf(scopeKey),
      (stored) => {
        // A damaged record (unreadable, or not an object of settings) is written anew: what it held cannot be read anyway.
        // Its restrictions and role budgets stay unreadable (never none, which would lift what they held) until each is set again or cleared.
        const damaged = isDamagedSettings(stored);
        const entries: ScopeSettingEntries = stored === undefined || isDamagedSettings(stored) ? {} : stored;
        if (damaged) {
          for (const other of [...FAIL_CLOSED_SETTINGS, 'roleBudgets'] as const) if (other !== name) entries[other] = { value: UNREADABLE_MARK, by: by.by, at: by.at };
        }
        const current = read(name, entries[name]?.value) as ScopeSettings[typeof name] | undefined;
        const overBound = current === undefined && !damaged ? valueRefusal(name, entries[name]?.value)?.most : undefined;
        value = change(current, { unreadable: damaged || (current === undefined && entries[name] !== undefined), overBound });
        if (value !== undefined) checkBound(name, value, current);
        if (value === undefined) delete entries[name];
        else entries[name] = { value, by: by.by, at: by.at };
        return Object.keys(entries).length ? entries : undefined;
      },
      { unreadable: true },
    );
    return value;
  };
  return {
    async get(scopeKey) {
      const stored: StoredScopeSettings = { values: {}, setBy: {} };
      const record = await space.read(stateKeyOf(scopeKey));
      if (isDamagedSettings(record)) {
        tell(scopeKey, undefined, true);
        return { ...stored, unreadable: [...SETTING_NAMES] };
      }
      const dropped: Dropped = {};
      for (const [name, entry] of Object.entries(record ?? {})) {
        const value = read(name, entry?.value, dropped);
        if (value === undefined) {
          if (isKnown(name)) (stored.unreadable ??= []).push(name);
          continue;
        }
        (stored.values as Record<string, unknown>)[name] = value;
        stored.setBy[name as StoredSettingName] = { by: entry.by, at: entry.at };
      }
      tell(scopeKey, stored.unreadable, false);
      tellDropped(scopeKey, dropped);
      return stored;
    },
    async set(scopeKey, name, value, change) {
      let previous: ScopeSettings[typeof name] | undefined;
      let unreadable = false;
      await update(scopeKey, name, (current, context) => {
        previous = current;
        unreadable = context.unreadable;
        return value;
      }, change);
      return { previous, unreadable };
    },
    update,
    async repair(scopeKey) {
      let repair: SettingsRepair = { cleared: [], left: [] };
      await space.update(
        stateKeyOf(scopeKey),
        (stored) => {
          // A damaged record is cleared whole: none of what it held can be read. An unknown name is no setting of this version: kept.
          if (isDamagedSettings(stored)) {
            repair = { cleared: [...SETTING_NAMES], left: [] };
            return undefined;
          }
          const entries: ScopeSettingEntries = stored ?? {};
          const unreadable = SETTING_NAMES.filter((name) => entries[name] !== undefined && read(name, entries[name]?.value) === undefined);
          // A well-formed value is a later version's choice (a longer ban list): never erased by an older replica.
          const left = unreadable.filter((name) => isWellFormed(name, entries[name]?.value));
          repair = { cleared: unreadable.filter((name) => !left.includes(name)), left };
          for (const name of repair.cleared) delete entries[name];
          return Object.keys(entries).length ? entries : undefined;
        },
        { unreadable: true },
      );
      return repair;
    },
  };
}

/**
 * The servers/workspaces whose chat settings are kept in `space` (`discord:<guild>`, `slack:<team>`), one whose record
 * is damaged whole (every rule unreadable) too: a full scan, for a page an owner opens, never a hot path. A record kept
 * under a digest (a scope key with other characters) cannot name its scope and is left out.
 */
export async function storedScopeKeys(space: Pick<Space<unknown>, 'keys'>): Promise<string[]> {
  const scopeKeys: string[] = [];
  for await (const key of space.keys()) {
    const platform = /^(discord|slack)-/.exec(key)?.[1];
    if (!platform) continue;
    const scopeKey = `${platform}:${key.slice(platform.length + 1)}`;
    if (stateKeyOf(scopeKey) === key) scopeKeys.push(scopeKey);
  }
  return scopeKeys;
}

/**
 * A stored value as this version reads it; undefined when it cannot be read. A later version may narrow the schema,
 * and a value stored before must not shut a scope's jobs for that: sizes and qualities a version no longer knows are
 * dropped (as the operator's narrowing drops them, `ScopePolicy.effective`; named in `dropped`), the value unreadable only when it is no list
 * of words or none it knows remains; a list of channels, users or roles that may use the bot (channels, who,
 * high-quality) longer than today's bound is read whole — what the admins chose, and what it held when stored — a
 * new value being bounded again. Blocked members and words are never read in part: a member or word left out would be
 * a restriction lifted, so one beyond today's bounds stays unreadable (its scope's jobs refused until it is set again);
 * so do role budgets beyond theirs (`ChatBudgets` answers them with nothing to spend, never with a role left out).
 */
function readStored(name: StoredSettingName, value: unknown, dropped?: Dropped): unknown {
  const parsed = ScopeSettingsSchema.shape[name].safeParse(value);
  if (parsed.success) return overBound(name, parsed.data) === undefined || READ_WHOLE.includes(name) ? parsed.data : undefined;
  switch (name) {
    case 'qualities':
    case 'sizes': {
      const kept = knownMembers(value, name === 'qualities' ? QUALITIES : SIZES);
      const left = kept && [...new Set((value as string[]).filter((member) => !(kept as string[]).includes(member)))];
      if (left?.length && dropped) dropped[name] = left;
      return kept;
    }
    default:
      return undefined;
  }
}

/** The sizes and qualities a read left out (`readStored`), for its warning. */
type Dropped = Partial<Record<'qualities' | 'sizes', string[]>>;

/**
 * Why `value` may not be kept: `{ most }` for a list longer than its bound, `{}` for any other value the setting does
 * not take; undefined when it may. The one rule of a list's bound (`LIST_MOST`). A list of who and where longer than
 * its bound (`READ_WHOLE`) may be kept only as a part of the list stored now: with `stored` (what is stored now, the
 * store's check) it is taken when each of its entries is already stored; without it (a check before the store's),
 * it is left to the store.
 */
export function valueRefusal(name: StoredSettingName, value: unknown, stored?: { current: unknown }): { most?: number } | undefined {
  const refusal = refusalOf(name, value, stored);
  return refusal && ('most' in refusal ? refusal : {});
}

/** `valueRefusal`'s answer from one parse of `value`, keeping the schema's error of a value of the wrong shape (`checkBound` throws it). */
function refusalOf(name: StoredSettingName, value: unknown, stored?: { current: unknown }): { most: number } | { error: z.ZodError } | undefined {
  const parsed = ScopeSettingsSchema.shape[name].safeParse(value);
  if (!parsed.success) return { error: parsed.error };
  const most = overBound(name, parsed.data);
  if (most === undefined) return undefined;
  if (READ_WHOLE.includes(name)) {
    if (!stored) return undefined;
    if (Array.isArray(stored.current)) {
      const kept = new Set(stored.current);
      if ((parsed.data as string[]).every((entry) => kept.has(entry))) return undefined;
    }
  }
  return { most };
}

/**
 * Throws unless `value` is one the store may keep, `current` the value stored now (`valueRefusal`): a list longer than
 * its bound is refused (`ListTooLongError`, which `ScopePolicy` answers), any other value the schema's error.
 */
function checkBound(name: StoredSettingName, value: unknown, current: unknown): void {
  const refusal = refusalOf(name, value, { current });
  if (!refusal) return;
  if ('most' in refusal) throw new ListTooLongError(name, refusal.most);
  throw refusal.error;
}

/** A list longer than its bound that is not a part of the one stored (`checkBound`): nothing was written. */
export class ListTooLongError extends Error {
  constructor(
    readonly setting: StoredSettingName,
    /** The most entries it may hold. */
    readonly most: number,
  ) {
    super(`${setting} may hold at most ${most} entries`);
    this.name = 'ListTooLongError';
  }
}

/** The lists of who and where the bot may be used: read whole when longer than today's bound (`readStored`), and kept past it when a part of the one stored (`valueRefusal`). */
const READ_WHOLE: readonly StoredSettingName[] = ['channels', 'allowed', 'highQualityFor'];

/** The members of a stored list of words that are `known`, once each; undefined when it is no list of words or none is known. */
function knownMembers<T extends string>(value: unknown, known: readonly T[]): T[] | undefined {
  if (!Array.isArray(value) || !value.every((member) => typeof member === 'string')) return undefined;
  const kept = [...new Set(value.filter((member): member is T => (known as readonly string[]).includes(member)))];
  return kept.length > 0 ? kept : undefined;
}

/** The bound a list of the setting's shape (`parsed`) is over: the most it may hold when it holds more (`LIST_MOST`); undefined otherwise. */
function overBound(name: StoredSettingName, parsed: unknown): number | undefined {
  const most = LIST_MOST[name];
  return most !== undefined && Array.isArray(parsed) && parsed.length > most ? most : undefined;
}

/**
 * Whether a value this version cannot read has the shape a later version may give it, and so is no damage: a list of
 * blocked members or words or of role budgets over today's bound (`valueRefusal` names the bound), sizes or qualities as a list of words
 * (none of which this version knows), more images a job than this version allows. `repair` leaves it as it is: an
 * older replica's repair, in a rolling deploy or after a rollback, would otherwise erase a newer one's ban list.
 */
function isWellFormed(name: StoredSettingName, value: unknown): boolean {
  if (valueRefusal(name, value)?.most !== undefined) return true;
  if (name === 'sizes' || name === 'qualities') return Array.isArray(value) && value.length > 0 && value.every((member) => typeof member === 'string' && member !== '');
  if (name === 'maxImages') return Number.isInteger(value) && (value as number) > 0;
  return false;
}

/** What a damaged record's restrictions and role budgets are kept as when another setting writes it anew: a value no version reads (neither a list, a number nor a boolean). */
const UNREADABLE_MARK = { damaged: true } as const;
