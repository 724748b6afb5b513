import type { LocalizationMap } from 'discord.js';
import { say, type Locale, type MessageKey, type MessageValues } from '../runner/index.js';

/**
 * Discord's locale codes for the languages Pictor speaks, and which of ours each shows (Discord calls Spain's
 * Spanish `es-ES` and Latin America's `es-419`; English, `en-US` and `en-GB`, is the commands' own name and
 * description).
 */
export const DISCORD_LOCALES = { de: 'de', fr: 'fr', 'es-ES': 'es', 'es-419': 'es', 'pt-BR': 'pt-BR', ja: 'ja' } as const satisfies Record<string, Locale>;

/** A command's, option's or choice's words in every language Pictor speaks but English, for `…_localizations`. */
export function localizations(render: (locale: Locale) => string): LocalizationMap {
  return Object.fromEntries(Object.entries(DISCORD_LOCALES).map(([discord, ours]) => [discord, render(ours)]));
}

/** `name_localizations`/`description_localizations` of one catalog message. */
export function localized(key: MessageKey, values?: MessageValues): LocalizationMap {
  return localizations((locale) => say(locale, key, values));
}

/** The English words (a command's own name and description). */
export function english(key: MessageKey, values?: MessageValues): string {
  return say('en', key, values);
}
