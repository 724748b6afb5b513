import { IntlMessageFormat } from 'intl-messageformat';
import { describeDurationParts, describeUtcTime, durationParts, resetDays, saysDate, usdDigits, waitUntil, type DurationPart } from 'pictor/internal';
import { de } from './locales/de.js';
import { en } from './locales/en.js';
import { es } from './locales/es.js';
import { fr } from './locales/fr.js';
import { ja } from './locales/ja.js';
import { ptBR } from './locales/pt-BR.js';

/**
 * Every sentence a member sees, in their language. The catalogs (`locales/`,
 * one file per language, English the source) hold ICU messages; `say` formats
 * one with the member's locale. Rich values — money, waits, times, lists — are
 * made with the helpers below and formatted through `Intl` in that locale. See
 * locales/README.md for where a new message goes.
 */

/** Every message's key: the English catalog's. */
export type MessageKey = keyof typeof en;

/** A language's catalog: every key of the English one, no more (the type checker and the catalog test both say so). */
export type Catalog = { readonly [K in MessageKey]: string };

export const CATALOGS = { en, de, fr, es, 'pt-BR': ptBR, ja } as const satisfies Record<string, Catalog>;

/** The languages Pictor speaks. */
export type Locale = keyof typeof CATALOGS;
export const LOCALES = Object.keys(CATALOGS) as Locale[];
export const DEFAULT_LOCALE: Locale = 'en';

/**
 * The language we speak to someone whose platform says `tag` (Discord's `en-US`, `es-ES`, `pt-BR`, `ja`; Slack's
 * `de-DE`, `es-LA`, `ja-JP` …): the same language, any region (Portuguese is Brazilian), else English.
 */
export function localeOf(tag: string | undefined | null): Locale {
  if (!tag) return DEFAULT_LOCALE;
  const language = tag.toLowerCase().split(/[-_]/)[0];
  switch (language) {
    case 'de':
    case 'fr':
    case 'es':
    case 'ja':
      return language;
    case 'pt':
      return 'pt-BR';
    default:
      return DEFAULT_LOCALE;
  }
}

const FORMAT = Symbol('format');

/** A value formatted for the locale it is said in (money, a wait, a time, a list, another message). */
export interface Formatted {
  readonly [FORMAT]: (locale: Locale) => string;
}

/** What a placeholder takes: text and numbers as they are (numbers through `Intl` and ICU plurals), or a `Formatted`. */
export type MessageValue = string | number | Formatted;
export type MessageValues = Readonly<Record<string, MessageValue>>;

/** A message not yet said: its key and values. Refusals and failures carry one, so each surface says it in its reader's language. */
export interface Words {
  readonly key: MessageKey;
  readonly values?: MessageValues | undefined;
}

export function words(key: MessageKey, values?: MessageValues): Words {
  return values === undefined ? { key } : { key, values };
}

/** How a surface marks text up: `<b>…</b>` in a message (Discord `**…**`, Slack `*…*`); plain by default. */
export interface Markup {
  bold(text: string): string;
}

const PLAIN: Markup = { bold: (text) => text };

const formatted = (format: (locale: Locale) => string): Formatted => ({ [FORMAT]: format });

/** US dollars as the locale writes them ("$0.224", "0,224 $", "US$ 0,224"), with as many decimals as `formatUsd`. */
export function usd(amount: number): Formatted {
  return formatted((locale) => usdIn(locale, amount));
}

/** At most so many US dollars ("≤ $0.224"): what a job may still be charged, not settled yet. */
export function usdAtMost(amount: number): Formatted {
  return formatted((locale) => `≤ ${usdIn(locale, amount)}`);
}

function usdIn(locale: Locale, amount: number): string {
  const digits = usdDigits(amount);
  return new Intl.NumberFormat(locale, { style: 'currency', currency: 'USD', minimumFractionDigits: digits, maximumFractionDigits: digits }).format(amount);
}

/** A wait (or a limit, such as a timeout), rounded up: never too early ("250 ms", "45 s", "3 h 12 min"; "3 Std. 12 Min."). */
export function duration(ms: number): Formatted {
  return formatted((locale) => durationIn(locale, durationParts(ms, 'wait')));
}

/** The wait until `at`, rounded up and never nothing (the core's `waitUntil`): "try again in 250 ms", never "in 0 ms". */
export function durationUntil(at: number, now: number): Formatted {
  return duration(waitUntil(at, now));
}

/** A moment in UTC: the time ("00:00 UTC"), with the date when the core says so (`saysDate`: more than a day after `now`). */
export function utcTime(at: number, now?: number): Formatted {
  return formatted((locale) => {
    if (locale === 'en') return describeUtcTime(at, now);
    const shown = new Intl.DateTimeFormat(locale, { timeZone: 'UTC', ...(saysDate(at, now) ? { dateStyle: 'medium' } : {}), timeStyle: 'short' }).format(at);
    return `${shown} UTC`;
  });
}

/**
 * When a cap resets: "00:00 UTC (in 3 h 12 min)", or for a month "2026-12-01 00:00 UTC (in 9 days)". Whether it is
 * said in days or as a wait is the core's rule (`resetDays`, as `describeReset` says it in English); this only says it
 * in the reader's language.
 */
export function resetTime(at: number, now: number): Formatted {
  const days = resetDays(at, now);
  return formatted((locale) =>
    say(locale, 'time.resets', { at: utcTime(at, now), wait: days === undefined ? durationUntil(at, now) : formatted((l) => say(l, 'time.days', { days })) }),
  );
}

/** A day and time in UTC, short ("2026-11-26" in English, the locale's date elsewhere). */
export function utcDate(at: number): Formatted {
  return formatted((locale) => (locale === 'en' ? new Date(at).toISOString().slice(0, 10) : new Intl.DateTimeFormat(locale, { timeZone: 'UTC', dateStyle: 'medium' }).format(at)));
}

/** Bytes as whole megabytes (at least 1 MB for any bytes at all). */
export function megabytes(bytes: number): Formatted {
  const mb = bytes > 0 ? Math.max(1, Math.round(bytes / (1024 * 1024))) : 0;
  return formatted((locale) => new Intl.NumberFormat(locale, { style: 'unit', unit: 'megabyte', unitDisplay: 'short' }).format(mb));
}

/** A file's size: "850 KB", "1.5 MB" (the locale's digits and units). */
export function fileSize(bytes: number): Formatted {
  return formatted((locale) => {
    const mb = bytes >= 1024 * 1024;
    const value = mb ? Number((bytes / 1024 / 1024).toFixed(1)) : Math.max(1, Math.round(bytes / 1024));
    if (locale === 'en') return `${value} ${mb ? 'MB' : 'KB'}`;
    return new Intl.NumberFormat(locale, { style: 'unit', unit: mb ? 'megabyte' : 'kilobyte', unitDisplay: 'short', maximumFractionDigits: 1 }).format(value);
  });
}

/** How long a job took: "250 ms", "4.2 s", "2 min 5 s", "1 h 2 min" (the locale's digits and units). */
export function elapsed(ms: number): Formatted {
  return formatted((locale) => durationIn(locale, durationParts(ms, 'took')));
}

/** A duration's parts (the core's one rule, `durationParts`) in the locale's digits and units; English as the core says it. */
function durationIn(locale: Locale, parts: readonly DurationPart[]): string {
  if (locale === 'en') return describeDurationParts(parts);
  return parts
    .map((part) => new Intl.NumberFormat(locale, { style: 'unit', unit: part.unit, unitDisplay: 'short', minimumFractionDigits: part.digits, maximumFractionDigits: part.digits }).format(part.value))
    .join(' ');
}

/** "low, medium, or high" in the locale's words ("low, medium oder high"). */
export function anyOf(items: readonly string[]): Formatted {
  return formatted((locale) => new Intl.ListFormat(locale, { type: 'disjunction' }).format(items));
}

/** Items (mentions, values) listed as the locale lists them: "a, b, c"; "a、b、c". */
export function listOf(items: readonly string[]): Formatted {
  return formatted((locale) => items.join(locale === 'ja' ? '、' : ', '));
}

/** Another message, said in the same locale (a part shared by several messages). */
export function nested(key: MessageKey, values?: MessageValues, markup?: Markup): Formatted {
  return formatted((locale) => say(locale, key, values, markup));
}

const compiled = new Map<string, IntlMessageFormat>();

function compile(locale: Locale, key: MessageKey): IntlMessageFormat {
  const id = `${locale}\u0000${key}`;
  let format = compiled.get(id);
  if (!format) {
    format = new IntlMessageFormat(CATALOGS[locale][key], locale);
    compiled.set(id, format);
  }
  return format;
}

/**
 * The message `key` in `locale` (a tag such as `de-DE`, or a `Locale`), its placeholders filled:
 * `say('de', 'refusal.too_many_images', { limit: 2 })`. `<b>…</b>` in a message becomes the surface's bold.
 */
export function say(locale: string | undefined, key: MessageKey, values: MessageValues = {}, markup: Markup = PLAIN): string {
  const lang = (LOCALES as string[]).includes(locale ?? '') ? (locale as Locale) : localeOf(locale);
  const plain: Record<string, string | number | ((chunks: unknown[]) => string)> = { b: (chunks) => markup.bold(chunks.join('')) };
  for (const [name, value] of Object.entries(values)) plain[name] = typeof value === 'object' ? value[FORMAT](lang) : value;
  return String(compile(lang, key).format(plain));
}

/** `Words` said in `locale`. */
export function sayWords(locale: string | undefined, what: Words, markup?: Markup): string {
  return say(locale, what.key, what.values, markup);
}
