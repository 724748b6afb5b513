import { Locale } from 'discord.js';

/**
 * What Discord checks of registered application commands (its docs, "Application Commands": names and
 * localization): a chat-input command's or option's name matches `^[-_\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$`
 * and is lowercase where the letters have a lowercase; a message command's name is 1 to 32 characters; descriptions
 * and choice names are 1 to 100 characters; `*_localizations` use Discord's locale codes (`de`, `es-ES`, `pt-BR`,
 * `ja` … — discord-api-types' `Locale`) and follow the same rules; names, and each locale's localized names, are unique
 * per command type. Returns the problems (Discord answers 400, code 50035, naming them).
 */
export function commandProblems(commands: readonly Record<string, unknown>[]): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  commands.forEach((command, i) => {
    const type = typeof command.type === 'number' ? command.type : 1;
    const chatInput = type === 1;
    const where = `${i}`;
    checkName(problems, `${where}.name`, command.name, chatInput);
    if (chatInput) checkDescription(problems, `${where}.description`, command.description);
    const names: [string, unknown][] = [['', command.name], ...Object.entries(localizations(problems, `${where}.name_localizations`, command.name_localizations))];
    for (const [locale, name] of names) {
      if (locale) checkName(problems, `${where}.name_localizations.${locale}`, name, chatInput);
      const key = `${type}:${locale}:${String(name)}`;
      if (seen.has(key)) problems.push(`${where}.name${locale ? `_localizations.${locale}` : ''}: “${String(name)}” is already the name of ${seen.get(key)}`);
      else seen.set(key, where);
    }
    for (const [locale, text] of Object.entries(localizations(problems, `${where}.description_localizations`, command.description_localizations))) {
      checkDescription(problems, `${where}.description_localizations.${locale}`, text);
    }
    if (chatInput) checkOptions(problems, `${where}.options`, command.options);
  });
  return problems;
}

const LOCALES: ReadonlySet<string> = new Set(Object.values(Locale));
const NAME = /^[-_\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;

function checkName(problems: string[], at: string, name: unknown, chatInput: boolean): void {
  if (typeof name !== 'string') return void problems.push(`${at}: missing`);
  if (!chatInput) {
    if (name.length < 1 || name.length > 32) problems.push(`${at}: must be 1 to 32 characters`);
    return;
  }
  if (!NAME.test(name)) problems.push(`${at}: “${name}” does not match ${NAME.source}`);
  if (name !== name.toLowerCase()) problems.push(`${at}: “${name}” must be lowercase`);
}

function checkDescription(problems: string[], at: string, text: unknown): void {
  if (typeof text !== 'string' || text.length < 1 || text.length > 100) problems.push(`${at}: must be 1 to 100 characters`);
}

function localizations(problems: string[], at: string, map: unknown): Record<string, unknown> {
  if (map === undefined || map === null) return {};
  const entries = map as Record<string, unknown>;
  for (const locale of Object.keys(entries)) if (!LOCALES.has(locale)) problems.push(`${at}.${locale}: not a locale Discord knows`);
  return Object.fromEntries(Object.entries(entries).filter(([locale, value]) => LOCALES.has(locale) && value !== null));
}

function checkOptions(problems: string[], at: string, options: unknown): void {
  if (!Array.isArray(options)) return;
  (options as Record<string, unknown>[]).forEach((option, i) => {
    const where = `${at}.${i}`;
    checkName(problems, `${where}.name`, option.name, true);
    checkDescription(problems, `${where}.description`, option.description);
    for (const [locale, name] of Object.entries(localizations(problems, `${where}.name_localizations`, option.name_localizations))) checkName(problems, `${where}.name_localizations.${locale}`, name, true);
    for (const [locale, text] of Object.entries(localizations(problems, `${where}.description_localizations`, option.description_localizations))) checkDescription(problems, `${where}.description_localizations.${locale}`, text);
    ((option.choices as Record<string, unknown>[] | undefined) ?? []).forEach((choice, j) => {
      checkDescription(problems, `${where}.choices.${j}.name`, choice.name);
      for (const [locale, name] of Object.entries(localizations(problems, `${where}.choices.${j}.name_localizations`, choice.name_localizations))) checkDescription(problems, `${where}.choices.${j}.name_localizations.${locale}`, name);
    });
    checkOptions(problems, `${where}.options`, option.options);
  });
}
