import { describe, expect, it } from 'vitest';
import { createCliLogger } from '../../src/cli/cli-logger.js';

describe("the CLI's human log lines", () => {
  it('hide every credential shape error messages hide, and keep our own words', async () => {
    const lines: string[] = [];
    const logger = await createCliLogger({ env: { PICTOR_LOG_LEVEL: 'warn' }, level: 'warn', secrets: [], line: (text) => lines.push(text) });
    const github = ['ghp', '_', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'].join('');
    const password = ['hun', 'ter2', 'pass'].join('');
    logger.warn({ url: `https://mirror.example/v1?password=${password}&next=2` }, `a library echoed ${github}`);
    logger.warn({ attempt: 2 }, 'the service is busy; retrying');
    expect(lines).toEqual(['pictor: warn: a library echoed ghp_[redacted] (url https://mirror.example/v1?password=[redacted]&next=2)', 'pictor: warn: the service is busy; retrying (attempt 2)']);
  });

  it('hide the API key in every form a line may echo it: as written, inside a longer token, URL-encoded and in base64', async () => {
    const lines: string[] = [];
    const key = ['sk-', 'cli-logger-', 'Zq8/Wm+4Lp'].join('');
    const logger = await createCliLogger({ env: { PICTOR_LOG_LEVEL: 'warn' }, level: 'warn', secrets: [key], line: (text) => lines.push(text) });
    const basic = Buffer.from(`user:${key}`).toString('base64');

    logger.warn({ header: `Basic ${basic}` }, `a proxy echoed ${key}x and ${encodeURIComponent(key)}`);

    expect(lines).toEqual(['pictor: warn: a proxy echoed [redacted] and [redacted] (header Basic [redacted])']);
  });

  it('say nothing below error by default, log from the default level a command gives, and from PICTOR_LOG_LEVEL once it is set', async () => {
    const lines: string[] = [];
    const line = (text: string) => lines.push(text);
    (await createCliLogger({ env: {}, level: 'info', secrets: [], line })).info({}, 'quiet');
    (await createCliLogger({ env: {}, level: 'info', defaultLevel: 'info', secrets: [], line })).info({}, 'a server says what it does');
    (await createCliLogger({ env: { PICTOR_LOG_LEVEL: 'warn' }, level: 'warn', defaultLevel: 'info', secrets: [], line })).info({}, 'chosen away');
    expect(lines).toEqual(['pictor: a server says what it does']);
  });
  it('show an error as its code and message, the API key inside it hidden', async () => {
    const lines: string[] = [];
    const key = ['sk-', 'cli-logger-', 'Err0r/Key+9'].join('');
    const logger = await createCliLogger({ env: {}, level: 'error', secrets: [key], line: (text) => lines.push(text) });
    const denied = Object.assign(new Error(`EISDIR: illegal operation on a directory, read`), { code: 'EISDIR' });
    const echoed = Object.assign(new Error(`the proxy refused Bearer ${key}`), { code: 'upstream_error' });

    logger.error({ err: denied, path: '/spend' }, 'the console failed to answer');
    logger.error({ err: echoed }, 'the job failed');
    logger.error({ err: new TypeError('rules is not iterable') }, 'could not save');

    expect(lines).toEqual([
      'pictor: the console failed to answer (err EISDIR: illegal operation on a directory, read, path /spend)',
      'pictor: the job failed (err upstream_error: the proxy refused Bearer [redacted])',
      'pictor: could not save (err TypeError: rules is not iterable)',
    ]);
  });

  it('show a list joined, and cut a long list or value short without leaving part of a secret showing', async () => {
    const lines: string[] = [];
    const key = ['sk-', 'cli-logger-', 'L0ng/Line+7'].join('');
    const logger = await createCliLogger({ env: { PICTOR_LOG_LEVEL: 'info' }, level: 'info', secrets: [key], line: (text) => lines.push(text) });

    logger.info({ thresholds: [50, 80, 100], breaker: true, by: 'console' }, 'the owner changed the alert rules');
    logger.info({ ids: Array.from({ length: 25 }, (_, i) => i) }, 'many');
    logger.error({ err: new Error(`${'x'.repeat(285)} ${key} and more`) }, 'long');

    expect(lines[0]).toBe('pictor: the owner changed the alert rules (thresholds [50, 80, 100], breaker true, by console)');
    expect(lines[1]).toBe('pictor: many (ids [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, … (25 in all)])');
    expect(lines[2]).not.toContain('sk-cli');
    expect(lines[2]).toMatch(/^pictor: long \(err x{285} \[redacted\] an…\)$/);
  });
});
