import { CATALOGS, duration, LOCALES, say, sayWords, words, type MessageKey } from '../../../bots/runner/index.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { describeFailure, describeKeptImages, describeValidation, JobRefusedError, refusalFromPolicy } from '../../../bots/runner/index.js';
import { failureLogLevel, logInputRefusal, logJobFailure } from '../../../bots/runner/describe-failure.js';
import { failureWithSecrets, SECRETS_IN_FAILURE } from '../../helpers/intake-failures.js';
import { RecordingLogger } from '../discord/harness.js';
import { StateRecordsUnreadableError } from '../../../bots/state/FileStateStore.js';
import { AbortedError, ConnectionError, ERROR_CODES, parseGenerationRequest, PictorError, StreamBrokenError, TimeoutError, ValidationError } from '../../../src/index.js';
import { LedgerBusyError, LedgerUnreadableError, QuotaStoreClosedError, errorCodeOf, makeAPIError } from '../../../src/internal.js';
import { UpgradeHeldError } from '../../../bots/state/upgrade.js';
import { FileLockBusyError } from '../../../src/spend/file-lock.js';
import { BREAKER_CODE, USER_PACE_CODES } from '../../../src/spend/types.js';
import { BUDGETS } from '../../../src/spend/rules.js';
import { RUNNER_REFUSAL_CODES } from '../../../bots/runner/types.js';
import { InputImageError, INPUT_REFUSAL_CODES, type InputRefusalCode } from '../../../bots/discord/download-images.js';
import { EDIT_IMAGE_OPTION_NAMES } from '../../../bots/discord/command-choices.js';
import { PressRefusedError, PRESS_REFUSAL_CODES, type PressRefusalCode } from '../../../bots/runner/PressRefusedError.js';
import type { InputRefusedCode } from '../../../bots/runner/InputRefusedError.js';
import { SlackInputError, type SlackInputErrorCode } from '../../../bots/slack/SlackInputError.js';

/** Every code of Slack's input errors: the compiler checks none is missing. */
const SLACK_INPUT_ERROR_CODES: Record<SlackInputErrorCode, true> = {
  unknown_flag: true,
  bad_flag_value: true,
  missing_flag_value: true,
  invalid_option: true,
  flag_not_for_style: true,
  missing_prompt: true,
  no_images: true,
  too_many_images: true,
  file_too_large: true,
  file_not_image: true,
  file_host_not_allowed: true,
  file_download_failed: true,
  form_out_of_date: true,
};

// The runner's input codes are exactly the surfaces' (checked by the type check): a code a surface drops leaves it too.
expectTypeOf<InputRefusedCode>().toEqualTypeOf<InputRefusalCode | PressRefusalCode | SlackInputErrorCode>();

/** The text of every source file of the core and the bots, where the one error tree's classes are. */
function projectErrorClasses(): string[] {
  const root = new URL('../../../', import.meta.url).pathname;
  const files = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : []));
  return ['src', 'bots'].flatMap(files).map((file) => readFileSync(join(root, file), 'utf8'));
}

function validationErrorOf(input: unknown): ValidationError {
  try {
    parseGenerationRequest(input);
  } catch (error) {
    return error as ValidationError;
  }
  throw new Error('expected the input to be invalid');
}

describe('describeFailure', () => {
  it('names the field and what it accepts for invalid input', () => {
    const failure = describeFailure(validationErrorOf({ prompt: 'x', n: 11 }));
    expect(failure).toMatchObject({ code: 'validation_error', message: 'The n option is not valid: n must be an integer from 1 to 10.', retryable: false });
  });

  it('says what quality accepts', () => {
    expect(describeFailure(validationErrorOf({ prompt: 'x', quality: 'ultra' })).message).toBe(
      'The quality option is not valid: quality must be low, medium, high, or auto.',
    );
  });

  it('names a field as the surface calls it, wherever the sentence names it', () => {
    const error = validationErrorOf({ prompt: 'x', background: 'transparent', output_format: 'jpeg' });
    expect(describeValidation(error, { output_format: '--format', background: '--background' })).toBe(
      'The --format option is not valid: --format must be png or webp when --background is transparent (jpeg has no transparency).',
    );
    expect(describeValidation(validationErrorOf({ prompt: 'x', n: 0 }), { n: 'count' })).toBe('The count option is not valid: count must be an integer from 1 to 10.');
  });

  it('answers a range field wholly in the member’s language: --compression with a format it does not go with, a count out of range', () => {
    const flags = { output_compression: '--compression', output_format: '--format', n: '--n' };
    const compressionWithPng = validationErrorOf({ prompt: 'x', output_compression: 80, output_format: 'png' });
    const german = describeValidation(compressionWithPng, flags, 'de');
    expect(german).toBe('Die Option --compression ist ungültig: --compression nimmt eine ganze Zahl von 0 bis 100, nur mit --format jpeg oder webp.');
    expect(german).not.toMatch(/integer|only|applies|output_|must/);
    expect(describeValidation(compressionWithPng, flags)).toBe('The --compression option is not valid: --compression must be an integer from 0 to 100, only with --format jpeg or webp.');
    expect(describeValidation(validationErrorOf({ prompt: 'x', n: 11 }), { n: 'count' }, 'de')).toBe('Die Option count ist ungültig: count nimmt eine ganze Zahl von 1 bis 10.');
  });

  it('says the bounds the error carries, not a table of its own: a count refused out of a narrower range', () => {
    const narrower = new ValidationError('n', 'n must be an integer from 1 to 4', { rule: { kind: 'integer_range', min: 1, max: 4, fields: ['n'] } });
    expect(describeValidation(narrower, { n: '--n' })).toBe('The --n option is not valid: --n must be an integer from 1 to 4.');
    expect(describeValidation(narrower, { n: '--n' }, 'de')).toBe('Die Option --n ist ungültig: --n nimmt eine ganze Zahl von 1 bis 4.');
  });

  it('says a range in Japanese without a space before its ending', () => {
    expect(describeValidation(validationErrorOf({ prompt: 'x', n: 11 }), { n: '--n' }, 'ja')).toBe('オプション --n が無効です: --n に指定できるのは 1 から 10 までの整数です。');
  });

  it('says an empty prompt, a too long prompt and a size the spec does not have in its own words', () => {
    expect(describeFailure(validationErrorOf({ prompt: '   ' })).message).toBe('The prompt is not valid: it is empty; write what the image should show.');
    expect(describeFailure(validationErrorOf({ prompt: 'ü'.repeat(32_001) })).message).toBe('The prompt is not valid: it is longer than 32,000 characters; shorten it.');
    expect(describeValidation(validationErrorOf({ prompt: 'x', size: '999' }), { size: '--size' })).toBe(
      'The --size option is not valid: --size must be 1024x1024, 1024x1536, or 1536x1024 (width x height, in pixels).',
    );
  });

  it('says a rule it has no words for wholly in English, in every language: never a translated opening around English', () => {
    const notText = validationErrorOf({ prompt: 42 });
    const english = 'The prompt is not valid: prompt must be text (allowed: text of 1 to 32000 characters).';
    for (const locale of LOCALES) expect(describeFailure(notText, locale).message).toBe(english);
  });

  it('has the words of every rule it names in every language, each its own', () => {
    const keys: MessageKey[] = ['failure.validation_prompt_empty', 'failure.validation_prompt_too_long', 'failure.validation_one_of', 'failure.validation_size', 'failure.validation_transparent_format'];
    for (const locale of LOCALES.filter((l) => l !== 'en')) for (const key of keys) expect(CATALOGS[locale][key], `${locale} ${key}`).not.toBe(CATALOGS.en[key]);
  });

  describe('says every rule a member can break in the member’s language, its values read from the error (German)', () => {
    const flags = { output_format: '--format', background: '--background', size: '--size', n: '--n' };
    const german = (input: unknown) => describeValidation(validationErrorOf(input), flags, 'de');

    it('an empty prompt', () => {
      expect(describeFailure(validationErrorOf({ prompt: '  ' }), 'de').message).toBe('Der Prompt ist ungültig: er ist leer; schreib, was das Bild zeigen soll.');
    });

    it('a prompt longer than the spec’s 32,000 characters', () => {
      expect(describeFailure(validationErrorOf({ prompt: 'ü'.repeat(32_001) }), 'de').message).toBe('Der Prompt ist ungültig: er ist länger als 32.000 Zeichen; kürze ihn.');
    });

    it('a transparent background with a format without transparency', () => {
      expect(german({ prompt: 'x', background: 'transparent', output_format: 'jpeg' })).toBe(
        'Die Option --format ist ungültig: --format muss bei --background transparent png oder webp sein (jpeg hat keine Transparenz).',
      );
    });

    it('a value the field does not take', () => {
      expect(german({ prompt: 'x', quality: 'ultra' })).toBe('Die Option quality ist ungültig: quality nimmt low, medium, high oder auto.');
    });

    it('a size the spec does not have', () => {
      expect(german({ prompt: 'x', size: '999' })).toBe('Die Option --size ist ungültig: --size nimmt 1024x1024, 1024x1536 oder 1536x1024 (Breite x Höhe in Pixeln).');
    });

    it('a whole number out of its range, for a field without words of its own', () => {
      expect(describeValidation(validationErrorOf({ prompt: 'x', partial_images: 9 }), {}, 'de')).toBe('Die Option partial_images ist ungültig: partial_images nimmt eine ganze Zahl von 0 bis 3.');
    });

    it('none of them in English', () => {
      for (const input of [{ prompt: '' }, { prompt: 'ü'.repeat(32_001) }, { prompt: 'x', quality: 'ultra' }, { prompt: 'x', size: '999' }, { prompt: 'x', background: 'transparent', output_format: 'jpeg' }]) {
        expect(german(input)).not.toMatch(/must|allowed|characters|transparency|text of/);
      }
    });
  });

  it('maps the service’s error answers to stable codes and sentences that never quote the service', () => {
    const quota = makeAPIError({ status: 429, body: { error: { message: 'You exceeded your quota, key sk-abc', type: 'insufficient_quota', code: 'insufficient_quota' } } });
    expect(describeFailure(quota)).toMatchObject({
      code: 'quota_exhausted',
      message: 'The image service account is out of credit; tell the bot’s operator.',
      retryable: false,
    });
    const moderation = makeAPIError({ status: 400, body: { error: { message: 'blocked', type: 'image_generation_user_error', code: 'moderation_blocked' } } });
    expect(describeFailure(moderation)).toMatchObject({ code: 'moderation_blocked', retryable: false });
    const badField = makeAPIError({ status: 400, body: { error: { message: 'Invalid value', type: 'invalid_request_error', param: 'size', code: null } } });
    expect(describeFailure(badField)).toMatchObject({
      code: 'bad_request',
      message: 'The image service rejected the option size; change it and try again.',
      retryable: false,
    });
    for (const error of [quota, moderation, badField]) expect(describeFailure(error).message).not.toContain('sk-abc');
  });

  it('gives the wait the service asked for when it is busy', () => {
    const limited = makeAPIError({ status: 429, body: { error: { message: 'slow down', code: 'rate_limit_exceeded' } }, retryAfterMs: 125_000 });
    expect(describeFailure(limited)).toMatchObject({ code: 'rate_limited', message: 'The image service is busy right now; try again in about 2 min 5 s.', retryable: true });
    // A wait under a second is the service's to the millisecond, not rounded up to "1 s".
    const shortWait = makeAPIError({ status: 429, body: { error: { message: 'slow down', code: 'rate_limit_exceeded' } }, retryAfterMs: 400 });
    expect(describeFailure(shortWait).message).toBe('The image service is busy right now; try again in about 400 ms.');
    expect(describeFailure(shortWait, 'de').message).toContain(' 400 ms');
  });

  it('says which failure of the service it was: an error inside the stream, one overloaded past the tries with its wait, or one that had an internal error', () => {
    const inStream = makeAPIError({ status: undefined, body: { error: { message: 'boom', type: 'server_error' } } });
    expect(describeFailure(inStream)).toMatchObject({
      code: 'server_error',
      message: 'The image service reported an error while making the images; try again in a few minutes.',
      retryable: true,
    });
    const overloaded = makeAPIError({ status: 503, body: { error: { message: 'overloaded', code: 'server_error' } }, headers: { 'retry-after': '45' } });
    expect(describeFailure(overloaded).message).toBe('The image service is overloaded and did not answer after several tries; try again in about 45 s.');
    const internal = makeAPIError({ status: 500, body: { error: { message: 'oops', type: 'server_error' } } });
    expect(describeFailure(internal).message).toBe('The image service had an internal error and did not recover after several tries; try again in a few minutes.');
  });

  it('never tells a member to try again in 0 ms: a service that asks for no wait (Retry-After: 0, or a date already past) is the smallest wait said', () => {
    const noWait = makeAPIError({ status: 429, body: { error: { message: 'slow down', code: 'rate_limit_exceeded' } }, retryAfterMs: 0 });
    expect(describeFailure(noWait).message).toBe('The image service is busy right now; try again in about 1 ms.');
    const overloaded = makeAPIError({ status: 503, body: { error: { message: 'overloaded', code: 'server_error' } }, headers: { 'retry-after': '0' } });
    expect(describeFailure(overloaded).message).toMatch(/; try again in about 1 ms\.$/);
  });

  it('says a timeout under a second in milliseconds in every language, never rounded up to a second, and longer ones in whole units as before', () => {
    // The locale's no-break spaces (French puts them between a number and its unit) read as spaces.
    const idle = (ms: number, locale: string) => describeFailure(new TimeoutError('idle', ms), locale).message.replace(/\s/g, ' ');
    expect(idle(250, 'en')).toMatch(/^The image service sent nothing for 250 ms, so the job was stopped\./);
    expect(idle(250, 'de')).toMatch(/^Der Bilddienst hat 250 ms lang nichts gesendet,/);
    expect(idle(250, 'fr')).toMatch(/^Le service d’images n’a rien envoyé pendant 250 ms,/);
    expect(idle(250, 'es')).toMatch(/^El servicio de imágenes no envió nada durante 250 ms,/);
    expect(idle(250, 'pt-BR')).toMatch(/^O serviço de imagens não enviou nada por 250 ms,/);
    expect(idle(250, 'ja')).toMatch(/^画像サービスから 250 ms 何も届かなかったため、/);
    expect(describeFailure(new TimeoutError('total', 999.2), 'en').message).toMatch(/^The job took longer than 1 s, so it was stopped\./);
    expect(idle(45_000, 'de')).toMatch(/^Der Bilddienst hat 45 Sek\. lang nichts gesendet,/);
    expect(idle(90_000, 'fr')).toMatch(/^Le service d’images n’a rien envoyé pendant 1 min 30 s,/);
    expect(idle(5 * 60_000, 'ja')).toMatch(/^画像サービスから 5 分 何も届かなかったため、/);
  });

  it('explains timeouts, broken streams and unreachable services as worth retrying, saying which ones may have been billed', () => {
    expect(describeFailure(new TimeoutError('idle', 300_000))).toMatchObject({
      code: 'timeout',
      message:
        'The image service sent nothing for 5 min, so the job was stopped. It had reached the service and may have been billed (its estimate counts against the budget), so it was not sent again; Retry starts a new job, perhaps at a lower quality.',
      retryable: true,
    });
    expect(describeFailure(new StreamBrokenError('reset'))).toMatchObject({ code: 'stream_broken', retryable: true, message: expect.stringContaining('may have been billed') });
    expect(describeFailure(new ConnectionError('could not reach http://10.0.0.1 (ECONNREFUSED)'))).toMatchObject({
      code: 'connection_failed',
      message: 'The bot could not reach the image service; try again in a few minutes.',
      retryable: true,
    });
    expect(describeFailure(new AbortedError())).toMatchObject({ code: 'aborted' });
  });

  it('hides the details of an unexpected error behind internal_error', () => {
    const failure = describeFailure(new TypeError("Cannot read properties of undefined (reading 'b64_json')"));
    expect(failure.code).toBe('internal_error');
    expect(failure.message).not.toContain('b64_json');
  });

  it('tells a job refused by a busy spend ledger that it was not sent and may be tried again (ledger_busy)', () => {
    const failure = describeFailure(new LedgerBusyError(new FileLockBusyError('/data/quota-ledger.json.lock', 'process 42 on host-a', 10_000)));
    expect(failure).toMatchObject({ code: 'ledger_busy', retryable: true });
    expect(failure.message).toBe('The bot’s spending record was busy with another process, so the job was not sent and costs nothing; try again in a moment.');
    expect(failure.message).not.toContain('/data');
  });

  it('tells a job whose spend ledger cannot be read to tell the operator, never naming the file (ledger_unreadable)', () => {
    const failure = describeFailure(new LedgerUnreadableError('/data/quota-ledger.json', 'is not JSON'));
    expect(failure).toMatchObject({ code: 'ledger_unreadable', retryable: false, });
    expect(failure.message).toBe('The bot cannot read its spending record, so it cannot run jobs for now; tell the bot’s operator.');
    expect(failure.message).not.toContain('/data');
  });

  it('tells a job the stop closed the ledger under that the bot is stopping (quota_store_closed)', () => {
    expect(describeFailure(new QuotaStoreClosedError())).toMatchObject({
      code: 'quota_store_closed',
      retryable: true,
      message: 'The bot is stopping, so it could not go on with this job; try again in a minute.',
    });
  });

  it('keeps a project error’s own code, as every surface reports it, and says it as an internal error when it has no sentence of its own', () => {
    const error = new UpgradeHeldError('pictor:bots:upgrading', 300_000);
    const failure = describeFailure(error, 'de');
    expect(failure).toMatchObject({ code: errorCodeOf(error), retryable: true });
    expect(failure.code).toBe('state_upgrade_held');
    expect(failure.message).toBe(describeFailure(new Error('a bug'), 'de').message);
  });

  it('keeps the code of every project error with a code of its own (a class of the one error tree), but the emulator’s', () => {
    const codes = projectErrorClasses().flatMap((text) => [...text.matchAll(/extends PictorError<'(\w+)'>/g)].map((m) => m[1]!));
    // The emulator's connection reset is its server's, thrown where it serves a request: no job of the bots meets it.
    const noJobMeets = new Set(['ECONNRESET']);
    expect(codes).toContain('state_upgrade_lost');
    // A core code (a command-line flag's validation_error) is the core's, described by its own checked switch.
    for (const code of codes.filter((c) => !noJobMeets.has(c) && !(ERROR_CODES as readonly string[]).includes(c))) expect(describeFailure(new PictorError(code, 'a project error')).code, code).toBe(code);
  });

  it('keeps the code of every class coded by a union a job can fail with, a surface’s own input refusal’s too', () => {
    // A surface's refusal of what a member gave it extends the runner's generic `InputRefusedError<C>` (itself no union:
    // its parameter `C`), by its own union.
    const unions = projectErrorClasses()
      .flatMap((text) => [...text.matchAll(/extends (PictorError|InputRefusedError)<(\w+)>/g)].map((m) => m[2]!))
      .filter((union) => union !== 'C');
    // Every such class, by its union's codes (an exported list, or a Record the compiler checks complete).
    const refusals = [...RUNNER_REFUSAL_CODES, ...BUDGETS.map((b) => b.code), ...USER_PACE_CODES, BREAKER_CODE];
    const kept: Record<string, Array<[string, Error]>> = {
      RefusalCode: refusals.map((code) => [code, new JobRefusedError(code, words('refusal.restarting'))]),
      BudgetCode: BUDGETS.map(({ code }) => [code, new PictorError(code, 'a cap’s refusal, as the spend guard throws it')]),
      InputRefusalCode: INPUT_REFUSAL_CODES.map((code) => [code, new InputImageError(code, words('refusal.restarting'))]),
      PressRefusalCode: PRESS_REFUSAL_CODES.map((code) => [code, new PressRefusedError(code, words('refusal.restarting'))]),
      SlackInputErrorCode: Object.keys(SLACK_INPUT_ERROR_CODES).map((code) => [code, new SlackInputError(code as SlackInputErrorCode, words('refusal.restarting'))]),
    };
    expect(unions.sort()).toEqual(Object.keys(kept).sort());
    for (const [code, error] of Object.values(kept).flat()) expect(describeFailure(error).code, code).toBe(code);
  });

  it.each([
    ['Discord', new InputImageError('not_an_image', words('discord.input.not_an_image', { label: 'image1', file: '`cat.png`' }), 'image1')],
    ['Slack', new SlackInputError('unknown_flag', words('slack.flag.unknown', { flag: '`--colour`', near: '`--color`', meant: 'yes', flags: '`--size`' }))],
  ])('says what a member gave the %s bot that it refused in its own words, in their language, not worth retrying as it is', (_, refusal) => {
    expect(describeFailure(refusal, 'de')).toEqual({ code: refusal.code, message: sayWords('de', refusal.words), words: refusal.words, retryable: false });
  });

  it.each(['en', 'fr'])('starts a Discord refusal of an input image as a sentence, whichever image it names (%s)', (locale) => {
    // The image as the member knows it: from the message menu ("the image of that message") or /edit's option (image1).
    const labels = [say(locale, 'discord.edit.message_image', { images: 1, index: 1 }), EDIT_IMAGE_OPTION_NAMES[0]!];
    for (const label of labels) {
      const refusals = [
        words('discord.input.too_large', { label, file: '`x.png`', size: '2 MB', max: '1 MB' }),
        words('discord.input.too_large_read', { label, file: '`x.png`', why: 'limit', max: '1 MB' }),
        words('discord.input.too_large_read', { label, file: '`x.png`', why: 'announced', max: '1 MB' }),
        words('discord.input.not_an_image', { label, file: '`x.png`' }),
      ];
      for (const refusal of refusals) {
        const said = `✋ ${sayWords(locale, refusal)}`;
        expect(said, said).toMatch(/^✋ (`|\p{Lu})/u);
        expect(said, said).toContain(label);
        expect(said, said).toContain('`x.png`');
      }
    }
  });

  it('gives a project error whose code no job fails with (none of FailureCode’s) internal_error, as a bug', () => {
    const error = new PictorError('not_a_job_code', 'an error of a part no job goes through');
    expect(describeFailure(error)).toMatchObject({ code: 'internal_error', message: describeFailure(new Error('a bug')).message, retryable: true });
    expect(failureLogLevel(error)).toBe('error');
  });

  it('keeps the code of the bots’ state it cannot read, a project error (state_records_unreadable)', () => {
    const error = new StateRecordsUnreadableError('slack-requests', '/data/slack/requests', ['/data/slack/requests/a.json'], Object.assign(new Error('denied'), { code: 'EACCES' }));
    expect(describeFailure(error)).toMatchObject({ code: 'state_records_unreadable', retryable: true });
    expect(failureLogLevel(error)).toBe('error');
    expect(errorCodeOf(error)).toBe('state_records_unreadable');
  });

  it('gives every failure the code errorCodeOf gives it, and words in every language', () => {
    const failures = [
      new TypeError('a bug'),
      new LedgerBusyError(new FileLockBusyError('/data/quota-ledger.json.lock', 'process 42 on host-a', 10_000)),
      new LedgerUnreadableError('/data/quota-ledger.json', 'is not JSON'),
      new QuotaStoreClosedError(),
      new UpgradeHeldError('pictor:bots:upgrading', 300_000),
      new ConnectionError('could not reach http://10.0.0.1 (ECONNREFUSED)'),
      new JobRefusedError('user_cooldown', words('refusal.user_cooldown', { every: duration(30_000), wait: duration(12_000) })),
    ];
    for (const error of failures) {
      const failure = describeFailure(error);
      expect(failure.code).toBe(errorCodeOf(error));
      for (const locale of LOCALES) expect(CATALOGS[locale][failure.words.key as MessageKey], `${locale} ${failure.words.key}`).toBeTruthy();
    }
  });

  // The one rule the runner's end of a job and each surface's intake log by (their own tests check each reads it).
  it.each([
    ['a refusal: the member’s', new JobRefusedError('restarting', words('refusal.restarting')), 'info'],
    ['the queue full: the bot at its capacity, the operator’s', new JobRefusedError('queue_full', words('refusal.restarting')), 'warn'],
    ['the service’s answer', makeAPIError({ status: 503, body: { error: { message: 'overloaded', type: 'server_error' } } }), 'warn'],
    ['the network', new ConnectionError('could not reach http://10.0.0.1 (ECONNREFUSED)'), 'warn'],
    ['a bug of ours', new TypeError('a bug'), 'error'],
    ['the spend ledger busy', new LedgerBusyError(new FileLockBusyError('/l.lock', 'process 42 on host-a', 10_000)), 'error'],
    ['the spend ledger unreadable', new LedgerUnreadableError('/data/quota-ledger.json', 'is not JSON'), 'error'],
    ['the bots’ state unreadable', new StateRecordsUnreadableError('audit-posts', '/data/audit/posts', ['/data/audit/posts/p9.json'], new Error('denied')), 'error'],
    ['an input image a Discord bot refused: the member’s', new InputImageError('not_an_image', words('refusal.restarting')), 'info'],
    ['a flag or an input image a Slack bot refused: the member’s', new SlackInputError('file_too_large', words('refusal.restarting')), 'info'],
  ])('logs %s for the operator at its level, by the one rule', (_, error, level) => {
    expect(failureLogLevel(error)).toBe(level);
  });

  it('passes a refusal through with its code', () => {
    const refusal = new JobRefusedError('user_cooldown', words('refusal.user_cooldown', { every: duration(30_000), wait: duration(12_000) }));
    expect(describeFailure(refusal)).toMatchObject({ code: 'user_cooldown', message: 'You can start one job every 30 s; try again in 12 s.', words: refusal.words, retryable: true });
    expect(describeFailure(refusal, 'de').message).toBe('Du kannst alle 30 Sek. einen Auftrag starten; versuche es in 12 Sek. erneut.');
  });

  it('names the surface’s own command in a refusal that tells the member one to type, and /imagine when given none', () => {
    const refusal = refusalFromPolicy('private_not_allowed', { platform: 'slack', fromDefault: true });
    const renamed = describeFailure(refusal, 'en', '/pictor');
    expect(renamed).toMatchObject({ code: 'private_not_allowed', retryable: false });
    expect(renamed.message).toBe(
      'This workspace does not allow private results, and your default asks for them: ask for a public one with --public, or turn your default off with /pictor settings --private off.',
    );
    expect(renamed.words.values?.command).toBe('/pictor');
    expect(describeFailure(refusal, 'en').message).toContain('turn your default off with /imagine settings --private off.');
  });

  it('leaves a refusal that names no command as it is when given one', () => {
    const refusal = new JobRefusedError('user_cooldown', words('refusal.user_cooldown', { every: duration(30_000), wait: duration(12_000) }));
    expect(describeFailure(refusal, 'en', '/pictor').words).toBe(refusal.words);
  });
});

describe('logJobFailure', () => {
  const messages = { refused: 'job refused', failed: 'job failed' };

  it('logs a refusal as the member’s: info, with its code and the fields, no error', () => {
    const logger = new RecordingLogger();
    expect(logJobFailure(logger, new JobRefusedError('restarting', words('refusal.restarting')), { jobId: 'j1' }, messages)).toBe('info');
    expect(logger.entries).toEqual([{ level: 'info', obj: { jobId: 'j1', code: 'restarting' }, msg: 'job refused' }]);
  });

  it('logs the queue full as the operator’s (the bot at its capacity): warn, with its code, as a refusal reads', () => {
    const logger = new RecordingLogger();
    expect(logJobFailure(logger, new JobRefusedError('queue_full', words('refusal.restarting')), { jobId: 'j1' }, messages)).toBe('warn');
    expect(logger.entries).toEqual([{ level: 'warn', obj: { jobId: 'j1', code: 'queue_full' }, msg: 'job refused' }]);
  });

  it.each([
    ['Discord', new InputImageError('host_not_allowed', words('refusal.restarting')), 'host_not_allowed'],
    ['Slack', new SlackInputError('unknown_flag', words('refusal.restarting')), 'unknown_flag'],
  ])('logs what a member gave the %s bot that it refused as the member’s: info, with the surface’s own code, no error', (_, error, code) => {
    const logger = new RecordingLogger();
    expect(logJobFailure(logger, error, { userId: 'u1' }, messages)).toBe('info');
    expect(logger.entries).toEqual([{ level: 'info', obj: { userId: 'u1', code }, msg: 'job refused' }]);
  });

  it.each([
    ['the service’s answer', makeAPIError({ status: 503, body: { error: { message: 'overloaded', type: 'server_error' } } }), 'server_error'],
    ['the network', new ConnectionError('could not reach http://10.0.0.1 (ECONNREFUSED)'), 'connection_failed'],
  ])('logs %s as warn with its code alone, which says it all', (_, error, code) => {
    const logger = new RecordingLogger();
    expect(logJobFailure(logger, error, { jobId: 'j1' }, messages)).toBe('warn');
    expect(logger.entries).toEqual([{ level: 'warn', obj: { jobId: 'j1', code }, msg: 'job failed' }]);
  });

  it('logs anything else as error with the error made loggable: its name, message and stack, no credential in any', () => {
    const logger = new RecordingLogger();
    const error = failureWithSecrets();
    expect(logJobFailure(logger, error, { jobId: 'j1' }, 'the runner did not take a job')).toBe('error');
    expect(logger.entries).toEqual([
      { level: 'error', obj: { jobId: 'j1', code: 'internal_error', err: { name: 'TypeError', message: expect.stringContaining('[redacted]'), stack: expect.any(String) } }, msg: 'the runner did not take a job' },
    ]);
    expect(logger.entries[0]!.obj).not.toHaveProperty('err', error);
    const logged = inspect(logger.entries, { depth: null });
    for (const secret of SECRETS_IN_FAILURE) expect(logged).not.toContain(secret);
  });

  it('logs the spend ledger unreadable with the error, which names its file, and no stack: its code says what it is', () => {
    const logger = new RecordingLogger();
    logJobFailure(logger, new LedgerUnreadableError('/data/quota-ledger.json', 'is not JSON'), {}, messages);
    expect(logger.entries[0]).toMatchObject({ level: 'error', obj: { code: 'ledger_unreadable', err: { code: 'ledger_unreadable', message: expect.stringContaining('/data/quota-ledger.json') } } });
    expect((logger.entries[0]!.obj as { err: object }).err).not.toHaveProperty('stack');
  });
});

describe('logInputRefusal', () => {
  it.each([
    ['Discord', new InputImageError('host_not_allowed', words('refusal.restarting')), { platform: 'discord', scopeId: 'G1', userId: 'U1' }],
    ['Slack', new SlackInputError('unknown_flag', words('refusal.restarting')), { platform: 'slack', scopeId: 'T1', userId: 'U1' }],
  ] as const)('logs what a member gave the %s bot that it refused as one line, the member’s: info, naming who asked, with the input’s code', (_, refusal, who) => {
    const logger = new RecordingLogger();
    logInputRefusal(logger, refusal, who);
    expect(logger.entries).toEqual([{ level: 'info', obj: { ...who, code: refusal.code }, msg: expect.any(String) }]);
  });

  it('words the line the same, whichever surface refused what', () => {
    const logger = new RecordingLogger();
    logInputRefusal(logger, new InputImageError('not_an_image', words('refusal.restarting')), { platform: 'discord', scopeId: 'G1', userId: 'U1' });
    logInputRefusal(logger, new SlackInputError('missing_prompt', words('refusal.restarting')), { platform: 'slack', scopeId: 'T1', userId: 'U2' });
    expect(new Set(logger.entries.map((e) => e.msg)).size).toBe(1);
  });
});

describe('describeKeptImages', () => {
  it('says the images finished before a failure or cancel are here, and charged', () => {
    expect(describeKeptImages(1)).toBe('The image finished before that is here; it is charged.');
    expect(describeKeptImages(3)).toBe('The 3 images finished before that are here; they are charged.');
  });

  it('no longer tells of a broken stream that it broke before the images arrived when some had', () => {
    expect(describeFailure(new StreamBrokenError('reset')).message).toContain('before all the images arrived');
  });
});
