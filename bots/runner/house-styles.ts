import { definedOf } from 'pictor/internal';
import { z } from 'zod';
import { scopeKeyOf, userKeyOf } from './member-keys.js';
import { BACKGROUNDS, DEFAULTS, LIMITS, OUTPUT_FORMATS, parseGenerationRequest, QUALITIES, SIZES, ValidationError, type LoggerLike, type ValidationRule } from 'pictor';
import { stateKeyOf, type Space } from '../state/index.js';
import { findBlockedWord } from './blocked-words.js';
import { JobRefusedError } from './JobRefusedError.js';
import { scopeWordOf } from './describe-refusal.js';
import { validationDetailWords } from './describe-failure.js';
import { memorySpace } from './memory-space.js';
import { TtlCache } from './ttl-cache.js';
import { nested, words } from './words.js';
import type { FieldNames, JobOptions, Requester } from './types.js';
import { ToldOnce } from './told-once.js';

/**
 * House styles: named text around a member's prompt (`before {prompt} after`)
 * and default options, defined by the admins of a server/workspace and picked
 * by members (`style:` on Discord, `--style` on Slack). A style is applied by
 * the intake before every rule, so blocked words, the scope's bounds, the
 * fields' validation and the budgets all see the prompt and options as sent.
 */
export const HOUSE_STYLE_LIMITS = {
  /** Styles per server/workspace (Discord's autocomplete shows at most 25 choices). */
  perScope: 25,
  /** Characters of a style's text (before and after the prompt together). */
  textLength: 1000,
} as const;

/** Where a member's prompt goes in a style's text: `neon-lit, {prompt}, synthwave palette`. */
export const PROMPT_PLACEHOLDER = '{prompt}';

/** A style's name: lowercase letters, digits, `-` and `_`, 1 to 32 (what members type). */
export const STYLE_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/;
export const STYLE_NAME_MAX = 32;

/** The options a style may set; a member's own choice wins over the style's. */
export const StyleOptionsSchema = z
  .object({
    n: z.number().int().min(LIMITS.nMin).max(LIMITS.nMax).optional(),
    size: z.enum(SIZES).optional(),
    quality: z.enum(QUALITIES).optional(),
    background: z.enum(BACKGROUNDS).optional(),
    output_format: z.enum(OUTPUT_FORMATS).optional(),
  })
  .strict();

export type StyleOptions = z.output<typeof StyleOptionsSchema>;

/** The options a style may set, as request fields. */
const STYLE_OPTION_FIELDS: ReadonlySet<string> = new Set(Object.keys(StyleOptionsSchema.shape));

/**
 * The fields of a rule between two options or more (the spec's: a transparent background and its format, compression
 * and its format), as the core's rule names them: a style may set any of them. None for a field's own rule.
 */
function fieldsBetween(rule: ValidationRule | undefined): readonly string[] {
  return rule !== undefined && rule.fields.length > 1 ? rule.fields : [];
}

function isStyleOption(field: string): field is keyof StyleOptions {
  return STYLE_OPTION_FIELDS.has(field);
}

/** Whether a style's `value` for `field` is the one the job would have without the style: `without`'s, else the spec's default. */
function valueWithout(field: keyof StyleOptions, value: unknown, without: JobOptions): boolean {
  return value === (without[field] ?? DEFAULTS[field]);
}

const HouseStyleSchema = z.object({
  before: z.string().max(HOUSE_STYLE_LIMITS.textLength),
  after: z.string().max(HOUSE_STYLE_LIMITS.textLength),
  options: StyleOptionsSchema,
  /** Who defined it (`discord:<user>`) and when (ms since the epoch). */
  by: z.string(),
  at: z.number(),
});

export type HouseStyle = z.output<typeof HouseStyleSchema>;

/** The styles of one scope as the state keeps them: one record per scope (`house-styles` space), by name. */
export type HouseStyleRecord = Record<string, HouseStyle>;

export interface NamedStyle extends HouseStyle {
  name: string;
}

/**
 * Why defining or removing a style was refused. Stable: surfaces and tests switch on it. `option_conflict`: the
 * style's own options break a rule between two options (a transparent background with jpeg), so every job using it
 * would be refused.
 */
export type StyleChangeRefusal = 'not_admin' | 'invalid_name' | 'invalid_text' | 'too_many_styles' | 'unknown_style' | 'option_conflict';

export type StyleChangeResult =
  | { ok: true; name: string; previous: HouseStyle | undefined; style: HouseStyle | undefined }
  | { ok: false; code: Exclude<StyleChangeRefusal, 'option_conflict'>; name: string }
  /** `conflict`: the request validation's own refusal of the style's options (its rule, the field at fault). */
  | { ok: false; code: 'option_conflict'; name: string; conflict: ValidationError };

/** A job's prompt and options once its style is applied (the member's own when they chose none). */
export interface StyledJob {
  prompt: string;
  options: JobOptions;
  /** The style applied, if any. */
  style?: string | undefined;
}

type StyleSpace = Pick<Space<HouseStyleRecord>, 'get' | 'update'>;

export interface HouseStylesOptions {
  /** The `house-styles` space of the bots' state; without it, this process's memory (tests, tools). */
  space?: StyleSpace | undefined;
  logger?: LoggerLike | undefined;
  now?: (() => number) | undefined;
  /** How long a scope's styles are cached before the state is read again. Default 5 s (a change made in this process applies at once). */
  cacheMs?: number | undefined;
}

/**
 * Reads a style's text as admins type it: `before {prompt} after`; text without
 * `{prompt}` goes after the prompt. Undefined when `{prompt}` appears more than
 * once or the text is too long.
 */
export function parseStyleText(text: string): { before: string; after: string } | undefined {
  const trimmed = text.trim();
  if (trimmed.length - (trimmed.includes(PROMPT_PLACEHOLDER) ? PROMPT_PLACEHOLDER.length : 0) > HOUSE_STYLE_LIMITS.textLength) return undefined;
  const parts = trimmed.split(PROMPT_PLACEHOLDER);
  if (parts.length > 2) return undefined;
  if (parts.length === 1) return { before: '', after: trimmed === '' ? '' : ` ${trimmed}` };
  return { before: parts[0]!, after: parts[1]! };
}

/** A style's text as admins wrote it (`before {prompt} after`). */
export function styleText(style: Pick<HouseStyle, 'before' | 'after'>): string {
  return `${style.before}${PROMPT_PLACEHOLDER}${style.after}`.trim();
}

/** The prompt as sent: the member's, inside the style's text. */
export function applyStyleText(style: Pick<HouseStyle, 'before' | 'after'>, prompt: string): string {
  return `${style.before}${prompt}${style.after}`;
}

/**
 * The house styles of every server/workspace (`runner.styles`): kept in the
 * bots' state, so every process of the account applies one set and a restart
 * keeps them. `define` and `remove` are the one place an admin's change is
 * checked (admin, name, text, how many), stored and logged; `apply` is what the
 * intake calls first.
 */
export class HouseStyles {
  readonly #space: StyleSpace;
  readonly #logger: LoggerLike | undefined;
  readonly #now: () => number;
  readonly #cache: TtlCache<HouseStyleRecord>;
  /** The damaged styles of each scope already warned of, while they stay so (bounded: the oldest scope forgotten first). */
  readonly #told = new ToldOnce<ReadonlySet<string>>();

  constructor(options: HouseStylesOptions = {}) {
    this.#space = options.space ?? memorySpace<HouseStyleRecord>();
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#cache = new TtlCache({ ttlMs: options.cacheMs ?? 5_000, now: this.#now });
  }

  /** The scope's styles, by name. */
  async list(scope: Pick<Requester, 'platform' | 'scopeId'>): Promise<NamedStyle[]> {
    const record = await this.#read(scopeKeyOf(scope));
    return Object.entries(record)
      .map(([name, style]) => ({ name, ...style }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Defines (or replaces) a style of the requester's scope; admins only. */
  async define(requester: Requester, name: string, text: string, options: StyleOptions = {}): Promise<StyleChangeResult> {
    const styleName = name.trim().toLowerCase();
    if (!requester.isAdmin) return { ok: false, code: 'not_admin', name: styleName };
    if (!STYLE_NAME_PATTERN.test(styleName)) return { ok: false, code: 'invalid_name', name: styleName };
    const parts = parseStyleText(text);
    const checked = StyleOptionsSchema.safeParse(options);
    if (!parts || !checked.success) return { ok: false, code: 'invalid_text', name: styleName };
    const conflict = refusalOfOptions(checked.data);
    // A rule between two options is told by name; any other refusal of the request schema (were the style's schema ever
    // to take a value it refuses) is the style's text refused, never an error on the bot's side.
    if (conflict) return fieldsBetween(conflict.rule).length > 0 ? { ok: false, code: 'option_conflict', name: styleName, conflict } : { ok: false, code: 'invalid_text', name: styleName };
    const by = userKeyOf(requester);
    const style: HouseStyle = { ...parts, options: definedOf(checked.data), by, at: this.#now() };
    const scopeKey = scopeKeyOf(requester);
    let full = false;
    const { before } = await this.#space.update(stateKeyOf(scopeKey), (record = {}) => {
      full = record[styleName] === undefined && Object.keys(record).length >= HOUSE_STYLE_LIMITS.perScope;
      return full ? record : { ...record, [styleName]: style };
    });
    this.#cache.delete(scopeKey);
    if (full) return { ok: false, code: 'too_many_styles', name: styleName };
    const previous = readStyle(before?.[styleName]);
    this.#logger?.info({ scopeKey, style: styleName, changedBy: by, replaced: previous !== undefined }, 'a chat admin defined a house style');
    return { ok: true, name: styleName, previous, style };
  }

  /** Removes a style of the requester's scope; admins only. */
  async remove(requester: Requester, name: string): Promise<StyleChangeResult> {
    const styleName = name.trim().toLowerCase();
    if (!requester.isAdmin) return { ok: false, code: 'not_admin', name: styleName };
    const scopeKey = scopeKeyOf(requester);
    const { before } = await this.#space.update(stateKeyOf(scopeKey), (record = {}) => {
      const { [styleName]: _removed, ...rest } = record;
      return Object.keys(rest).length > 0 ? rest : undefined;
    });
    this.#cache.delete(scopeKey);
    const previous = readStyle(before?.[styleName]);
    if (!previous) return { ok: false, code: 'unknown_style', name: styleName };
    this.#logger?.info({ scopeKey, style: styleName, changedBy: userKeyOf(requester) }, 'a chat admin removed a house style');
    return { ok: true, name: styleName, previous, style: undefined };
  }

  /**
   * The job as it will be sent: the member's prompt inside the style's text,
   * the style's options under the member's own. Refuses (`style_unknown`) a
   * style the scope does not have, naming the ones it has.
   */
  async apply(job: { kind?: 'generate' | 'edit' | undefined; prompt: string; options: JobOptions; requester: Requester }, name: string | undefined): Promise<StyledJob> {
    if (name === undefined || name.trim() === '') return { prompt: job.prompt, options: job.options };
    const styleName = name.trim().toLowerCase();
    const styles = await this.list(job.requester);
    const style = styles.find((s) => s.name === styleName);
    if (!style) {
      throw new JobRefusedError(
        'style_unknown',
        // Outside servers (a DM, a user install) there are none to have: said as such, not "ask an admin to define it".
        scopeWordOf(job.requester.platform, job.requester.scopeId) === 'dm'
          ? words('refusal.style_outside_servers', { style: styleName })
          : words('refusal.style_unknown', { style: styleName, count: styles.length, styles: styles.map((s) => s.name).join(', ') }),
        { field: 'style' },
      );
    }
    // An edit makes one image a job (its forms have no count): a style's count is for generations, as a member's default count is.
    const { n: _count, ...forEdits } = style.options;
    const options = job.kind === 'edit' ? forEdits : style.options;
    return { prompt: applyStyleText(style, job.prompt), options: { ...options, ...definedOf(job.options) }, style: style.name };
  }

  /**
   * A refusal for a blocked word the style's text brought into the prompt (the
   * member's own prompt does not hold it): the member cannot rephrase it away,
   * so the refusal names the style. Undefined when the member's prompt holds it.
   */
  blockedWordOfStyle(memberPrompt: string, word: string, style: string): JobRefusedError | undefined {
    if (findBlockedWord(memberPrompt, [word]) !== undefined) return undefined;
    return new JobRefusedError('blocked_word', words('refusal.style_blocked_word', { style, word }), { field: 'style', word });
  }

  /**
   * A refusal by a rule of an option the style set, not the member (a quality, size or count the scope does not
   * allow), where the style changed it: the member did not ask for it, so the refusal names the style and the option,
   * with the rule's code. Undefined when the member chose that option themselves, when the rule is about something
   * else, or when the style's value is what the job would have without it (`unstyled`: the member's options with their
   * own defaults and the scope's filled in, else the spec's default), or the job without it is refused the same way
   * (the same code, the same option): the style did not cause it, another style would not help. `unstyled` is read
   * only for such a refusal; a read that fails otherwise names the style, as the option is the style's.
   */
  async optionOfStyle(error: JobRefusedError, asked: JobOptions, styled: StyledJob, unstyled: () => Promise<JobOptions>, fieldNames: FieldNames = {}): Promise<JobRefusedError | undefined> {
    const field = error.field;
    if (styled.style === undefined || field === undefined || !isStyleOption(field) || asked[field] !== undefined) return undefined;
    const value = styled.options[field];
    if (value === undefined) return undefined;
    // The job without the style: its options, or whether it is refused the same way (false: the read failed otherwise).
    const without = await unstyled().catch((reason: unknown) => reason instanceof JobRefusedError && reason.code === error.code && reason.field === field);
    if (without === true || (without !== false && valueWithout(field, value, without))) return undefined;
    const option = fieldNames[field] ?? field;
    return new JobRefusedError(error.code, words('refusal.style_option_not_allowed', { style: styled.style, option, value: String(value) }), {
      field: 'style',
      allowed: error.allowed,
      limit: error.limit,
      used: error.used,
    });
  }

  /**
   * A refusal by a rule between two options (the spec's: a transparent background needs png or webp, compression a
   * jpeg or webp) where one of them is the style's, not the member's: the member did not type it, so the refusal names
   * the style, its option and value, then what the rule asks, with the rule's code. Undefined when the member typed
   * every option the rule is about, when the style's value is what the job would have without it (`unstyled`: the
   * member's options with their own defaults filled in, else the spec's default — another style would not help), or
   * the refusal is not such a rule's. `unstyled` is read only for such a rule's refusal; a failed read leaves the
   * refusal as it is (undefined), never an error in its place.
   */
  async conflictOfStyle(error: JobRefusedError, asked: JobOptions, styled: StyledJob, unstyled: () => Promise<JobOptions>, fieldNames: FieldNames = {}): Promise<JobRefusedError | undefined> {
    const cause = error.cause;
    if (styled.style === undefined || !(cause instanceof ValidationError)) return undefined;
    // The style's options of the rule the member did not type: none, and the refusal is the member's own.
    const candidates = fieldsBetween(cause.rule).filter(isStyleOption).filter((f) => asked[f] === undefined && styled.options[f] !== undefined);
    const without = candidates.length > 0 ? await unstyled().catch(() => undefined) : undefined;
    // Of those, one whose value is not what the job would have without the style.
    const field = without && candidates.find((f) => !valueWithout(f, styled.options[f], without));
    const detail = field && validationDetailWords(cause, fieldNames);
    if (!field || !detail) return undefined;
    return new JobRefusedError(
      error.code,
      words('refusal.style_option_conflict', { style: styled.style, option: fieldNames[field] ?? field, value: String(styled.options[field]), detail: nested(detail.key, detail.values) }),
      { field: 'style', allowed: error.allowed, cause },
    );
  }

  #read(scopeKey: string): Promise<HouseStyleRecord> {
    return this.#cache.get(scopeKey, () => this.#space.get(stateKeyOf(scopeKey)).then((record) => this.#valid(scopeKey, record)));
  }

  /**
   * A stored style this version cannot read (a damaged record, an unknown option) is left out, never failing the
   * scope's jobs, with a warning once a scope and style while it stays so (again once mended and damaged anew).
   */
  #valid(scopeKey: string, record: HouseStyleRecord | undefined): HouseStyleRecord {
    const out: HouseStyleRecord = {};
    const damaged = new Set<string>();
    for (const [name, value] of Object.entries(record ?? {})) {
      const style = STYLE_NAME_PATTERN.test(name) ? readStyle(value) : undefined;
      if (style) out[name] = style;
      else damaged.add(name);
    }
    const told = this.#told.last(scopeKey);
    for (const name of damaged) if (!told?.has(name)) this.#logger?.warn({ scopeKey, style: name }, 'a stored house style is unreadable; it is left out');
    this.#told.remember(scopeKey, damaged.size > 0 ? damaged : undefined);
    return out;
  }
}

/**
 * The refusal the request validation gives a style's options on their own (any prompt, no option of a member's), by the
 * request schema itself: one of the spec's rules between two options, the only one a style's own schema lets through.
 * Undefined when they go together.
 */
function refusalOfOptions(options: StyleOptions): ValidationError | undefined {
  try {
    parseGenerationRequest({ ...definedOf(options), prompt: PROMPT_PLACEHOLDER });
    return undefined;
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
}

function readStyle(value: unknown): HouseStyle | undefined {
  const parsed = HouseStyleSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
