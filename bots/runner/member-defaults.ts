import { definedOf } from 'pictor/internal';
import { z } from 'zod';
import { LIMITS, OUTPUT_FORMATS, parseGenerationRequest, QUALITIES, SIZES, type LoggerLike } from 'pictor';
import { stateKeyOf, type Space } from '../state/index.js';
import { refusalOfUnreadableDefaults, scopeWordOf } from './describe-refusal.js';
import { userKeyOf } from './member-keys.js';
import type { ScopePolicy } from './scope-policy.js';
import { memorySpace } from './memory-space.js';
import type { JobOptions, JobSpec, Requester } from './types.js';
import { listOf, words, type Words } from './words.js';

/**
 * A member's own defaults (`/imagine-settings` on Discord, `/imagine settings` on Slack): applied where they choose
 * nothing, wherever they use Pictor (but a Slack workflow step, which takes the workspace's), and always inside the rules of the server/workspace the job is in — a default
 * those rules do not allow there is not used (the server's own default applies) and the member is told which.
 */
export const MemberDefaultsSchema = z.object({
  size: z.enum(SIZES).optional(),
  quality: z.enum(QUALITIES).optional(),
  format: z.enum(OUTPUT_FORMATS).optional(),
  /** Images per generation (an edit makes one). */
  count: z.number().int().min(LIMITS.nMin).max(LIMITS.nMax).optional(),
  /** Results shown only to them unless they ask otherwise. */
  private: z.boolean().optional(),
  /** false: no previews while their images are drawn (cheaper to watch, same price). */
  previews: z.boolean().optional(),
});

export type MemberDefaults = z.output<typeof MemberDefaultsSchema>;
export type MemberDefaultName = keyof MemberDefaults;
/** The names members type (`/imagine-settings clear:size`, `--size`), in the order the settings view shows them. */
export const MEMBER_DEFAULT_NAMES: readonly MemberDefaultName[] = ['size', 'quality', 'format', 'count', 'private', 'previews'];

/** A change of a member's defaults: a value sets one, `null` clears it (back to the server's/workspace's). */
export type MemberDefaultsChange = { [K in MemberDefaultName]?: MemberDefaults[K] | null };

/** A member's defaults as stored: those that can be read, and those kept but unreadable (never taken for unset). */
export interface StoredMemberDefaults {
  defaults: MemberDefaults;
  /** Defaults kept that cannot be read (a damaged record: every one of them); none when empty. */
  unreadable: readonly MemberDefaultName[];
}

/** Where members' defaults are kept (the bots' state: `memberDefaultsInState`). Storage only. */
export interface MemberDefaultsStore {
  get(userKey: string): Promise<StoredMemberDefaults>;
  /** Applies a change atomically (on a damaged record too: what it sets or clears is readable after); answers the defaults that can be read after it. */
  change(userKey: string, change: MemberDefaultsChange): Promise<MemberDefaults>;
}

/** The job options each default fills in. */
const FIELD_OF = { size: 'size', quality: 'quality', format: 'output_format', count: 'n' } as const satisfies Partial<Record<MemberDefaultName, keyof JobOptions>>;
type OptionDefault = keyof typeof FIELD_OF;

/** What the intake does with a member's defaults for one job. */
export interface AppliedDefaults {
  /** The job with the defaults filled in where the member chose nothing, and `private` resolved. */
  spec: JobSpec;
  /** false: the member turned previews off. */
  previews: boolean;
  /** Their defaults the rules here do not allow, not used: told to the member privately. */
  ignored?: Words | undefined;
}

/** A default as the view shows it: its value, and why it is not used here (undefined: it is). */
export interface MemberDefaultView {
  name: MemberDefaultName;
  value: MemberDefaults[MemberDefaultName];
  /** Not used in this server/workspace: its rules do not allow it. */
  ignoredHere: boolean;
  /** Kept but unreadable (no value): every job of the member is refused until they set it again or clear it. */
  unreadable?: boolean | undefined;
}

/**
 * Members' own defaults: kept per member (`discord:<user>`, `slack:<user>`), applied by the intake before the
 * server's/workspace's rules (`ScopePolicy.admit`), which decide whether each is allowed there — the same call a job
 * goes through, so a default is never wider than what the member could ask for by hand.
 */
export class MemberDefaultsBook {
  readonly #store: MemberDefaultsStore;
  readonly #policy: ScopePolicy;
  readonly #logger: LoggerLike | undefined;

  constructor(options: { store: MemberDefaultsStore; policy: ScopePolicy; logger?: LoggerLike | undefined }) {
    this.#store = options.store;
    this.#policy = options.policy;
    this.#logger = options.logger;
  }

  /**
   * The member's defaults (empty when they set none). One kept but unreadable is never taken for unset (a private
   * default would be lost): their job is refused privately (`defaults_unreadable`) until they set it again or clear it.
   */
  async of(requester: Pick<Requester, 'platform' | 'userId'>, only?: readonly MemberDefaultName[]): Promise<MemberDefaults> {
    const userKey = userKeyOf(requester);
    const stored = await this.#store.get(userKey);
    // `only`: the defaults the job uses (their own Reroll or Retry: previews alone); another unreadable one is not its concern.
    const unreadable = only ? stored.unreadable.filter((name) => only.includes(name)) : stored.unreadable;
    const defaults = only ? (Object.fromEntries(only.filter((name) => stored.defaults[name] !== undefined).map((name) => [name, stored.defaults[name]])) as MemberDefaults) : stored.defaults;
    if (unreadable.length === 0) return defaults;
    this.#logger?.warn({ userKey, unreadable }, 'stored defaults of a member are unreadable: their jobs are refused until they set or clear them');
    throw refusalOfUnreadableDefaults(requester.platform, unreadable);
  }

  /** Changes the member's own defaults (anyone may: they are theirs); logged without values. */
  async change(requester: Requester, change: MemberDefaultsChange): Promise<MemberDefaults> {
    const after = await this.#store.change(userKeyOf(requester), change);
    this.#logger?.info({ userKey: userKeyOf(requester), changed: Object.keys(change) }, 'a member changed their defaults');
    return after;
  }

  /** Each default the member set, and whether the rules of the requester's server/workspace let it be used there. */
  async view(requester: Requester): Promise<MemberDefaultView[]> {
    const { defaults, unreadable } = await this.#store.get(userKeyOf(requester));
    const views: MemberDefaultView[] = [];
    for (const name of MEMBER_DEFAULT_NAMES) {
      const value = defaults[name];
      if (unreadable.includes(name)) views.push({ name, value: undefined, ignoredHere: false, unreadable: true });
      if (value === undefined) continue;
      views.push({ name, value, ignoredHere: !(await this.#usableHere(requester, name, value)) });
    }
    return views;
  }

  /**
   * Fills in the member's defaults where the job asks nothing: each option default the rules here allow (checked by
   * `policy.allowsOptions`, as if asked by hand; a format only where the job's other options take it), `private` unless the
   * job says otherwise (the rules then decide on it like on an asked one), and whether previews are shown. `own: false`
   * applies none of them, `own: 'previews'` only whether previews are shown (`JobIntent.memberDefaults`). Refuses
   * (`defaults_unreadable`, see `of`) while one it applies is kept but unreadable (with `own: 'previews'`, only
   * `previews` itself; none when it applies none).
   */
  async apply(spec: JobSpec, use: { own?: boolean | 'previews' } = {}): Promise<AppliedDefaults> {
    const defaults: MemberDefaults = use.own === false ? {} : await this.of(spec.requester, use.own === 'previews' ? ['previews'] : undefined);
    const options: JobOptions = { ...spec.options };
    const ignored: string[] = [];
    for (const name of Object.keys(FIELD_OF) as OptionDefault[]) {
      const value = defaults[name];
      const field = FIELD_OF[name];
      if (value === undefined || options[field] !== undefined) continue;
      // An edit makes one image a job: a default count is for generations.
      if (name === 'count' && spec.kind === 'edit') continue;
      if (name === 'format' && !takesFormat(spec, options, value as string)) continue;
      if (await this.#allowed(spec.requester, name, value as never)) (options as Record<string, unknown>)[field] = value;
      else ignored.push(`${name} ${String(value)}`);
    }
    const privately = spec.private ?? defaults.private;
    return {
      spec: { ...spec, options, private: privately === true, privateByDefault: spec.private === undefined && defaults.private === true },
      previews: defaults.previews !== false,
      ignored: ignored.length > 0 ? words('member.ignored', { count: ignored.length, defaults: listOf(ignored), scope: scopeWordOf(spec.requester.platform, spec.requester.scopeId) }) : undefined,
    };
  }

  /** Whether a default can be used in the requester's server/workspace (private results may be off there). */
  async #usableHere(requester: Requester, name: MemberDefaultName, value: unknown): Promise<boolean> {
    if (name in FIELD_OF) return this.#allowed(requester, name as OptionDefault, value as never);
    if (name === 'private' && value === true) return (await this.#policy.effective(requester)).privateResults.value;
    return true;
  }

  /** Whether the rules of the requester's server/workspace allow this one option, asked by hand (who and where are the job's own refusal). */
  #allowed(requester: Requester, name: OptionDefault, value: never): Promise<boolean> {
    return this.#policy.allowsOptions(requester, { [FIELD_OF[name]]: value });
  }
}

/** A default format is used only where the job's other options take it (transparency, compression): it never makes a valid job invalid. */
function takesFormat(spec: JobSpec, options: JobOptions, format: string): boolean {
  try {
    parseGenerationRequest({ prompt: spec.prompt || '-', ...definedOf(options), output_format: format });
    return true;
  } catch {
    return false;
  }
}


/**
 * Members' defaults as the bots' state keeps them: one small record per member (the `member-defaults` space; no
 * prompt), erased by `forget`. A record that cannot be read (damaged), or a stored value this version cannot read, is
 * answered as unreadable, never as unset. A change on a damaged record writes it anew with what the change sets or
 * clears readable and the rest still unreadable (a clear of all deletes it). Without a space, a store of this process alone.
 */
export function memberDefaultsInState(space: Pick<Space<MemberDefaults>, 'read' | 'update'> = memorySpace<MemberDefaults>()): MemberDefaultsStore {
  return {
    get: async (userKey) => readStored(await space.read(stateKeyOf(userKey))),
    async change(userKey, change) {
      for (const [name, value] of Object.entries(change)) if (value !== null) MemberDefaultsSchema.shape[name as MemberDefaultName].parse(value);
      const { after } = await space.update(
        stateKeyOf(userKey),
        (current) => {
          // A damaged record: each default it may have held stays unreadable (a mark no version reads) but those the change names.
          const next: Record<string, unknown> = isRecord(current) ? { ...current } : current === undefined ? {} : Object.fromEntries(MEMBER_DEFAULT_NAMES.map((name) => [name, DAMAGED_MARK]));
          for (const [name, value] of Object.entries(change)) {
            if (value === null) delete next[name];
            else if (value !== undefined) next[name] = value;
          }
          return Object.keys(next).length > 0 ? (next as MemberDefaults) : undefined;
        },
        { unreadable: true },
      );
      return readStored(after).defaults;
    },
  };
}

/** What a damaged record's defaults are written as until set again or cleared: a value no version reads as a default. */
// Every one, unlike `FAIL_CLOSED_SETTINGS`' restrictions alone: each is the member's own choice (private, count), which the server's default would override.
const DAMAGED_MARK = { damaged: true } as const;

function readStored(stored: unknown): StoredMemberDefaults {
  if (stored === undefined) return { defaults: {}, unreadable: [] };
  if (!isRecord(stored)) return { defaults: {}, unreadable: [...MEMBER_DEFAULT_NAMES] };
  const defaults: Record<string, unknown> = {};
  const unreadable: MemberDefaultName[] = [];
  for (const name of MEMBER_DEFAULT_NAMES) {
    if (stored[name] === undefined) continue;
    const parsed = MemberDefaultsSchema.shape[name].safeParse(stored[name]);
    if (parsed.success && parsed.data !== undefined) defaults[name] = parsed.data;
    else unreadable.push(name);
  }
  return { defaults: defaults as MemberDefaults, unreadable };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
