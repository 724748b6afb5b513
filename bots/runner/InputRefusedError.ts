import { PictorError } from 'pictor';
import { sayWords, type Words } from './words.js';

/**
 * What a member gave a surface that the surface itself refuses, before anything is queued or spent (an input image, a
 * flag): the member's, as a refusal of the runner's is, under the surface's own stable code (`not_an_image`,
 * `unknown_flag`), which the runner never names. `words` is one sentence for the member, said in their language
 * (`sayWords`); `message` is it in English, for the log. Each surface's error of that kind extends this (Discord's
 * `InputImageError`, Slack's `SlackInputError`), so the one rule of the operator's log (`failureLogLevel`) knows it
 * for the member's: `info`, with its code. Switch on `code`, never on the message.
 */
export class InputRefusedError<C extends string = string> extends PictorError<C> {
  readonly words: Words;

  constructor(code: C, what: Words, options?: { cause?: unknown }) {
    super(code, sayWords('en', what), options);
    this.words = what;
  }
}

/** Whether `value` is a surface's refusal of what a member gave it (`InputRefusedError`). */
export function isInputRefusedError(value: unknown): value is InputRefusedError {
  return value instanceof InputRefusedError;
}
