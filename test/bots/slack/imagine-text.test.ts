import { describe, expect, it } from 'vitest';
import { FLAG_NAMES, parseImagineText, scanImagineText, usageText } from '../../../bots/slack/imagine-text.js';
import { isSlackInputError, type SlackInputError } from '../../../bots/slack/index.js';
import { ALLOWED, OUTPUT_FORMATS, QUALITIES, SIZES } from '../../../src/index.js';
import { say, words } from '../../../bots/runner/index.js';
import { slackKeyOf } from '../../helpers/message-keys.js';

function refusal(text: string): SlackInputError {
  try {
    parseImagineText(text);
  } catch (error) {
    if (isSlackInputError(error)) return error;
    throw error;
  }
  throw new Error(`${text} was accepted`);
}

describe('reading /imagine text once', () => {
  it('finds every flag of the text before reading any value, as the table calls it, and parses from what it read', () => {
    const scan = scanImagineText('a fox --qualty high —output_format webp --private --size huge');
    expect(scan.flags).toEqual(['qualty', 'format', 'private', 'size']);
    expect(() => parseImagineText(scan)).toThrow(expect.objectContaining({ code: 'unknown_flag' }));
    const text = 'a <@U1> fox --size 1024x1536 --private --n=2';
    expect(parseImagineText(scanImagineText(text), { locale: 'de' })).toEqual(parseImagineText(text, { locale: 'de' }));
    expect(scanImagineText('help').flags).toEqual([]);
  });
});

describe('parsing /imagine text', () => {
  it('takes flags in any order and keeps the rest as the prompt', () => {
    expect(parseImagineText('--quality high a fox in snow --size 1536x1024 --n 2 at dawn --format=webp')).toEqual({
      kind: 'request',
      prompt: 'a fox in snow at dawn',
      options: { quality: 'high', size: '1536x1024', n: 2, output_format: 'webp' },
    });
  });

  it('reads flags whose dashes a Slack client turned into an em dash, and common spellings', () => {
    expect(parseImagineText('a fox —size portrait —format jpg –background opaque')).toMatchObject({
      prompt: 'a fox',
      options: { size: '1024x1536', output_format: 'jpeg', background: 'opaque' },
    });
    expect(parseImagineText('a fox --size 1536×1024')).toMatchObject({ options: { size: '1536x1024' } });
  });

  it('names a bad flag value and every value the spec allows', () => {
    const error = refusal('a fox --size 512x512');
    expect(error.code).toBe('bad_flag_value');
    expect(error.flag).toBe('--size');
    expect(error.message).toContain(SIZES.join(', '));
    expect(refusal('a fox --quality ultra').message).toContain(QUALITIES.join(', '));
    expect(refusal('a fox --format gif').message).toContain(OUTPUT_FORMATS.join(', '));
    expect(refusal('a fox --n 0').message).toContain(ALLOWED.n!);
  });

  it('reads --private and --public, which take no value, as who sees the job (neither: the member’s default)', () => {
    expect(parseImagineText('a diary page --private --quality low')).toEqual({ kind: 'request', prompt: 'a diary page', options: { quality: 'low' }, private: true });
    expect(parseImagineText('—public a poster')).toEqual({ kind: 'request', prompt: 'a poster', options: {}, private: false });
    expect(parseImagineText('a poster')).toEqual({ kind: 'request', prompt: 'a poster', options: {} });
    expect(refusal('a fox --privat').message).toContain('`--private`');
  });

  it('names an unknown flag and lists the flags there are', () => {
    const error = refusal('a fox --mood noir');
    expect(error.code).toBe('unknown_flag');
    expect(error.message).toContain('`--mood`');
    expect(error.message).toContain('`--style`');
    expect(error.message).toContain('`--size`');
  });

  it('reads --style NAME apart from the request’s fields (the runner applies the house style)', () => {
    expect(parseImagineText('a fox --style Neon --size 1024x1024')).toEqual({ kind: 'request', prompt: 'a fox', options: { size: '1024x1024' }, style: 'neon' });
    expect(parseImagineText('a fox')).toEqual({ kind: 'request', prompt: 'a fox', options: {} });
    const error = refusal('a fox --style');
    expect(error.code).toBe('missing_flag_value');
    expect(error.words).toEqual(words('slack.flag.needs_value', { flag: '`--style`', allowed: say('en', 'slack.flag.style_value') }));
  });

  it('asks for a value when a flag has none', () => {
    const error = refusal('a fox --quality');
    expect(error.code).toBe('missing_flag_value');
    expect(error.message).toContain(QUALITIES.join(', '));
  });

  it('leaves the spec’s cross-field rules to the runner, which parses the request once', () => {
    expect(parseImagineText('a logo --background transparent --format jpeg')).toEqual({
      kind: 'request',
      prompt: 'a logo',
      options: { background: 'transparent', output_format: 'jpeg' },
    });
    expect(FLAG_NAMES).toMatchObject({ output_format: '--format', output_compression: '--compression', n: '--n' });
  });

  it('asks for a prompt when there are only flags, and shows help for help or nothing', () => {
    expect(refusal('--size 1024x1024').code).toBe('missing_prompt');
    expect(parseImagineText('help')).toEqual({ kind: 'help' });
    expect(parseImagineText('  ')).toEqual({ kind: 'help' });
  });

  it('turns Slack’s escaped text and links back into plain words', () => {
    expect(parseImagineText('cats &amp; dogs &lt;3 like <https://example.com|this> with <@U123|ann>')).toMatchObject({
      prompt: 'cats & dogs <3 like this with @ann',
    });
  });

  it('lists every flag with its allowed values in the usage', () => {
    const usage = usageText({ imagine: '/imagine', edit: '/imagine-edit' });
    for (const part of ['--size', '--quality', '--background', '--format', '--n', SIZES.join(', '), '/imagine-edit']) expect(usage).toContain(part);
    const audit = usage.split('\n').find((line) => line.includes('admin audit'))!;
    expect(slackKeyOf(audit)).toBe('slack.help.audit');
    expect(audit).toBe(say('en', 'slack.help.audit', { command: '`/imagine admin audit #channel`', off: '`/imagine admin audit off`' }, { bold: (text) => `*${text}*` }));
  });
});
