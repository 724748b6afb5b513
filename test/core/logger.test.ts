import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PictorClient } from '../../src/index.js';
import { createLogger, redactSecrets, scrubSecrets } from '../../src/internal.js';
import { useEmulator } from '../helpers/emulator.js';

const SECRET = 'sk-test-7c1f0d9e2b4a';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, destination };
}

const env = useEmulator({ apiKeys: [SECRET] });

describe('secret redaction', () => {
  it('blanks API keys, tokens and Authorization headers in logged objects at every level', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'trace', destination });
    for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const) {
      logger[level]({ apiKey: SECRET, headers: { authorization: `Bearer ${SECRET}` }, request: { headers: { Authorization: `Bearer ${SECRET}` } }, slack: { botToken: SECRET } }, 'a request');
    }
    expect(lines).toHaveLength(6);
    expect(lines.join('')).not.toContain(SECRET);
    expect(lines.join('')).toContain('[redacted]');
  });

  it('hides every credential shape error messages hide, in the message, nested fields and a logged error, and the line stays JSON', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', destination });
    const github = ['ghp', '_', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'].join('');
    const password = ['hun', 'ter2', 'pass'].join('');
    logger.warn({ err: new Error(`the mirror said: token ${github} is not valid`), url: `https://mirror.example/v1?password=${password}&next=2` }, `a library echoed ${github}`);
    logger.info({ requestId: 'req_123', user: 'slack:U0ALICE' }, 'a job was queued');
    const text = lines.join('');
    expect(text).not.toContain(github);
    expect(text).not.toContain(password);
    const [warned, plain] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(warned).toMatchObject({ msg: 'a library echoed ghp_[redacted]', url: 'https://mirror.example/v1?password=[redacted]&next=2', err: { message: expect.stringContaining('[redacted] is not valid') } });
    expect(plain).toMatchObject({ msg: 'a job was queued', requestId: 'req_123', user: 'slack:U0ALICE' });
  });

  it('scrubs a known secret out of free text and nested strings', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', destination, secrets: [SECRET] });
    logger.info({ detail: `sent with ${SECRET}` }, `the key ${SECRET} was refused`);
    expect(lines.join('')).not.toContain(SECRET);
  });

  it('hides a secret given to it in every string of a line — message, nested field, binding, key — however it is written, and the line stays JSON', () => {
    const { lines, destination } = capture();
    // Shaped like no credential, so only knowing its value hides it.
    const plain = ['plain', 'logger', 'secret', '77'].join('-');
    const logger = createLogger({ level: 'info', destination, secrets: [plain, undefined, ''] }).child({ upstream: `https://h.test/?k=${plain}` });
    logger.info({ detail: { sent: `with ${plain}-extra` }, [plain]: 1, echoed: `k%3D${encodeURIComponent(plain).replace(/-/g, '%2d')}` }, `the key ${plain} was refused`);
    const text = lines.join('');
    expect(text).not.toContain(plain);
    expect(text).not.toContain('plain%2dlogger');
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: 'the key [redacted] was refused', upstream: 'https://h.test/?k=[redacted]', detail: { sent: 'with [redacted]' }, '[redacted]': 1, echoed: 'k%3D[redacted]' });
  });

  it('scrubs with the one redaction: the secrets given and every credential shape', () => {
    const plain = ['plain', 'scrubbed', 'secret', '88'].join('-');
    expect(scrubSecrets(`sent ${plain} and Bearer abc.def-ghi`, [plain])).toBe('sent [redacted] and Bearer [redacted]');
    expect(redactSecrets(`later: ${plain}`), 'an error made later hides it too').toBe('later: [redacted]');
  });

  it('hides a secret one logger was given in every other logger of the process too, from then on', () => {
    const plain = ['plain', 'other', 'logger', 'secret', '99'].join('-');
    const { lines, destination } = capture();
    const other = createLogger({ level: 'info', destination });
    createLogger({ level: 'info', destination: capture().destination, secrets: [plain] });
    other.info({ echoed: plain }, `a library echoed ${plain}`);
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: 'a library echoed [redacted]', echoed: '[redacted]' });
  });

  it('does not hide a key shorter than 6 characters by its value (it would eat our own words), only where a field or scheme names it', () => {
    const short = 'pictr';
    expect(scrubSecrets(`the key ${short} was refused; pictures of pictr-like birds`, [short])).toBe(`the key ${short} was refused; pictures of pictr-like birds`);
    expect(scrubSecrets(`Authorization: Bearer ${short}`, [short])).toBe('Authorization: Bearer [redacted]');
    expect(scrubSecrets(`GET /v1?api_key=${short}&n=1`, [short])).toBe('GET /v1?api_key=[redacted]&n=1');
    expect(scrubSecrets(`{"apiKey":"${short}"}`, [short])).toBe('{"apiKey":"[redacted]"}');
  });

  it('never shows the key in a client, its string, JSON or inspection', () => {
    const client = new PictorClient({ baseURL: env.url, apiKey: SECRET });
    expect(String(client) + JSON.stringify(client) + inspect(client, { depth: 5, showHidden: true })).not.toContain(SECRET);
  });

  it('keeps the key out of the client’s own log lines, even at trace level', async () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'trace', destination });
    env.emulator.injectFault('server_error');
    const client = new PictorClient({ baseURL: env.url, apiKey: SECRET, logger });
    await client.generate({ prompt: 'x', quality: 'low' });
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain(SECRET);
  });

  it('keeps the key out of errors', async () => {
    const client = new PictorClient({ baseURL: 'http://127.0.0.1:9', apiKey: SECRET, maxRetries: 0 });
    const error = await client.generate({ prompt: 'x' }).catch((e: unknown) => e);
    expect(`${String(error)} ${JSON.stringify(error)} ${(error as Error).stack} ${inspect(error, { depth: 5 })}`).not.toContain(SECRET);
  });
});
