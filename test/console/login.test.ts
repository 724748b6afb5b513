import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSeededConsole, TOKEN, type ConsoleUnderTest } from './console-harness.js';

/** One request to the console as a client at `from` (a loopback address of its own) would send it. */
async function ask(
  at: ConsoleUnderTest,
  options: { method?: string; path: string; from?: string; headers?: Record<string, string>; form?: Record<string, string> },
): Promise<{ status: number; location: string | undefined; cookie: string | undefined; body: string }> {
  const { port } = new URL(at.url);
  const body = options.form ? new URLSearchParams(options.form).toString() : undefined;
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...options.headers };
  if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, localAddress: options.from ?? '127.0.0.1', method: options.method ?? 'GET', path: options.path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, location: res.headers.location, cookie: res.headers['set-cookie']?.[0], body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The owner's login through the form (a POST from the console's own page). */
const logIn = (at: ConsoleUnderTest, token: string, options: { from?: string; next?: string } = {}) =>
  ask(at, { method: 'POST', path: '/login', from: options.from, headers: { origin: at.url }, form: { token, ...(options.next === undefined ? {} : { next: options.next }) } });

describe('the console’s login', () => {
  let c: ConsoleUnderTest;
  beforeAll(async () => {
    c = await startSeededConsole();
  });
  afterAll(async () => {
    await c?.close();
  });

  describe('after the login, goes to a page of this console only', () => {
    const hostile = [
      '/\t/evil.example/x',
      '/\n/evil.example/x',
      '/\r\n/evil.example/x',
      '/\u0000/evil.example',
      '\t//evil.example',
      ' //evil.example',
      '//evil.example',
      '///evil.example',
      '\\\\evil.example',
      '/\\evil.example',
      '\\/evil.example',
      '/.//evil.example',
      '/..//evil.example',
      '/x/..//evil.example',
      'https:evil.example',
      'https://evil.example/',
      'http:/evil.example',
      'javascript:alert(1)',
      'evil.example',
      '/%09/evil.example',
      '/%0a/evil.example',
      '/%5cevil.example',
      '/%2F%2Fevil.example',
      '/%2f/evil.example',
      '/%zz',
      '',
    ];
    it.each(hostile)('refuses next=%j: the owner lands on /spend', async (next) => {
      const res = await logIn(c, TOKEN, { next });
      expect(res.status).toBe(303);
      expect(res.location).toBe('/spend');
    });

    it.each(['/jobs?x=1', '/settings', '/spend?days=90', '/jobs?user=discord%3A1&q=a%20b', '/alerts#rules'])('keeps next=%j', async (next) => {
      const res = await logIn(c, TOKEN, { next });
      expect(res.status).toBe(303);
      expect(res.location).toBe(next);
    });

    it('writes only a page of this console into the login form’s next', async () => {
      const res = await ask(c, { path: `/login?next=${encodeURIComponent('/\t/evil.example/x')}` });
      expect(res.status).toBe(200);
      expect(res.body).toContain('<input type="hidden" name="next" value="/spend">');
      const kept = await ask(c, { path: `/login?next=${encodeURIComponent('/jobs?x=1')}` });
      expect(kept.body).toContain('<input type="hidden" name="next" value="/jobs?x=1">');
    });
  });
});
