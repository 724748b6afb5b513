import { ApplicationCommandType, ContextMenuCommandBuilder, SlashCommandBuilder, type LocalizationMap } from 'discord.js';
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

/** What discord.js builds with an English name and its localizations: a slash command, a message menu. */
interface Nameable<T> {
  setName(name: string): T;
  setNameLocalizations(localizedNames: LocalizationMap | null): T;
}

/** The commands the catalog names (`discord.command.<command>.name`). */
type CatalogName = MessageKey extends infer K ? (K extends `discord.command.${infer C}.name` ? C : never) : never;

/** The slash commands the catalog names and describes (`discord.command.<command>.name`, `….description`). */
type CatalogCommand = MessageKey extends infer K ? (K extends `discord.command.${infer C}.description` ? C : never) : never;

/** The catalog's name of a command (`discord.command.<command>.name`): the one list of the commands' localized names. */
function nameKey(command: CatalogName) {
  return `discord.command.${command}.name` as const;
}

/** `builder` named by the catalog (`nameKey`): in English (Discord's own name) and in every other language. */
function named<T extends Nameable<T>>(builder: T, command: CatalogName): T {
  return builder.setName(english(nameKey(command))).setNameLocalizations(localized(nameKey(command)));
}

/**
 * A Discord command, and what follows it if anything (`/imagine-admin set`), named as the reader's Discord shows it in their
 * language (`/bild-admin set`): by the catalog's name (`nameKey`), the one it is registered with and `COMMAND_NAMES`
 * says in the runner's sentences.
 */
export function commandAs(locale: string | undefined, command: CatalogName, rest?: string): string {
  return `\`/${[say(locale, nameKey(command)), rest].filter(Boolean).join(' ')}\``;
}

/** A slash command named and described by the catalog (`discord.command.<command>.name`, `….description`), in English and every other language. */
export function slashCommand(command: CatalogCommand): SlashCommandBuilder {
  return described(named(new SlashCommandBuilder(), command), `discord.command.${command}.description`);
}

/** A message menu (a message's Apps menu; Discord gives it no description) named by the catalog (`discord.command.<command>.name`), in English and every other language. */
export function messageMenu(command: Exclude<CatalogName, CatalogCommand>): ContextMenuCommandBuilder {
  return named(new ContextMenuCommandBuilder(), command).setType(ApplicationCommandType.Message);
}

/** A choice of an option named by one catalog message, in English and in every other language; its value as it is. */
export function namedChoice<T extends string>(key: MessageKey, values: MessageValues, value: T): { name: string; name_localizations: LocalizationMap; value: T } {
  return { name: english(key, values), name_localizations: localized(key, values), value };
}

/**
 * The commands a sentence tells a member to use (`/{imagine}`, `/{edit}`, `/{admin}`), named as their Discord shows them
 * in the language the sentence is said in: the runner's, which says them in its own sentences too (the admin command in
 * a refusal, the settings and the usage); the names `slashCommand` registers the commands with.
 */
export { COMMAND_NAMES } from '../runner/index.js';

/**
 * A choice named by what members type and the bot's answers name — a budget (`user-daily`), a setting (`max-images`):
 * no `name_localizations`, so Discord shows that name in every language.
 */
export function typedChoice<T extends string>(value: T): { name: T; value: T } {
  return { name: value, value };
}
