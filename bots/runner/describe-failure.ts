import { isPictorError, type LoggerLike, type PictorError, type APIError, type PictorErrorCode, type RateLimitError, type TimeoutError, type ValidationError, type ValidationRule } from 'pictor';
import { errorCodeOf, INTERNAL_ERROR_CODE, isSpendRefusalCode, type LedgerBusyError, type LedgerUnreadableError, type QuotaStoreClosedError, serviceWaitOf, waitToSay } from 'pictor/internal';
import type { StateRecordsUnreadableError } from '../state/FileStateStore.js';
import type { HistoryUnreadableError, JobStoreUnreadableError, OldFileUnreadableError, UpgradeHeldError, UpgradeLostError } from '../state/upgrade.js';
import { isInputRefusedError, type InputRefusedCode, type InputRefusedError } from './InputRefusedError.js';
import { isJobRefusedError } from './JobRefusedError.js';
import { loggableError } from './loggable-error.js';
import type { FieldNames, RefusalCode, Requester } from './types.js';
import { isRangeField, rangeWords } from './range-words.js';
import { anyOf, duration, nested, say, sayWords, words, type MessageValues, type Words } from './words.js';

/** Anything that is neither a core error nor a refusal: a bug of ours, reported without its details (the core's code). */
export { INTERNAL_ERROR_CODE };

/** The spend ledger's failures a job can meet, each with its own sentence (`failure.<code>`) in every language. */
type LedgerFailureCode = LedgerBusyError['code'] | LedgerUnreadableError['code'] | QuotaStoreClosedError['code'];

/**
 * The bots' state's own errors: its records unreadable, and those of a start (an older version's store, the upgrade's
 * lease). Each keeps its code and is said as `internal_error` is.
 */
type StateFailureCode =
  | StateRecordsUnreadableError['code']
  | JobStoreUnreadableError['code']
  | HistoryUnreadableError['code']
  | OldFileUnreadableError['code']
  | UpgradeHeldError['code']
  | UpgradeLostError['code'];

/**
 * A failure's code, by the project's one rule (`errorCodeOf`): a project error keeps its own code, anything else is
 * `internal_error`. A closed union, each member the code of a class of the one error tree (the core's, a refusal's, a
 * surface's refusal of what a member gave it, the spend ledger's, the bots' state's), so a `switch` or a `Record` over it
 * is checked complete; a project error whose code is none of these (one no job meets) is `internal_error` too. A
 * refusal's code is kept for the runner's refusal (`JobRefusedError`) and the spend guard's own (a cap's
 * `BudgetExceededError`); a surface's input code for its refusal of what a member gave it (`InputRefusedError`:
 * Discord's `InputImageError`, Slack's `SlackInputError`), even where it is also a refusal's (`too_many_images`).
 */
export type FailureCode = PictorErrorCode | RefusalCode | InputRefusedCode | LedgerFailureCode | StateFailureCode | typeof INTERNAL_ERROR_CODE;

export interface FailureDescription {
  /** Stable: switch on it. */
  code: FailureCode;
  /** One sentence a person can act on, in the locale asked for; never a stack trace, a key or a service's raw answer. */
  message: string;
  /** The same sentence not yet said: a surface says it in its reader's language (`sayWords`). */
  words: Words;
  /** Trying the same job again later may work (worth a Retry button). */
  retryable: boolean;
}

/**
 * The level of a failure's line in the operator's log; only an `error` line carries the error itself (as the surface
 * may log one), the others its code alone.
 */
export type FailureLogLevel = 'info' | 'warn' | 'error';

/**
 * Where a failure goes in the operator's log, the one rule of every line about a job that failed or that was not
 * taken (written through `logJobFailure`):
 * - a refusal (a limit, a rule, a setting): the member's, `info` with its code — but `queue_full`, the bot at its
 *   capacity (`PICTOR_MAX_QUEUED_JOBS`, `PICTOR_MAX_QUEUED_INPUT_MB`), which is the operator's to see, `warn` with its code;
 * - what a member gave a surface that it refused (an input image, a flag: `InputRefusedError`): the member's too,
 *   `info` with the surface's own code;
 * - a core error (the service's answer, a request that failed on the network): the service's or the network's,
 *   `warn` with its code, which says it all;
 * - anything else — a bug of ours, the spend ledger busy, unreadable (naming the file) or closed, the bots' state
 *   unreadable, another project error: `error` with the error, whose own message is for the operator.
 */
export function failureLogLevel(error: unknown): FailureLogLevel {
  if (isJobRefusedError(error)) return error.code === 'queue_full' ? 'warn' : 'info';
  if (isInputRefusedError(error)) return 'info';
  return isPictorError(error) ? 'warn' : 'error';
}

/** A failed or refused job's line, when a refusal (whatever its level) reads otherwise than a failure in the log. */
export interface FailureLogMessages {
  refused: string;
  failed: string;
}

/**
 * Writes the one line about a job that failed, or that the intake did not take, by the one rule (`failureLogLevel`):
 * `fields` (never the prompt) with the failure's `code` (`describeFailure`'s), and on an `error` line the error too, made loggable (`loggableError`: no secret, no request
 * body, a bounded message). Each failure has one writer, so it is logged once: the runner for what its intake refused
 * or could not start (`JobRunner.request`, `JobRunner.requestForm`: the surfaces that tell the member only render
 * those) and for a job's end; a surface for what it refused itself before asking the runner (its input images) or
 * what failed on its side before the runner had the job. Returns the level it logged at.
 */
export function logJobFailure(logger: LoggerLike, error: unknown, fields: Readonly<Record<string, unknown>>, message: string | FailureLogMessages): FailureLogLevel {
  const level = failureLogLevel(error);
  const { code } = failureOf(error);
  const refused = isJobRefusedError(error) || isInputRefusedError(error);
  logger[level]({ ...fields, code, ...(level === 'error' && { err: loggableError(error) }) }, typeof message === 'string' ? message : refused ? message.refused : message.failed);
  return level;
}

/**
 * The one line about what a member gave a surface that it refused itself, before the runner's intake was asked (an
 * input image, a flag: `InputRefusedError`): by the one rule (`logJobFailure`: the member's, `info`, with the input's
 * own code), naming who asked by the fields every line of the runner's names them by (never the prompt), in the same
 * words whichever surface refused what. Each entry point calls it where it tells the member, so each such refusal is
 * logged once.
 */
export function logInputRefusal(logger: LoggerLike, refusal: InputRefusedError, who: Pick<Requester, 'platform' | 'scopeId' | 'userId'>): void {
  const { platform, scopeId, userId } = who;
  logJobFailure(logger, refusal, { platform, scopeId, userId }, 'what a member gave the bot was refused before the runner was asked');
}

/**
 * Turns whatever a job failed with into a code and a kind sentence in `locale`
 * (English by default: the log's). Messages are the catalog's, never copied
 * from the error, except the core's validation detail for a rule the catalogs have
 * no words for (then the whole sentence is English: `validationWords`). A refusal that tells the person a command to type
 * (`{command} settings --private off`) names `command`, the surface's own as
 * configured (a Slack app's renamed `/imagine`), or `/imagine` when none is given.
 */
export function describeFailure(error: unknown, locale?: string, command?: string): FailureDescription {
  const { code, words: said, retryable } = failureOf(error);
  const what = command !== undefined && said.values?.command !== undefined ? words(said.key, { ...said.values, command }) : said;
  return { code, message: sayWords(locale, what), words: what, retryable };
}

function failureOf(error: unknown): { code: FailureCode; words: Words; retryable: boolean } {
  if (isJobRefusedError(error)) {
    return { code: error.code, words: error.words, retryable: error.code === 'user_cooldown' || error.code === 'user_concurrency' || error.code === 'restarting' || error.code === 'queue_full' };
  }
  // What a member gave a surface that it refused itself (an input image, a flag): the surface's code and its words, for
  // the member to change before it is worth trying again.
  if (isInputRefusedError(error)) return { code: error.code, words: error.words, retryable: false };
  // A core error by its code, as the core tells its own across copies of its module.
  if (isPictorError(error)) return { code: error.code, ...describeCoreError(error) };
  const code = errorCodeOf(error);
  // The spend ledger: held by another process past the wait (the job was not sent; trying again works), a file of it
  // that cannot be read (the operator's to fix), or closed by a stop under way.
  if (isOwn(LEDGER_FAILURES, code)) return { code, words: words(`failure.${code}`), retryable: LEDGER_FAILURES[code].retryable };
  // A cap's refusal as the spend guard throws it (not a JobRefusedError), the bots' state's errors: their code, said as a
  // bug is. Another error with a refusal's code is no refusal of the runner's: internal_error.
  return { code: isSpendRefusalCode(code) || isOwn(STATE_FAILURES, code) ? code : INTERNAL_ERROR_CODE, words: words('failure.internal_error'), retryable: true };
}

const LEDGER_FAILURES: Record<LedgerFailureCode, { retryable: boolean }> = {
  ledger_busy: { retryable: true },
  ledger_unreadable: { retryable: false },
  quota_store_closed: { retryable: true },
};

/** Every code of the bots' state's errors (`StateFailureCode`): the compiler checks none is missing. */
const STATE_FAILURES: Record<StateFailureCode, true> = {
  state_records_unreadable: true,
  job_store_unreadable: true,
  history_store_unreadable: true,
  old_file_unreadable: true,
  state_upgrade_held: true,
  state_upgrade_lost: true,
};

function isOwn<K extends string>(table: Readonly<Record<K, unknown>>, code: string): code is K {
  return Object.hasOwn(table, code);
}

function describeCoreError(error: PictorError): { words: Words; retryable: boolean } {
  switch (error.code) {
    case 'validation_error':
      return { words: validationWords(error as ValidationError), retryable: false };
    case 'moderation_blocked':
    case 'quota_exhausted':
    case 'authentication_failed':
    case 'permission_denied':
    case 'not_found':
    case 'bad_response':
      return { words: words(`failure.${error.code}`), retryable: false };
    case 'api_error':
    case 'connection_failed':
    case 'aborted':
    case 'stream_broken':
      return { words: words(`failure.${error.code}`), retryable: true };
    case 'rate_limited':
      return { words: words('failure.rate_limited', waitValues(serviceWaitOf(error as RateLimitError))), retryable: true };
    case 'bad_request': {
      const param = (error as APIError).param;
      return { words: param ? words('failure.bad_request_option', { option: param }) : words('failure.bad_request'), retryable: false };
    }
    case 'server_error': {
      const apiError = error as APIError;
      const kind = apiError.status === undefined ? 'stream' : apiError.status === 503 ? 'overloaded' : 'internal';
      return { words: words('failure.server_error', { kind, ...waitValues(serviceWaitOf(apiError)) }), retryable: true };
    }
    case 'timeout': {
      const timeout = error as TimeoutError;
      return { words: words('failure.timeout', { kind: timeout.kind === 'idle' ? 'idle' : 'total', howLong: duration(timeout.timeoutMs) }), retryable: true };
    }
  }
}

/** A wait the service named (`wait`, never "0 ms": `waitToSay`), or none (`known`: `no`): "in about 45 s", "in a few minutes". */
function waitValues(waitMs: number | undefined): MessageValues {
  return waitMs === undefined ? { known: 'no', wait: '' } : { known: 'yes', wait: duration(waitToSay(waitMs)) };
}

/**
 * Said with a failed or cancelled job's final message when some of its images
 * had finished before it ended: they are shown (and charged) all the same.
 */
export function describeKeptImages(count: number, locale?: string): string {
  return say(locale, 'job.kept_images', { count });
}

/** "The size option is not valid: size must be one of …": the field, then what it accepts. */
export function describeValidation(error: ValidationDetails, fieldNames: FieldNames = {}, locale?: string): string {
  return sayWords(locale, validationWords(error, fieldNames));
}

/** What a validation error tells: its field (`param`), its English message, what the field accepts and the rule it broke. */
export type ValidationDetails = Pick<ValidationError, 'param' | 'message' | 'allowed'> & { readonly rule?: ValidationRule | undefined };

/**
 * A validation error's words: the field as the surface calls it (`fieldNames`) and, from the rule it broke (the
 * error's `rule`: its kind and values, never its English message), what is wrong in the reader's language — an empty or
 * too long prompt, a value not among the field's, a size not among the spec's, a whole number out of its range (or
 * compression with a format it does not go with: `rangeWords`), a format without transparency for a transparent
 * background. A rule the catalogs have no words for (an input image's content, a field of the wrong type) is said
 * wholly in English, the core's detail within the catalog's English sentence (`failure.validation_english`): one
 * language in one sentence, not a translated opening around English.
 */
export function validationWords(error: ValidationDetails, fieldNames: FieldNames = {}): Words {
  const field = error.param.replace(/\[\d+\].*$/, '');
  const subject = field === 'prompt' ? 'prompt' : field === 'image' ? 'image' : 'option';
  const detail = validationDetailWords(error, fieldNames);
  if (detail) return words('failure.validation', { subject, option: fieldNames[field] ?? field, detail: nested(detail.key, detail.values), allowed: 'none', values: '' });
  // The spec's field names as the surface calls them (Discord's option `format`, Slack's `--format`), wherever they appear.
  const named = (text: string) => text.replace(SPEC_FIELDS, (name) => fieldNames[name] ?? name);
  const allowed = error.allowed && !error.message.includes(error.allowed) ? named(error.allowed) : '';
  const english = { subject, option: fieldNames[field] ?? error.param, detail: named(error.message), allowed: allowed === '' ? 'none' : 'some', values: allowed };
  return words('failure.validation_english', { sentence: say('en', 'failure.validation', english) });
}

/**
 * What is wrong with a validation error's field, in the catalog's words (the detail of `failure.validation`: "--format
 * must be png or webp when --background is transparent (jpeg has no transparency)"); none for a rule they have no words for.
 */
export function validationDetailWords(error: ValidationDetails, fieldNames: FieldNames = {}): Words | undefined {
  const field = error.param.replace(/\[\d+\].*$/, '');
  return error.rule && ruleWords(field, fieldNames[field] ?? field, error.rule, fieldNames);
}

/** What is wrong, in the catalog's words, for the rules a member can break; none for another. */
function ruleWords(field: string, option: string, rule: ValidationRule, fieldNames: FieldNames): Words | undefined {
  switch (rule.kind) {
    case 'empty':
      return field === 'prompt' ? words('failure.validation_prompt_empty') : undefined;
    case 'too_long':
      return field === 'prompt' ? words('failure.validation_prompt_too_long', { max: rule.max }) : undefined;
    case 'one_of':
      return words(field === 'size' ? 'failure.validation_size' : 'failure.validation_one_of', { option, values: anyOf(rule.values) });
    case 'integer_range':
    case 'compression_format': {
      // The bounds the error carries (a range rule's own); compression with a format it does not go with carries none.
      const bounds = rule.kind === 'integer_range' ? ([rule.min, rule.max] as const) : undefined;
      const range = isRangeField(field) ? rangeWords(field, fieldNames, bounds) : bounds ? words('slack.flag.integer_range', { min: bounds[0], max: bounds[1] }) : undefined;
      return range && words('failure.validation_range', { option, range: nested(range.key, range.values) });
    }
    case 'transparent_format':
      return words('failure.validation_transparent_format', { option, background: fieldNames.background ?? 'background', formats: anyOf(rule.formats), given: rule.given });
  }
}

/** The request fields a chat user can set, as whole words in a validation message. */
const SPEC_FIELDS = /\b(?:n|size|quality|background|output_format|output_compression|moderation)\b/g;

