import { describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { envError, envNumber, envSeconds, envUrl, writableFolder } from '../../src/core/env.js';
import { testTempDirSync } from '../helpers/temp-dir.js';
import { MAX_TIMER_MS } from '../../src/core/timer-ms.js';
import { ValidationError } from '../../src/index.js';

function refusalOf(read: () => unknown): ValidationError {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected the value to be refused');
}

describe('envSeconds', () => {
  it('takes the longest wait a timer holds, less what the timer waits on top', () => {
    const longest = Math.floor((MAX_TIMER_MS - 10_000) / 1000);
    expect(envSeconds({ GRACE: String(longest) }, 'GRACE', { min: 0, plusMs: 10_000 })).toBe(longest);
    expect(longest * 1000 + 10_000).toBeLessThanOrEqual(MAX_TIMER_MS);
  });

  it('refuses a wait a timer cannot hold, naming the variable and the longest it takes', () => {
    const error = refusalOf(() => envSeconds({ GRACE: '2200000' }, 'GRACE', { min: 0, plusMs: 10_000 }));
    expect(error.param).toBe('GRACE');
    expect(error.message).toBe('GRACE must be a number of seconds from 0 to 2147473 (about 24 days, the longest a timer waits) (got "2200000")');
  });
});

describe('envError and envUrl never quote a secret', () => {
  it('leaves out a URL’s user name and password, whether or not it parses', () => {
    for (const value of ['https://u:s3cret@exa mple.com', 'https://u:s3cret@', 'redis://:s3cret@cache:6379']) {
      const error = refusalOf(() => envUrl({ PICTOR_BASE_URL: value }, 'PICTOR_BASE_URL', { example: 'https://images.example.com' }));
      expect(error.param).toBe('PICTOR_BASE_URL');
      expect(error.message).toBe('PICTOR_BASE_URL must be an http(s) URL, e.g. https://images.example.com');
      expect(error.message).not.toContain('s3cret');
    }
  });

  it('leaves out the value of a variable named as a secret, whatever its reader forgot to say', () => {
    for (const name of ['DISCORD_TOKEN', 'SLACK_SIGNING_SECRET', 'REDIS_PASSWORD', 'PICTOR_API_KEY']) {
      expect(envError({ [name]: 's3cret value' }, name, 'something').message).toBe(`${name} must be something`);
    }
  });

  it('leaves out a key or token pasted into a setting that is not named as a secret', () => {
    const slackToken = ['xoxb', '17653672481', '19874698323', 'pdFZKVeTuE8sk7oOcBrzbqgy'].join('-');
    for (const value of ['sk-proj-AbCd1234EfGh5678IjKl', slackToken, 'Bearer abc123def456']) {
      const error = refusalOf(() => envUrl({ PICTOR_BASE_URL: value }, 'PICTOR_BASE_URL', { example: 'https://images.example.com' }));
      expect(error.message).toBe('PICTOR_BASE_URL must be an http(s) URL, e.g. https://images.example.com');
    }
  });

  it('still quotes a plain value, so a typo shows', () => {
    expect(envUrl({ PICTOR_BASE_URL: 'https://example.com' }, 'PICTOR_BASE_URL', { example: 'x' })).toBe('https://example.com');
    expect(refusalOf(() => envUrl({ PICTOR_BASE_URL: 'exa mple' }, 'PICTOR_BASE_URL', { example: 'x' })).message).toContain('(got "exa mple")');
  });
});

describe('envNumber', () => {
  it('reads a number as a person writes one', () => {
    for (const [text, value] of [['12', 12], [' 7\n', 7], ['0.5', 0.5], ['.5', 0.5], ['-3', -3], ['+4', 4], ['010', 10]] as const) {
      expect(envNumber({ N: text }, 'N')).toBe(value);
    }
  });

  it('refuses a hexadecimal, binary, octal or exponent form, naming the variable, rather than reading 0x10 as 16', () => {
    for (const text of ['0x10', '0X1F', '0b1', '0o7', '1e3', '2E2', 'Infinity']) {
      const error = refusalOf(() => envNumber({ PICTOR_IMAGES_PER_MINUTE: text }, 'PICTOR_IMAGES_PER_MINUTE', { int: true, min: 1 }));
      expect(error.param).toBe('PICTOR_IMAGES_PER_MINUTE');
      expect(error.message).toBe(`PICTOR_IMAGES_PER_MINUTE must be a whole number, 1 or more, written in decimal digits (got ${JSON.stringify(text)})`);
    }
  });
});

describe('writableFolder', () => {
  const modeOf = (path: string) => statSync(path).mode & 0o777;

  it('makes a missing folder, and the parents it makes, readable by this user only (0700): it may hold prompts', () => {
    const dir = testTempDirSync('pictor-env-');
    expect(writableFolder('PICTOR_DATA_DIR', join(dir, 'new', 'data'))).toBe(join(dir, 'new', 'data'));
    expect([modeOf(join(dir, 'new')), modeOf(join(dir, 'new', 'data'))]).toEqual([0o700, 0o700]);
  });

  it('leaves the mode of a folder that is there as the operator set it', () => {
    const dir = testTempDirSync('pictor-env-');
    mkdirSync(join(dir, 'data'));
    chmodSync(join(dir, 'data'), 0o750);
    writableFolder('PICTOR_DATA_DIR', join(dir, 'data'));
    expect(modeOf(join(dir, 'data'))).toBe(0o750);
  });
});
