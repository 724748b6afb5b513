import type { LoggerLike } from 'pictor';
import { logJobFailure } from '../runner/index.js';
import type { SlackInputError } from './SlackInputError.js';

/**
 * The one line about what a member gave the bot that it refused itself, before the runner's intake was asked (a flag
 * of `/imagine` or of a mention, the files of a mention or of the "Edit image" shortcut, an edit's saved files on its
 * Reroll): by the runner's one rule (`logJobFailure`: the member's, `info`, with the input's own code), naming who
 * asked by the fields every line of the runner's names them by (never the prompt). Each entry point calls it where it
 * tells the member, so each such refusal is logged once.
 */
export function logInputRefusal(logger: LoggerLike, actor: { teamId: string; userId: string }, refusal: SlackInputError): void {
  logJobFailure(logger, refusal, { platform: 'slack', scopeId: actor.teamId, userId: actor.userId }, 'what a member gave the bot was refused before the runner was asked');
}
