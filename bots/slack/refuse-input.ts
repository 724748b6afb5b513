import type { LoggerLike } from 'pictor';
import { isInputRefusedError, logInputRefusal, sayWords } from '../runner/index.js';

/**
 * What a member gave the bot that it refused itself, before the runner's intake was asked (a flag of `/imagine` or of
 * a mention, the files of a mention or of the "Edit image" shortcut, an edit's saved files on its Reroll: a
 * `SlackInputError`; a press of a job's button: the runner's `PressRefusedError`): logged once
 * by the runner's one line (`logInputRefusal`), then told to the member in their language through `tell` — the entry
 * point's private answer (`/imagine`'s acknowledgement, a response URL, an ephemeral message). Anything else that
 * `error` is goes on as it came, neither logged nor told.
 */
export async function refuseInput(logger: LoggerLike, actor: { teamId: string; userId: string; locale: string | undefined }, error: unknown, tell: (text: string) => Promise<unknown>): Promise<void> {
  if (!isInputRefusedError(error)) throw error;
  logInputRefusal(logger, error, { platform: 'slack', scopeId: actor.teamId, userId: actor.userId });
  await tell(sayWords(actor.locale, error.words));
}
