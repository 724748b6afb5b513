import { closestWord } from 'pictor/internal';

/** The words after `admin` that make a text an admin command: `/imagine admin settings`, `admin set …`, `admin repair`, `admin audit …`, `admin budget …`, `admin style …`. */
export const ADMIN_SUBCOMMANDS = ['settings', 'set', 'repair', 'audit', 'budget', 'style'] as const;
export type AdminSubcommand = (typeof ADMIN_SUBCOMMANDS)[number];

/**
 * The sub-command that the second word of an `admin …` text is a near miss of (`budegt`, `budgets`, `setting`, `sets`,
 * `styel`); undefined for a sub-command typed right, another word (`admin panel`), or a text not starting with `admin`.
 * Each command's parser decides whether what follows fits it (`admin sea of icons` stays a prompt).
 */
export function adminNearMissOf(words: readonly string[]): AdminSubcommand | undefined {
  if (words[0]?.toLowerCase() !== 'admin' || words[1] === undefined) return undefined;
  const typed = words[1].toLowerCase();
  if ((ADMIN_SUBCOMMANDS as readonly string[]).includes(typed)) return undefined;
  return closestWord(typed, ADMIN_SUBCOMMANDS) as AdminSubcommand | undefined;
}
