import { InputRefusedError, type Words } from '../runner/index.js';

/** Stable codes of what a Slack user gave or pressed that the bot refuses itself. Switch on `code`, never on the message. */
export type SlackInputErrorCode =
  | 'unknown_flag'
  | 'bad_flag_value'
  | 'missing_flag_value'
  | 'invalid_option'
  // A flag a house style cannot keep (`--private`, `--compression`, …) in an admin's `admin style NAME TEXT`.
  | 'flag_not_for_style'
  | 'missing_prompt'
  | 'no_images'
  | 'too_many_images'
  | 'file_too_large'
  | 'file_not_image'
  | 'file_host_not_allowed'
  | 'file_download_failed'
  // The edit form submitted with hidden data this version cannot read (opened by another version): out of date.
  | 'form_out_of_date';

/**
 * Input the bot refuses before anything is queued or spent (the member's: `InputRefusedError`). `words` is one
 * sentence (Slack mrkdwn) for the person who asked — what is wrong and what is
 * allowed — said in their language; `message` is it in English, for the log.
 * It never holds a token or a URL's query.
 */
export class SlackInputError extends InputRefusedError<SlackInputErrorCode> {
  /** The flag at fault (`--size`), when there is one. */
  readonly flag: string | undefined;
  /** What the flag or input accepts, in words. */
  readonly allowed: string | undefined;

  constructor(code: SlackInputErrorCode, what: Words, details: { flag?: string; allowed?: string; cause?: unknown } = {}) {
    super(code, what, details.cause === undefined ? undefined : { cause: details.cause });
    this.flag = details.flag;
    this.allowed = details.allowed;
  }
}

/**
 * Whether `value` is a refusal the Slack bot made. By its class only: each is made and caught inside the Slack bot, whose
 * modules are loaded once (the built bot imports its own files; the tests, the sources), so no copy of this class
 * from elsewhere can reach a caller — and an error merely named so has no words to show the member.
 */
export function isSlackInputError(value: unknown): value is SlackInputError {
  return value instanceof SlackInputError;
}
