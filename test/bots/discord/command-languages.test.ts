import { describe, expect, it } from 'vitest';
import { commandDefinitions } from '../../../bots/discord/index.js';
import { DISCORD_LOCALES } from '../../../bots/discord/command-words.js';
import { readFileSync } from 'node:fs';
import { LOCALES, say } from '../../../bots/runner/index.js';

type Choice = { name: string; name_localizations?: Record<string, string> | null; value: unknown };
type Option = { name: string; description: string; name_localizations?: Record<string, string> | null; description_localizations?: Record<string, string> | null; choices?: Choice[]; options?: Option[] };
type Command = { name: string; type?: number; description?: string; name_localizations?: Record<string, string> | null; description_localizations?: Record<string, string> | null; options?: Option[] };

const commands = commandDefinitions(undefined, { userInstalls: true }) as unknown as Command[];
const discordLocales = Object.keys(DISCORD_LOCALES).sort();

/** Every option of a command, its subcommands' too, each with where it is (`imagine-admin set setting`). */
function optionsOf(command: Command): { at: string; option: Option }[] {
  const walk = (at: string, options: Option[] | undefined): { at: string; option: Option }[] =>
    (options ?? []).flatMap((option) => [{ at: `${at} ${option.name}`, option }, ...walk(`${at} ${option.name}`, option.options)]);
  return walk(command.name, command.options);
}

/** The languages a localization map lacks (absent, empty), of Discord's codes for the languages the catalog has. */
function lacking(map: Record<string, string> | null | undefined): string[] {
  return discordLocales.filter((locale) => !map?.[locale]);
}

/** The languages whose words are the English ones: a message copied, never translated. */
function untranslated(map: Record<string, string> | null | undefined, english: string): string[] {
  return discordLocales.filter((locale) => map?.[locale] === english);
}

describe('the commands in every language the catalog has', () => {
  it('registers every language of the catalog but English (Discord’s own words) under one of Discord’s locale codes', () => {
    expect(new Set(Object.values(DISCORD_LOCALES))).toEqual(new Set(LOCALES.filter((locale) => locale !== 'en')));
  });

  it('lists every command’s name in each language in the bot’s README, as the catalog names it', () => {
    const languages = ['en', 'de', 'fr', 'es', 'pt-BR', 'ja'] as const;
    const rows = (['imagine', 'edit', 'usage', 'history', 'settings', 'admin', 'edit_image'] as const).map(
      (command) => `| ${languages.map((locale) => (command === 'edit_image' ? say(locale, `discord.command.${command}.name`) : `\`/${say(locale, `discord.command.${command}.name`)}\``)).join(' | ')} |`,
    );
    const readme = readFileSync(new URL('../../../bots/discord/README.md', import.meta.url), 'utf8');
    expect(readme).toContain(rows.join('\n'));
    expect(new Set(LOCALES)).toEqual(new Set(languages));
  });

  it('writes the slash command names of every Latin-script language without accents, as members type them on any keyboard', () => {
    // The languages whose names are written in Latin letters (Japanese's are not): their Discord locale codes.
    const latin = Object.entries(DISCORD_LOCALES).filter(([, locale]) => /\p{Script=Latin}/u.test(say(locale, 'discord.command.imagine.name')));
    expect(latin.map(([discord]) => discord).sort()).toEqual(['de', 'es-419', 'es-ES', 'fr', 'pt-BR']);
    // A message menu's name is picked from the Apps menu, never typed.
    for (const command of commands.filter((c) => (c.type ?? 1) === 1)) {
      expect(command.name, 'English').toMatch(/^[a-z0-9_-]+$/);
      for (const [discord] of latin) expect(command.name_localizations?.[discord], `${command.name} in ${discord}`).toMatch(/^[a-z0-9_-]+$/);
    }
  });

  it.each(commands.map((c) => [c.name, c] as const))('names %s in each of them, and describes it, in words of that language', (_name, command) => {
    expect(lacking(command.name_localizations), 'name').toEqual([]);
    expect(untranslated(command.name_localizations, command.name), 'name').toEqual([]);
    // A message menu has no description (Discord takes none).
    if ((command.type ?? 1) !== 1) return;
    expect(lacking(command.description_localizations), 'description').toEqual([]);
    expect(untranslated(command.description_localizations, command.description!), 'description').toEqual([]);
  });

  it.each(commands.filter((c) => c.options?.length).map((c) => [c.name, c] as const))(
    'describes every option and subcommand of %s in each of them, and names every choice named in words in each; option names and typed choices stay English',
    (_name, command) => {
      for (const { at, option } of optionsOf(command)) {
        expect(lacking(option.description_localizations), `${at}: description`).toEqual([]);
        expect(untranslated(option.description_localizations, option.description), `${at}: description`).toEqual([]);
        // What a member types, and what the bot's answers name (`/bild style:`), is the same in every language.
        expect(option.name_localizations ?? undefined, `${at}: name`).toBeUndefined();
        // A choice named in words is named in every language; one named by what members type (`user-daily`,
        // `max-images`) has no map: Discord shows its name, the value, in every language.
        for (const choice of option.choices ?? []) {
          if (choice.name_localizations && Object.keys(choice.name_localizations).length > 0) expect(lacking(choice.name_localizations), `${at}: choice ${String(choice.value)}`).toEqual([]);
          else expect(choice.name, `${at}: choice ${String(choice.value)} is named in words but not in every language`).toBe(choice.value);
        }
      }
    },
  );
});
