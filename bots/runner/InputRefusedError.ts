import { PictorError } from 'pictor';
import { sayWords, type Words } from './words.js';
import type { PressRefusalCode } from './PressRefusedError.js';

/**
 * Every code a surface refuses what a member gave it under: Discord's input images (`InputImageError`) and presses of
 * a job's button on either surface (`PressRefusedError`), Slack's flags and files (`SlackInputError`). Each surface's own union is a part of this one (the compiler holds a code a surface
 * adds to being named here too), so a failure's code stays a closed union (`FailureCode`).
 */
export type InputRefusedCode =
  // Discord's input images.
  | 'no_images'
  | 'too_many_images'
  | 'host_not_allowed'
  | 'image_too_large'
  | 'not_an_image'
  | 'download_failed'
  // Presses of a job's button, on either surface.
  | PressRefusalCode
  // Slack's flags, and the files of a mention, a shortcut or a Reroll.
  | 'unknown_flag'
  | 'bad_flag_value'
  | 'missing_flag_value'
  | 'invalid_option'
  | 'flag_not_for_style'
  | 'missing_prompt'
  | 'file_too_large'
  | 'file_not_image'
  | 'file_host_not_allowed'
  | 'file_download_failed'
  // Slack's edit form whose hidden data cannot be read (out of date).
  | 'form_out_of_date';

/**
 * What a member gave a surface that the surface itself refuses, before anything is queued or spent (an input image, a
 * flag): the member's, as a refusal of the runner's is, under the surface's own stable code (`not_an_image`,
 * `unknown_flag`: `InputRefusedCode`). `words` is one sentence for the member, said in their language (`sayWords`);
 * `message` is it in English, for the log. Each surface's error of that kind extends this (Discord's `InputImageError`,
 * Slack's `SlackInputError`), so the runner knows it for the member's: `describeFailure` says it in its own words, not
 * worth retrying as it is, and the one rule of the operator's log (`failureLogLevel`) logs it at `info`, with its code.
 * Switch on `code`, never on the message.
 */
export class InputRefusedError<C extends InputRefusedCode = InputRefusedCode> extends PictorError<C> {
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
