import { SlashCommandBuilder, type LocalizationMap } from 'discord.js';
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

/** What discord.js builds with an English description and its localizations: a command, a subcommand, an option. */
interface Describable<T> {
  setDescription(description: string): T;
  setDescriptionLocalizations(localizedDescriptions: LocalizationMap | null): T;
}

/** `builder` described by one catalog message: in English (Discord's own description) and in every other language. */
export function described<T extends Describable<T>>(builder: T, key: MessageKey, values?: MessageValues): T {
  return builder.setDescription(english(key, values)).setDescriptionLocalizations(localized(key, values));
}

/** The slash commands the catalog names and describes (`discord.command.<command>.name`, `….description`). */
type CatalogCommand = MessageKey extends infer K ? (K extends `discord.command.${infer C}.description` ? C : never) : never;

/** A slash command named and described by the catalog (`discord.command.<command>.name`, `….description`), in English and every other language. */
export function slashCommand(command: CatalogCommand): SlashCommandBuilder {
  const name = `discord.command.${command}.name` as const;
  return described(new SlashCommandBuilder().setName(english(name)).setNameLocalizations(localized(name)), `discord.command.${command}.description`);
}

/** A choice of an option named by one catalog message, in English and in every other language; its value as it is. */
export function namedChoice<T extends string>(key: MessageKey, values: MessageValues, value: T): { name: string; name_localizations: LocalizationMap; value: T } {
  return { name: english(key, values), name_localizations: localized(key, values), value };
}
