import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSeededConsole, TOKEN, type ConsoleUnderTest } from './console-harness.js';

/**
 * One request to the console as a client at `from` (a loopback address of its own) would send it. Addresses other than
 * 127.0.0.1 rely on Linux answering all of 127.0.0.0/8 on its loopback.
 */
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

/** The start of a minute, an hour ago: the time the throttle tests' consoles stand still at. */
const STILL = Math.floor((Date.now() - 60 * 60_000) / 60_000) * 60_000;

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

  describe('guessing is slowed per client address', () => {
    it('answers an address 429 after ten wrong tokens in a minute, its right token too (its guesses learn nothing), and does not slow another address', async () => {
      // The console's clock stands still: the ten guesses and the 429 fall in one minute.
      const at = await startSeededConsole({ now: () => STILL });
      try {
        for (let i = 0; i < 10; i++) expect((await logIn(at, `guess-${i}-0123456789`, { from: '127.0.0.2' })).status).toBe(401);
        expect((await logIn(at, 'guess-10-0123456789', { from: '127.0.0.2' })).status).toBe(429);
        // The right token is not even compared: the answer is the same 429, and no session starts.
        const throttled = await logIn(at, TOKEN, { from: '127.0.0.2' });
        expect(throttled.status).toBe(429);
        expect(throttled.cookie).toBeUndefined();
        // Another address is not slowed by that one's guesses, and the owner gets in from it.
        expect((await logIn(at, 'wrong-elsewhere-0123', { from: '127.0.0.3' })).status).toBe(401);
        const owner = await logIn(at, TOKEN, { from: '127.0.0.3' });
        expect(owner.status).toBe(303);
        expect(owner.cookie).toMatch(/^pictor_console=/);
        // A client that sends no Origin (curl, a script) is counted the same.
        const bare = (token: string) => ask(at, { method: 'POST', path: '/login', from: '127.0.0.4', form: { token } });
        for (let i = 0; i < 10; i++) expect((await bare(`guess-${i}-0123456789`)).status).toBe(401);
        expect((await bare(TOKEN)).status).toBe(429);
      } finally {
        await at.close();
      }
    });

    it('throttles the owner too when the guesses come from the owner’s address, until a minute passes, the console restarts, or the owner opens the login link made at start', async () => {
      let now = STILL;
      const at = await startSeededConsole({ madeToken: true, now: () => now });
      const link = new URL(at.console.loginLink!);
      const token = link.searchParams.get('token')!;
      try {
        const earlier = (await logIn(at, token)).cookie!.split(';')[0]!;
        // Someone sharing the owner's address (the same machine, a proxy, a NAT) sends ten wrong tokens.
        for (let i = 0; i < 10; i++) expect((await logIn(at, `guess-${i}-0123456789`)).status).toBe(401);
        const owner = await logIn(at, token);
        expect(owner.status).toBe(429);
        expect(owner.cookie).toBeUndefined();
        // Logins only: a session started before goes on.
        expect((await ask(at, { path: '/spend', headers: { cookie: earlier } })).status).toBe(200);
        // The printed login link is never throttled: it logs the owner in from that same address.
        const opened = await ask(at, { path: `${link.pathname}${link.search}`, headers: { 'sec-fetch-site': 'none' } });
        expect(opened.status).toBe(303);
        expect(opened.cookie).toMatch(/^pictor_console=/);
        // Still throttled to the minute's end; the next minute the owner's token logs in again.
        now = STILL + 59_999;
        expect((await logIn(at, token)).status).toBe(429);
        now = STILL + 60_000;
        const again = await logIn(at, token);
        expect(again.status).toBe(303);
        expect(again.cookie).toMatch(/^pictor_console=/);
      } finally {
        await at.close();
      }
      // The count is in the process's memory: a console started again has none.
      const throttled = await startSeededConsole({ now: () => STILL });
      try {
        for (let i = 0; i < 10; i++) await logIn(throttled, `guess-${i}-0123456789`);
        expect((await logIn(throttled, TOKEN)).status).toBe(429);
      } finally {
        await throttled.close();
      }
      const restarted = await startSeededConsole({ now: () => STILL });
      try {
        expect((await logIn(restarted, TOKEN)).status).toBe(303);
      } finally {
        await restarted.close();
      }
    });

    it('counts no login link and no other site’s form: another site’s link (an <img> on a web page) and form are refused, and the owner still logs in', async () => {
      const at = await startSeededConsole({ madeToken: true });
      try {
        for (const site of ['cross-site', 'same-site']) {
          for (let i = 0; i < 10; i++) {
            const res = await ask(at, { path: `/login?token=x${i}`, headers: { 'sec-fetch-site': site, 'sec-fetch-dest': 'image' } });
            expect(res.status).toBe(403);
            expect(res.cookie).toBeUndefined();
          }
        }
        // A browser that does not say where a request comes from: a wrong token is 401, and still not counted.
        for (let i = 0; i < 10; i++) expect((await ask(at, { path: `/login?token=x${i}` })).status).toBe(401);
        // Another site's form is refused before its token is read: not counted either.
        for (let i = 0; i < 10; i++) {
          expect((await ask(at, { method: 'POST', path: '/login', headers: { origin: 'http://evil.example' }, form: { token: `guess-${i}-0123456789` } })).status).toBe(403);
        }
        // Nothing above counted: a wrong token from the console's own page is still a plain 401.
        expect((await logIn(at, 'one-typo-0123456789')).status).toBe(401);
        const link = new URL(at.console.loginLink!);
        const token = link.searchParams.get('token')!;
        expect((await logIn(at, token)).status).toBe(303);
        // The printed link itself, opened from the terminal (no site sent it), logs in.
        const opened = await ask(at, { path: `${link.pathname}${link.search}`, headers: { 'sec-fetch-site': 'none' } });
        expect(opened.status).toBe(303);
        expect(opened.location).toBe('/spend');
        expect(opened.cookie).toMatch(/^pictor_console=/);
      } finally {
        await at.close();
      }
    });
  });

  it('warns of wrong tokens at most once a minute per address, and once a minute for the login link, however many come', async () => {
    const warnings: { fields: Record<string, unknown>; message: string }[] = [];
    const logger = { debug: () => {}, info: () => {}, error: () => {}, warn: (fields: object, message?: string) => void warnings.push({ fields: fields as Record<string, unknown>, message: message ?? '' }) };
    const at = await startSeededConsole({ madeToken: true, logger });
    try {
      for (let i = 0; i < 15; i++) await logIn(at, `guess-${i}-0123456789`, { from: '127.0.0.2' });
      for (let i = 0; i < 3; i++) await logIn(at, `guess-${i}-0123456789`, { from: '127.0.0.3' });
      // The login link's wrong tokens are not counted (no Sec-Fetch-Site: curl, or an older browser), and not logged each.
      for (let i = 0; i < 50; i++) expect((await ask(at, { path: `/login?token=x${i}`, from: '127.0.0.4' })).status).toBe(401);
      // (127.0.0.2's last five are answered 429, logged as a throttled address's: the last test of this file.)
      expect(warnings.filter((w) => w.message === 'a console login with a wrong token').map((w) => w.fields)).toEqual([
        { from: '127.0.0.2', notLogged: 0 },
        { from: '127.0.0.3', notLogged: 0 },
        { from: '127.0.0.4', via: 'the login link', notLogged: 0 },
      ]);
    } finally {
      await at.close();
    }
  });

  it('takes the operator’s PICTOR_CONSOLE_TOKEN only in the form, never from the address (proxy logs, browser history)', async () => {
    const res = await ask(c, { path: `/login?token=${TOKEN}`, headers: { 'sec-fetch-site': 'none' } });
    expect(res.status).toBe(400);
    expect(res.cookie).toBeUndefined();
    expect(res.body).toContain('<form method="post" action="/login">');
    expect((await logIn(c, TOKEN)).status).toBe(303);
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

describe('the console’s log of a throttled address', () => {
  it('warns that an address is kept at 429 once a minute, named as the throttle counts it, with how many 429s went unlogged since, never the token', async () => {
    const warnings: { fields: Record<string, unknown>; message: string }[] = [];
    const logger = { debug: () => {}, info: () => {}, error: () => {}, warn: (fields: object, message?: string) => void warnings.push({ fields: fields as Record<string, unknown>, message: message ?? '' }) };
    let now = STILL;
    const at = await startSeededConsole({ logger, now: () => now });
    const throttledLines = () => warnings.filter((w) => w.message !== 'a console login with a wrong token');
    try {
      for (let i = 0; i < 10; i++) expect((await logIn(at, `guess-${i}-0123456789`, { from: '127.0.0.2' })).status).toBe(401);
      for (let i = 0; i < 30; i++) expect((await logIn(at, i % 2 ? TOKEN : `kept-${i}-0123456789`, { from: '127.0.0.2' })).status).toBe(429);
      expect(throttledLines().map((w) => w.fields)).toEqual([{ from: '127.0.0.2', notLogged: 0 }]);
      expect(throttledLines()[0]!.message).toMatch(/429/);

      // The next minute the address may guess again; kept at 429 again, one more line, counting the 29 left out.
      now = STILL + 60_000;
      for (let i = 0; i < 10; i++) expect((await logIn(at, `guess-${i}-0123456789`, { from: '127.0.0.2' })).status).toBe(401);
      for (let i = 0; i < 30; i++) expect((await logIn(at, `kept-${i}-0123456789`, { from: '127.0.0.2' })).status).toBe(429);
      expect(throttledLines().map((w) => w.fields)).toEqual([
        { from: '127.0.0.2', notLogged: 0 },
        { from: '127.0.0.2', notLogged: 29 },
      ]);
      // No line carries a token, right or wrong.
      const logged = JSON.stringify(warnings);
      expect(logged).not.toContain(TOKEN);
      expect(logged).not.toMatch(/guess-|kept-/);
    } finally {
      await at.close();
    }
  });

  it('names an IPv6 address kept at 429 by its /64, as the throttle counts it', async () => {
    const warnings: { fields: Record<string, unknown>; message: string }[] = [];
    const logger = { debug: () => {}, info: () => {}, error: () => {}, warn: (fields: object, message?: string) => void warnings.push({ fields: fields as Record<string, unknown>, message: message ?? '' }) };
    const at = await startSeededConsole({ logger, host: '::1', now: () => STILL });
    const { port } = new URL(at.url);
    // A bare POST over IPv6 loopback (curl, a script): counted like the form.
    const post = (token: string) =>
      new Promise<number>((resolve, reject) => {
        const body = new URLSearchParams({ token }).toString();
        const req = request({ host: '::1', port, method: 'POST', path: '/login', headers: { host: `[::1]:${port}`, 'content-type': 'application/x-www-form-urlencoded' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      for (let i = 0; i < 10; i++) expect(await post(`guess-${i}-0123456789`)).toBe(401);
      for (let i = 0; i < 3; i++) expect(await post(TOKEN)).toBe(429);
      expect(warnings.filter((w) => w.message !== 'a console login with a wrong token').map((w) => w.fields)).toEqual([{ from: '0:0:0:0::/64', notLogged: 0 }]);
    } finally {
      await at.close();
    }
  });
});
