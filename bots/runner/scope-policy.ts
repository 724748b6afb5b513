import { ToldOnce } from './told-once.js';
import { DEFAULTS, LIMITS, QUALITIES, SIZES, type LoggerLike, type Quality, type Size } from 'pictor';
import { scopeKeyOf, userKeyOf } from './member-keys.js';
import { findBlockedWord, unmatchableEntries } from './blocked-words.js';
import { refusalFromPolicy } from './describe-refusal.js';
import { JobRefusedError } from './JobRefusedError.js';
import { isFailClosed, ListTooLongError, valueRefusal, type ListSettingName, type ScopeSettings, type ScopeSettingsStore, type SettingChange, type SettingName, type SettingsRepair, type SettingUpdate, type StoredScopeSettings, type StoredSettingName } from './scope-settings.js';
import { TtlCache } from './ttl-cache.js';
import { isDmScope, type JobOptions, type JobSpec, type Platform, type Requester } from './types.js';

/** What the operator's environment allows every server/workspace (read in config.ts). */
export interface OperatorControls {
  /** Discord server ids and Slack workspace ids where the bot works (`PICTOR_ALLOWED_SCOPES`); undefined: everywhere. */
  allowedScopes?: readonly string[] | undefined;
  /** Refused in every prompt everywhere (`PICTOR_BLOCKED_WORDS`). */
  blockedWords?: readonly string[] | undefined;
  /** Most images in one job (`PICTOR_MAX_IMAGES_PER_JOB`). Default 10, the service's most. */
  maxImagesPerJob?: number | undefined;
  /** Qualities anyone may use (`PICTOR_ALLOWED_QUALITIES`). Default all. */
  qualities?: readonly Quality[] | undefined;
  /** Sizes anyone may use (`PICTOR_ALLOWED_SIZES`). Default all. */
  sizes?: readonly Size[] | undefined;
  /** Whether admins may choose moderation `low` (`PICTOR_ALLOW_LOW_MODERATION=1`). Default no: `auto` everywhere. */
  allowLowModeration?: boolean | undefined;
}

/** Where an effective setting comes from: the operator's environment, a chat admin of the scope, or the built-in default. */
export type SettingSource = 'operator' | 'admin' | 'default';

export interface EffectiveSetting<T> {
  value: T;
  source: SettingSource;
  /** Who set it and when, for an admin's setting (`discord:<user>`). */
  change?: SettingChange | undefined;
}

/** Every rule that applies to the jobs of one scope, and where each comes from (what the settings commands show). */
export interface EffectiveSettings {
  platform: Platform;
  scopeId: string;
  /** False when the operator does not let the bot work in this server/workspace. */
  scopeAllowed: boolean;
  channels: EffectiveSetting<string[]>;
  allowed: EffectiveSetting<string[]>;
  blocked: EffectiveSetting<string[]>;
  operatorBlockedWords: string[];
  blockedWords: EffectiveSetting<string[]>;
  maxImages: EffectiveSetting<number>;
  qualities: EffectiveSetting<Quality[]>;
  sizes: EffectiveSetting<Size[]>;
  highQualityFor: EffectiveSetting<string[]>;
  moderation: EffectiveSetting<'low' | 'auto'>;
  defaultSize: EffectiveSetting<Size>;
  defaultQuality: EffectiveSetting<Quality>;
  defaultPreviews: EffectiveSetting<number>;
  /** Whether members may ask for private results. */
  privateResults: EffectiveSetting<boolean>;
  /** Where the scope's audit entries are posted (`/imagine-admin audit`); undefined: nowhere. */
  auditChannel: EffectiveSetting<{ channelId: string; locale?: string | undefined } | undefined>;
  /**
   * Settings an admin set that cannot be read now (a damaged value or record), in the order of the settings; their
   * values above are the defaults. One that is a restriction (`FAIL_CLOSED_SETTINGS`) refuses the scope's jobs
   * (`settings_unreadable`) until an admin sets it again or clears it; the others' defaults apply meanwhile.
   */
  unreadable: SettingName[];
}

/**
 * Why a settings change was refused. Stable: surfaces and tests switch on it. `not_allowed_by_scope`: a default size or
 * quality outside the sizes or qualities this scope's own admins chose (theirs to widen, not the operator's).
 */
export type SettingChangeRefusal = 'not_admin' | 'invalid_value' | 'not_allowed_by_operator' | 'not_allowed_by_scope';

export type SettingChangeResult =
  | { ok: true; name: SettingName; previous: unknown; value: unknown; /** What it replaced was stored and unreadable (`previous` is then undefined). */ wasUnreadable: boolean }
  | {
      ok: false;
      code: SettingChangeRefusal;
      name: SettingName;
      /** What the operator allows (`not_allowed_by_operator`), or the scope's own setting (`not_allowed_by_scope`). */
      allowed?: OperatorBound | undefined;
      /** `not_allowed_by_scope`: the scope's setting that bounds this one (`sizes` for `defaultSize`). */
      boundBy?: SettingName | undefined;
      /** `invalid_value` of blocked words: the entries that could never match (no letter, digit, emoji or symbol), as typed. */
      unmatchable?: string[] | undefined;
      /** `invalid_value` of a list of channels, users or roles longer than it may be: the most it may hold. */
      most?: number | undefined;
    };

/**
 * What `update` answers: `set`'s answers, `setting_unreadable` when the list is stored and cannot be read, or
 * `would_open` when it would leave a list of who, where or what may be used (`OPEN_WHEN_EMPTY`) empty — none is its
 * default, everyone or everything, which only `clear` chooses (nothing changed either way).
 */
export type SettingUpdateResult = SettingChangeResult | { ok: false; code: 'setting_unreadable' | 'would_open'; name: SettingName };

/**
 * What `repair` answers: the settings it cleared (none: every one could be read) and those it left as they are (stored
 * by a later version, well-formed: `ScopeSettingsStore.repair`), or `not_admin` (nothing changed).
 */
export type SettingsRepairResult = ({ ok: true } & SettingsRepair) | { ok: false; code: 'not_admin' };

/** The lists whose none (unset) is wider than any value: an `update` does not empty one (`would_open`), `clear` does. */
const OPEN_WHEN_EMPTY: readonly ListSettingName[] = ['channels', 'allowed', 'qualities', 'sizes', 'highQualityFor'];

/** What the operator allows for a setting an admin tried to take beyond it: a most, or the values. */
export type OperatorBound = { atMost: number } | { oneOf: readonly string[] };

export interface ScopePolicyOptions {
  store: ScopeSettingsStore;
  operator?: OperatorControls | undefined;
  /** The operator's previews per image (`PICTOR_PARTIAL_IMAGES`): the most a scope may choose. */
  partialImages: number;
  logger?: LoggerLike | undefined;
  now?: (() => number) | undefined;
  /**
   * How long a scope's settings are cached before the store is read again. Default 5 s (a change made in this process,
   * through `settings` too, applies at once).
   */
  cacheMs?: number | undefined;
}

export const DEFAULT_SETTINGS_CACHE_MS = 5_000;

/** The operator's controls with their defaults filled in. */
interface OperatorBounds {
  allowedScopes: readonly string[] | undefined;
  blockedWords: readonly string[];
  maxImagesPerJob: number;
  qualities: readonly Quality[];
  sizes: readonly Size[];
  allowLowModeration: boolean;
}

type RefusalContext = Omit<Parameters<typeof refusalFromPolicy>[1], 'platform'>;

/** A user or a role in a setting's list: `user:<id>` or `role:<id>` (Discord roles only). */
export type Principal = `user:${string}` | `role:${string}`;

/**
 * The rules of who may generate, where and what, per server/workspace: the
 * operator's environment bounds them, its chat admins choose within that.
 * `admit` checks a job before anything is reserved or sent and fills in the
 * scope's defaults; `set` is the one place a chat admin's change is checked.
 */
export class ScopePolicy {
  readonly #store: CachedSettings;
  readonly #operator: OperatorBounds;
  readonly #partialImages: number;
  readonly #logger: LoggerLike | undefined;
  readonly #now: () => number;
  /** Scopes the operator does not allow whose refusal was already logged (once each, bounded: the oldest told again). */
  readonly #toldScopes = new ToldOnce<true>();

  constructor(options: ScopePolicyOptions) {
    const op = options.operator ?? {};
    this.#now = options.now ?? Date.now;
    this.#store = new CachedSettings(options.store, new TtlCache({ ttlMs: options.cacheMs ?? DEFAULT_SETTINGS_CACHE_MS, now: this.#now }));
    this.#operator = {
      allowedScopes: op.allowedScopes && op.allowedScopes.length > 0 ? [...op.allowedScopes] : undefined,
      blockedWords: [...(op.blockedWords ?? [])],
      maxImagesPerJob: op.maxImagesPerJob ?? LIMITS.nMax,
      qualities: op.qualities && op.qualities.length > 0 ? [...op.qualities] : [...QUALITIES],
      sizes: op.sizes && op.sizes.length > 0 ? [...op.sizes] : [...SIZES],
      allowLowModeration: op.allowLowModeration ?? false,
    };
    this.#partialImages = options.partialImages;
    this.#logger = options.logger;
  }

  /**
   * The scope settings as this policy reads them: each scope's record read once within `cacheMs`, and forgotten at
   * once when it is changed through here. What else reads or changes them (`ChatBudgets`: the role budgets) takes
   * this one, so a job reads and parses the record once, and a change made through either is seen by both.
   */
  get settings(): ScopeSettingsStore {
    return this.#store;
  }

  /**
   * The job as it will run — the scope's defaults filled in where the member
   * chose nothing — or the refusal (`JobRefusedError`, thrown) saying which
   * rule stops it: who and where, then the prompt, then the options. Nothing is reserved or sent either way.
   * `asked.again`: a job a button runs again (a Reroll or Retry, whoever's job it is: `JobIntent.again`), whose private
   * refusal names no option the button lacks; `asked.inForm`: a job a form makes (`JobIntent.inForm`), whose private
   * refusal is the one `formPrivateRefusal` gives before the form opens.
   */
  async admit(spec: JobSpec, asked: AskedHow = {}): Promise<{ spec: JobSpec; previews: number }> {
    const s = await this.effective(spec.requester);
    const refusal = this.#whoWhereRefusal(spec.requester, s) ?? this.#promptRefusal(spec, s);
    if (refusal) throw refusal;
    const { options, refusal: optionRefusal } = this.#withOptions(spec, s, asked);
    if (optionRefusal) throw optionRefusal;
    return { spec: { ...spec, options }, previews: s.defaultPreviews.value };
  }

  /** The refusal `admit` would give before looking at the prompt or options (who and where), so a surface can refuse before it downloads anything. */
  async whoWhereRefusal(requester: Requester): Promise<JobRefusedError | undefined> {
    return this.#whoWhereRefusal(requester, await this.effective(requester));
  }

  /**
   * The refusal of who the member is, asked in no channel: the rules `admit` holds a member to wherever they ask (the
   * server/workspace allowed, its rules readable, the member not blocked, and listed when `allowed` lists anyone), the
   * `channels` rule left out. For a view that is in no channel (Slack's Home), which says where apart.
   */
  async whoRefusal(requester: Omit<Requester, 'channelId' | 'parentChannelId'>): Promise<JobRefusedError | undefined> {
    // A whole Requester given here (with the channel a surface's has) is asked about in none all the same.
    return this.#whoWhereRefusal({ ...requester, channelId: undefined, parentChannelId: undefined }, await this.effective(requester));
  }

  /**
   * The refusal `admit` would give the job a form makes for its private setting (`private_not_allowed`; true for the
   * edit of a private result, else the member's default, `MemberDefaultsBook.apply`), asked before the form opens: its
   * words name nothing the form lacks (a form has no private option).
   */
  async formPrivateRefusal(spec: Pick<JobSpec, 'requester' | 'private' | 'privateByDefault'>): Promise<JobRefusedError | undefined> {
    return privateRefusal(spec, await this.effective(spec.requester), { inForm: true });
  }

  /**
   * Whether the rules of the requester's server/workspace let these options be asked for (who and where, and the
   * prompt, not looked at): a member's own default is used only where the same option asked by hand would be.
   */
  async allowsOptions(requester: Requester, options: JobOptions, kind: JobSpec['kind'] = 'generate'): Promise<boolean> {
    return this.#withOptions({ kind, prompt: '', options, requester }, await this.effective(requester)).refusal === undefined;
  }

  /** Who, then where (a requester in no channel: who alone, `whoRefusal`). */
  #whoWhereRefusal(requester: Omit<Requester, 'channelId'> & { channelId?: string | undefined }, s: EffectiveSettings): JobRefusedError | undefined {
    const refuse = refuserOf(requester);
    if (!s.scopeAllowed) {
      const scopeKey = scopeKeyOf(requester);
      if (!this.#toldScopes.last(scopeKey)) {
        this.#toldScopes.remember(scopeKey, true);
        this.#logger?.warn({ scopeKey }, 'refusing jobs of a server/workspace PICTOR_ALLOWED_SCOPES does not list');
      }
      return refuse('scope_not_allowed');
    }
    const unreadable = unreadableRulesRefusal(s);
    if (unreadable) return unreadable;
    if (s.blocked.value.includes(requester.userId)) return refuse('member_blocked');
    if (requester.channelId !== undefined && s.channels.value.length > 0 && !inAllowedChannel({ ...requester, channelId: requester.channelId }, s.channels.value)) return refuse('channel_not_allowed', { channels: s.channels.value });
    if (s.allowed.value.length > 0 && !isListed(requester, s.allowed.value)) return refuse('member_not_allowed');
    return undefined;
  }

  #promptRefusal(spec: JobSpec, s: EffectiveSettings): JobRefusedError | undefined {
    const word = findBlockedWord(spec.prompt, s.operatorBlockedWords) ?? findBlockedWord(spec.prompt, s.blockedWords.value);
    return word === undefined ? undefined : refuserOf(spec.requester)('blocked_word', { word });
  }

  /** The job's options with the scope's defaults filled in, and the rule they break if one does. */
  #withOptions(spec: JobSpec, s: EffectiveSettings, asked: AskedHow = {}): { options: JobOptions; refusal: JobRefusedError | undefined } {
    // The scope's defaults are filled in only where they differ from the spec's, so a job of a scope with no settings is sent as asked.
    const options = { ...spec.options };
    if (options.size === undefined && s.defaultSize.value !== DEFAULTS.size) options.size = s.defaultSize.value;
    if (options.quality === undefined) {
      const quality = defaultQualityFor(spec.requester, s);
      if (quality !== DEFAULTS.quality) options.quality = quality;
    }
    const moderationAsked = options.moderation;
    if (moderationAsked === undefined && s.moderation.value !== DEFAULTS.moderation) options.moderation = s.moderation.value;
    return { options, refusal: optionsRefusal(spec, options, moderationAsked, s, asked) };
  }

  /** Every rule that applies to a scope's jobs and where it comes from. */
  async effective(requester: Pick<Requester, 'platform' | 'scopeId'>): Promise<EffectiveSettings> {
    return this.#effectiveOf(requester, await this.#store.get(scopeKeyOf(requester)));
  }

  /**
   * The rules of a scope whose settings were read elsewhere (`stored`): for a reader that must not go through the jobs'
   * cache, such as the console's scan of every scope (it would evict the busy scopes the jobs read).
   */
  effectiveFrom(requester: Pick<Requester, 'platform' | 'scopeId'>, stored: StoredScopeSettings): EffectiveSettings {
    return this.#effectiveOf(requester, stored);
  }

  /** The rules of a scope whose settings are `stored`. */
  #effectiveOf(requester: Pick<Requester, 'platform' | 'scopeId'>, stored: StoredScopeSettings): EffectiveSettings {
    const op = this.#operator;
    const v = stored.values;
    const admin = <T>(name: SettingName, value: T): EffectiveSetting<T> => ({ value, source: 'admin', change: stored.setBy[name] });
    const list = <T>(name: SettingName, fallback: T[], source: SettingSource = 'default'): EffectiveSetting<T[]> =>
      v[name] !== undefined ? admin(name, [...(v[name] as unknown as T[])]) : { value: fallback, source };

    const qualities: EffectiveSetting<Quality[]> =
      v.qualities !== undefined
        ? admin('qualities', v.qualities.filter((q) => op.qualities.includes(q)))
        : { value: [...op.qualities], source: op.qualities.length < QUALITIES.length ? 'operator' : 'default' };
    const sizes: EffectiveSetting<Size[]> =
      v.sizes !== undefined
        ? admin('sizes', v.sizes.filter((q) => op.sizes.includes(q)))
        : { value: [...op.sizes], source: op.sizes.length < SIZES.length ? 'operator' : 'default' };
    // An admin's choice the operator has since narrowed away falls back to what the operator allows.
    if (qualities.value.length === 0) Object.assign(qualities, { value: [...op.qualities], source: 'operator' });
    if (sizes.value.length === 0) Object.assign(sizes, { value: [...op.sizes], source: 'operator' });

    const maxImages: EffectiveSetting<number> =
      v.maxImages !== undefined && v.maxImages <= op.maxImagesPerJob
        ? admin('maxImages', v.maxImages)
        : { value: op.maxImagesPerJob, source: op.maxImagesPerJob < LIMITS.nMax ? 'operator' : 'default' };
    const moderation: EffectiveSetting<'low' | 'auto'> =
      v.moderation !== undefined && (v.moderation === 'auto' || op.allowLowModeration)
        ? admin('moderation', v.moderation)
        : { value: 'auto', source: op.allowLowModeration ? 'default' : 'operator' };
    const defaultSize: EffectiveSetting<Size> =
      v.defaultSize !== undefined && sizes.value.includes(v.defaultSize)
        ? admin('defaultSize', v.defaultSize)
        : { value: sizes.value.includes(DEFAULTS.size) ? DEFAULTS.size : sizes.value[0]!, source: 'default' };
    const defaultQuality: EffectiveSetting<Quality> =
      v.defaultQuality !== undefined && qualities.value.includes(v.defaultQuality)
        ? admin('defaultQuality', v.defaultQuality)
        : { value: qualities.value.includes(DEFAULTS.quality) ? DEFAULTS.quality : qualities.value[0]!, source: 'default' };
    const defaultPreviews: EffectiveSetting<number> =
      v.defaultPreviews !== undefined
        ? admin('defaultPreviews', Math.min(v.defaultPreviews, this.#partialImages))
        : { value: this.#partialImages, source: 'operator' };

    return {
      platform: requester.platform,
      scopeId: requester.scopeId,
      scopeAllowed: this.#scopeAllowed(requester),
      channels: list<string>('channels', []),
      allowed: list<string>('allowed', []),
      blocked: list<string>('blocked', []),
      operatorBlockedWords: [...op.blockedWords],
      blockedWords: list<string>('blockedWords', []),
      maxImages,
      qualities,
      sizes,
      highQualityFor: list<string>('highQualityFor', []),
      moderation,
      defaultSize,
      defaultQuality,
      defaultPreviews,
      privateResults: v.privateResults !== undefined ? admin('privateResults', v.privateResults) : { value: true, source: 'default' },
      auditChannel: v.auditChannel !== undefined ? admin('auditChannel', { ...v.auditChannel }) : { value: undefined, source: 'default' },
      unreadable: (stored.unreadable ?? []).filter((name): name is SettingName => name !== 'roleBudgets'),
    };
  }

  /**
   * A chat admin sets (or with `value` undefined clears) one setting of their
   * own scope, within what the operator allows. Kept in the store (every
   * process sees it within the cache time; this one at once) and logged with
   * who made it. The surfaces decide who is an admin.
   */
  async set<K extends SettingName>(requester: Requester, name: K, value: ScopeSettings[K] | undefined): Promise<SettingChangeResult> {
    if (!requester.isAdmin) return { ok: false, code: 'not_admin', name };
    const invalid = invalidValueOf(name, value);
    if (invalid) return invalid;
    if (value !== undefined && (name === 'defaultQuality' || name === 'defaultSize')) {
      const scopeBound = this.#scopeBound(name, value, await this.effective(requester));
      if (scopeBound) return scopeBound;
    }
    const bound = value === undefined ? undefined : this.#operatorBound(name, value);
    if (bound) return { ok: false, code: 'not_allowed_by_operator', name, allowed: bound };
    const scopeKey = scopeKeyOf(requester);
    try {
      const { previous, unreadable } = await this.#store.set(scopeKey, name, value, { by: userKeyOf(requester), at: this.#now() });
      return this.#changed(requester, name, previous, value, unreadable);
    } catch (error) {
      if (error instanceof ListTooLongError) return { ok: false, code: 'invalid_value', name, most: error.most };
      throw error;
    }
  }

  /**
   * A chat admin changes one list of their own scope from what it is stored as now (`add`, `remove`): `change` gets
   * the list as it applies (its default when unset) and answers the new value (`undefined` clears it). One atomic change
   * of the stored value — an admin on another replica changing it meanwhile loses nothing (a value read through this
   * policy's cache may be a few seconds old) — checked as `set` checks a value; nothing is changed when it is refused.
   * A list stored and unreadable is refused (`setting_unreadable`): building on its default would store a list its
   * admins never chose and lift the refusal it holds; only a whole value (`set`) or clearing it mends it. A change that
   * would empty a stored list of who, where or what may be used is refused (`would_open`): none is everyone, which two
   * admins each removing one entry would otherwise reach; only `clear` opens it. A list longer than its bound is the
   * store's to take or refuse (a part of the one stored, read whole, may stay longer: `ListTooLongError`).
   */
  async update<K extends ListSettingName>(requester: Requester, name: K, change: (current: EffectiveSettings[K]['value']) => ScopeSettings[K] | undefined): Promise<SettingUpdateResult> {
    if (!requester.isAdmin) return { ok: false, code: 'not_admin', name };
    let previous: ScopeSettings[K] | undefined;
    try {
      const value = await this.#store.update(
        scopeKeyOf(requester),
        name,
        (current, context) => {
          if (context.unreadable) throw new UpdateRefused({ ok: false, code: 'setting_unreadable', name });
          previous = current;
          const values: ScopeSettings = current === undefined ? {} : { [name]: current };
          const next = change(this.#effectiveOf(requester, { values, setBy: {} })[name].value as EffectiveSettings[K]['value']);
          const emptied = next === undefined || (Array.isArray(next) && next.length === 0);
          if (emptied && Array.isArray(current) && current.length > 0 && OPEN_WHEN_EMPTY.includes(name)) throw new UpdateRefused({ ok: false, code: 'would_open', name });
          const invalid = invalidValueOf(name, next);
          if (invalid) throw new UpdateRefused(invalid);
          const bound = next === undefined ? undefined : this.#operatorBound(name, next);
          if (bound) throw new UpdateRefused({ ok: false, code: 'not_allowed_by_operator', name, allowed: bound });
          return next;
        },
        { by: userKeyOf(requester), at: this.#now() },
      );
      return this.#changed(requester, name, previous, value, false);
    } catch (error) {
      if (error instanceof UpdateRefused) return error.result;
      if (error instanceof ListTooLongError) return { ok: false, code: 'invalid_value', name, most: error.most };
      throw error;
    }
  }

  /**
   * A chat admin clears, in one step, every setting of their own scope that is stored and cannot be read — each back
   * to its default, the role budgets to none (each member's cap) — and nothing else: the readable ones stay, and so do
   * the values of the right shape a later version wrote (`left`: `ScopeSettingsStore.repair`). What a
   * scope whose record is damaged needs to take jobs again without setting or clearing each rule in turn. Logged with
   * who did it when it cleared any.
   */
  async repair(requester: Requester): Promise<SettingsRepairResult> {
    if (!requester.isAdmin) return { ok: false, code: 'not_admin' };
    const scopeKey = scopeKeyOf(requester);
    const { cleared, left } = await this.#store.repair(scopeKey);
    if (cleared.length > 0) this.#logger?.info({ scopeKey, changedBy: userKeyOf(requester), cleared, ...(left.length > 0 && { left }) }, 'a chat admin cleared the settings that could not be read');
    return { ok: true, cleared, left };
  }

  /** Logs a change made, with who made it, and answers it. */
  #changed(requester: Requester, name: SettingName, previous: unknown, value: unknown, unreadable: boolean): SettingChangeResult {
    this.#logger?.info(
      { scopeKey: scopeKeyOf(requester), setting: name, changedBy: userKeyOf(requester), old: previous ?? null, new: value ?? null, ...(unreadable && { oldUnreadable: true }) },
      value === undefined ? 'a chat admin cleared a setting' : 'a chat admin changed a setting',
    );
    return { ok: true, name, previous, value, wasUnreadable: unreadable };
  }

  /**
   * The refusal of a default size or quality outside the sizes or qualities that apply to the scope: blamed on the
   * scope's own setting (`not_allowed_by_scope`) when its admins chose that list and the operator allows the value,
   * else on the operator; undefined when the value is within.
   */
  #scopeBound(name: 'defaultQuality' | 'defaultSize', value: unknown, s: Pick<EffectiveSettings, 'qualities' | 'sizes'>): Extract<SettingChangeResult, { ok: false }> | undefined {
    const list = name === 'defaultQuality' ? s.qualities : s.sizes;
    if ((list.value as readonly unknown[]).includes(value)) return undefined;
    const operatorBound = this.#operatorBound(name, value);
    if (list.source === 'admin' && !operatorBound) return { ok: false, code: 'not_allowed_by_scope', name, allowed: { oneOf: list.value }, boundBy: name === 'defaultQuality' ? 'qualities' : 'sizes' };
    return { ok: false, code: 'not_allowed_by_operator', name, allowed: operatorBound ?? { oneOf: list.value } };
  }

  /** What the operator allows for this setting when `value` goes beyond it; undefined when it is within. */
  #operatorBound(name: SettingName, value: unknown): OperatorBound | undefined {
    const op = this.#operator;
    switch (name) {
      case 'maxImages':
        return (value as number) > op.maxImagesPerJob ? { atMost: op.maxImagesPerJob } : undefined;
      case 'qualities':
        return (value as Quality[]).every((q) => op.qualities.includes(q)) ? undefined : { oneOf: op.qualities };
      case 'sizes':
        return (value as Size[]).every((s) => op.sizes.includes(s)) ? undefined : { oneOf: op.sizes };
      case 'moderation':
        return value === 'low' && !op.allowLowModeration ? { oneOf: ['auto'] } : undefined;
      case 'defaultPreviews':
        return (value as number) > this.#partialImages ? { atMost: this.#partialImages } : undefined;
      case 'defaultQuality':
        return op.qualities.includes(value as Quality) ? undefined : { oneOf: op.qualities };
      case 'defaultSize':
        return op.sizes.includes(value as Size) ? undefined : { oneOf: op.sizes };
      default:
        return undefined;
    }
  }

  /** `PICTOR_ALLOWED_SCOPES` lists servers/workspaces; a person's own scope (DMs, user installs) is the surface's to allow. */
  #scopeAllowed(requester: Pick<Requester, 'scopeId'>): boolean {
    return this.#operator.allowedScopes === undefined || isDmScope(requester.scopeId) || this.#operator.allowedScopes.includes(requester.scopeId);
  }
}

/** A scope settings store read through a `TtlCache`: a write forgets the scope's kept answer once it is done (or failed). */
class CachedSettings implements ScopeSettingsStore {
  readonly #store: ScopeSettingsStore;
  readonly #cache: TtlCache<StoredScopeSettings>;

  constructor(store: ScopeSettingsStore, cache: TtlCache<StoredScopeSettings>) {
    this.#store = store;
    this.#cache = cache;
  }

  get(scopeKey: string): Promise<StoredScopeSettings> {
    return this.#cache.get(scopeKey, () => this.#store.get(scopeKey));
  }

  async set<K extends StoredSettingName>(scopeKey: string, name: K, value: ScopeSettings[K] | undefined, change: SettingChange): Promise<{ previous: ScopeSettings[K] | undefined; unreadable: boolean }> {
    try {
      return await this.#store.set(scopeKey, name, value, change);
    } finally {
      this.#cache.delete(scopeKey);
    }
  }

  async update<K extends StoredSettingName>(scopeKey: string, name: K, change: SettingUpdate<K>, by: SettingChange): Promise<ScopeSettings[K] | undefined> {
    try {
      return await this.#store.update(scopeKey, name, change, by);
    } finally {
      this.#cache.delete(scopeKey);
    }
  }

  async repair(scopeKey: string): Promise<SettingsRepair> {
    try {
      return await this.#store.repair(scopeKey);
    } finally {
      this.#cache.delete(scopeKey);
    }
  }
}

/** A refusal found inside a store's `update`: thrown so nothing is written, answered by `ScopePolicy.update`. */
class UpdateRefused extends Error {
  constructor(readonly result: Exclude<SettingUpdateResult, { ok: true }>) {
    super(result.code);
  }
}

function isOneOf<T extends string>(value: unknown, choices: readonly T[]): value is T {
  return (choices as readonly unknown[]).includes(value);
}


/**
 * `invalid_value` when `value` is not one `name` takes (naming the bound of a list too long); undefined when it is. A
 * list of who and where longer than its bound is left to the store, which alone knows what is stored now (`valueRefusal`).
 */
function invalidValueOf(name: SettingName, value: unknown): Extract<SettingChangeResult, { ok: false }> | undefined {
  const refusal = valueRefusal(name, value);
  if (refusal) return { ok: false, code: 'invalid_value', name, ...refusal };
  const unmatchable = name === 'blockedWords' && Array.isArray(value) ? unmatchableEntries(value as string[]) : [];
  return unmatchable.length > 0 ? { ok: false, code: 'invalid_value', name, unmatchable } : undefined;
}

/**
 * The scope's default quality as it applies to this requester: where `high-quality` does not list them, a default of
 * `high` is not theirs — the spec's default (`auto`) stands in, or, where the scope's qualities leave that out, the
 * first of them they may use. Only when none is left does the default stay (and is refused, naming the rule).
 */
export function defaultQualityFor(requester: Requester, s: EffectiveSettings): Quality {
  const value = s.defaultQuality.value;
  if (value !== 'high' || mayUseHigh(requester, s)) return value;
  const theirs = qualitiesFor(requester, s);
  return theirs.includes(DEFAULTS.quality) ? DEFAULTS.quality : (theirs[0] ?? value);
}

/** The qualities this requester may ask for: the scope's, without `high` where `high-quality` does not list them. */
export function qualitiesFor(requester: Requester, s: EffectiveSettings): Quality[] {
  return mayUseHigh(requester, s) ? s.qualities.value : s.qualities.value.filter((q) => q !== 'high');
}

function mayUseHigh(requester: Requester, s: EffectiveSettings): boolean {
  return s.highQualityFor.value.length === 0 || isListed(requester, s.highQualityFor.value);
}

/** How a job was asked, as its private refusal's advice follows it: run again by a button (`JobIntent.again`), or with a form (`JobIntent.inForm`). */
type AskedHow = { again?: boolean | undefined; inForm?: boolean | undefined };

/** The rule a job's options (the scope's defaults filled in) break, checked in this order; undefined when none. */
function optionsRefusal(spec: JobSpec, options: JobOptions, moderationAsked: JobOptions['moderation'], s: EffectiveSettings, asked: AskedHow): JobRefusedError | undefined {
  const refuse = refuserOf(spec.requester);
  if (moderationAsked === 'low' && s.moderation.value !== 'low') return refuse('moderation_not_allowed');
  const n = options.n ?? DEFAULTS.n;
  const quality = options.quality ?? DEFAULTS.quality;
  const size = options.size ?? DEFAULTS.size;
  // A value the service would not take at all is left to validation, which names the field and what it takes.
  if (Number.isInteger(n) && n <= LIMITS.nMax && n > s.maxImages.value) return refuse('too_many_images', { limit: s.maxImages.value, used: n });
  if (isOneOf(quality, QUALITIES) && !s.qualities.value.includes(quality)) return refuse('quality_not_allowed', { allowed: s.qualities.value });
  if (quality === 'high' && !mayUseHigh(spec.requester, s)) return refuse('high_quality_not_allowed');
  if (isOneOf(size, SIZES) && !s.sizes.value.includes(size)) return refuse('size_not_allowed', { allowed: s.sizes.value });
  return privateRefusal(spec, s, asked);
}

/** The one private rule: a private job (asked, or the member's default) where `private-results` is off. */
function privateRefusal(spec: Pick<JobSpec, 'requester' | 'private' | 'privateByDefault'>, s: EffectiveSettings, context: AskedHow = {}): JobRefusedError | undefined {
  if (spec.private !== true || s.privateResults.value) return undefined;
  return refuserOf(spec.requester)('private_not_allowed', { fromDefault: spec.privateByDefault === true, ...context });
}

/**
 * The refusal of every job of a scope while one of its restrictions cannot be read (`settings_unreadable`, naming
 * them); undefined when each can. A restriction that cannot be read is never taken for unset (which would lift it):
 * nothing runs until an admin mends it. What a member's views show in place of the limits meanwhile.
 */
export function unreadableRulesRefusal(s: Pick<EffectiveSettings, 'platform' | 'unreadable'>): JobRefusedError | undefined {
  const unreadable = s.unreadable.filter(isFailClosed);
  return unreadable.length > 0 ? refusalFromPolicy('settings_unreadable', { platform: s.platform, settings: unreadable }) : undefined;
}

/** Makes the refusal of a rule, for a requester's platform. */
function refuserOf(requester: Pick<Requester, 'platform'>) {
  return (code: Parameters<typeof refusalFromPolicy>[0], details: RefusalContext = {}): JobRefusedError =>
    refusalFromPolicy(code, { platform: requester.platform, ...details });
}

/** The requester's channel is one `channels` lists, or is a thread or forum post inside one. */
function inAllowedChannel(requester: Pick<Requester, 'channelId' | 'parentChannelId'>, channels: readonly string[]): boolean {
  return channels.includes(requester.channelId) || (requester.parentChannelId !== undefined && channels.includes(requester.parentChannelId));
}

/** The requester is in a list of users and roles (`user:<id>`, `role:<id>`). */
function isListed(requester: Pick<Requester, 'userId' | 'roleIds'>, list: readonly string[]): boolean {
  return list.includes(`user:${requester.userId}`) || (requester.roleIds ?? []).some((role) => list.includes(`role:${role}`));
}
