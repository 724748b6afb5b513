import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { FileAlertLog } from '../../src/console/alerts/alert-log.js';
import { startConsole, type BotsView } from '../../src/console/index.js';
import { CONTENT_SECURITY_POLICY, LEDGER_WAIT_MS } from '../../src/console/server.js';
import { silentLogger } from '../../src/internal.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import type { CapOverrides } from '../../src/spend/types.js';
import { loginCookie, NO_ALERTS, NO_DEAD_PROCESSES, seedLedger, startSeededConsole, TOKEN, type ConsoleUnderTest } from './console-harness.js';
import { spyOnInstance } from '../helpers/instance-spy.js';

/** The console's HTTP rules, asked as a client would (the browser test drives the same through Chromium). */
describe('the console’s server', () => {
  let c: ConsoleUnderTest;
  let readOnly: ConsoleUnderTest;
  beforeAll(async () => {
    c = await startSeededConsole();
    readOnly = await startSeededConsole({ allowChanges: false });
  });
  afterAll(async () => {
    await c?.close();
    await readOnly?.close();
  });

  const login = async (at: ConsoleUnderTest) => {
    const res = await fetch(`${at.url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN, next: '/settings' }), redirect: 'manual', headers: { origin: at.url } });
    expect(res.status).toBe(303);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^pictor_console=[\w-]{40,}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200$/);
    const session = cookie.split(';')[0]!;
    const page = await (await fetch(`${at.url}/settings`, { headers: { cookie: session } })).text();
    return { cookie: session, csrf: /name="_csrf" value="([^"]+)"/.exec(page)![1]! };
  };

  it('answers every page with the strict CSP and no inline script, and never shows the token', async () => {
    const { cookie } = await login(c);
    for (const path of ['/spend', '/spend?days=90', '/jobs', '/settings', '/alerts', '/login']) {
      const res = await fetch(`${c.url}${path}`, { headers: { cookie } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      const body = await res.text();
      expect(body).not.toContain(TOKEN);
      // Every script is a file of the console's; the only inline <script> holds JSON data.
      for (const tag of body.match(/<script[^>]*>/g) ?? []) expect(tag, path).toMatch(/src="\/assets\/[\w.]+\.js"|type="application\/json"/);
      expect(body).not.toMatch(/\son[a-z]+="/);
      expect(body).not.toMatch(/style="/);
    }
  });

  it('shows on the settings page each chat setting that cannot be read, and what it means for the scope’s jobs', async () => {
    const { cookie } = await login(c);
    const body = await (await fetch(`${c.url}/settings`, { headers: { cookie } })).text();
    const row = (name: string) => new RegExp(`<tr data-unreadable="discord:222222222222222222:${name}">(.*?)</tr>`, 's').exec(body)?.[1];
    expect(row('blocked')).toContain('<td>blocked</td><td>cannot be read — jobs refused');
    expect(row('defaultSize')).toContain('<td>defaultSize</td><td>cannot be read — default applies');
    expect(row('roleBudgets')).toContain('<td>roleBudgets</td><td>cannot be read — members may spend nothing until an admin sets them again');
    expect(body).toContain('<td>channels</td><td><code>[&quot;333333333333333333&quot;]</code></td>');
  });

  it('says on the settings page that the chat settings could not be read when their read fails, never an empty table', async () => {
    const failing = await startSeededConsole({ bots: { chatSettings: () => Promise.reject(new Error('Connection is closed.')) } });
    try {
      const { cookie } = await login(failing);
      const res = await fetch(`${failing.url}/settings`, { headers: { cookie } });
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body).toContain('<p data-chat-settings="unreadable">The chat settings could not be read');
      expect(body).not.toContain('Connection is closed');
      expect(body).not.toContain('data-unreadable=');
    } finally {
      await failing.close();
    }
  });

  it('serves its own assets, the chart library among them', async () => {
    for (const [path, type] of [
      ['/assets/console.js', 'text/javascript'],
      ['/assets/console.css', 'text/css'],
      ['/assets/chart.umd.js', 'text/javascript'],
      ['/assets/icon.svg', 'image/svg+xml'],
    ]) {
      const res = await fetch(`${c.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toContain(type!);
    }
    expect((await fetch(`${c.url}/assets/../package.json`)).status).toBe(404);
  });

  it('redirects a page without a session to the login, and answers the rest 401', async () => {
    const page = await fetch(`${c.url}/settings`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/login?next=%2Fsettings');
    expect((await fetch(`${c.url}/events/jobs`)).status).toBe(401);
    expect((await fetch(`${c.url}/thumbs/d-1/0`)).status).toBe(401);
    expect((await fetch(`${c.url}/breaker/resume`, { method: 'POST', body: 'scope=x' })).status).toBe(401);
  });

  it('refuses a change without the CSRF token, from another origin, or on a read-only console', async () => {
    const { cookie, csrf } = await login(c);
    const post = (at: ConsoleUnderTest, form: Record<string, string>, headers: Record<string, string>) =>
      fetch(`${at.url}/alerts/rules`, { method: 'POST', body: new URLSearchParams(form), redirect: 'manual', headers });
    expect((await post(c, { thresholds: '10' }, { cookie })).status).toBe(403);
    expect((await post(c, { thresholds: '10', _csrf: 'a-guess' }, { cookie })).status).toBe(403);
    expect((await post(c, { thresholds: '10', _csrf: csrf }, { cookie, origin: 'http://evil.example' })).status).toBe(403);
    expect((await post(c, { thresholds: 'ten', _csrf: csrf }, { cookie })).status).toBe(400);
    expect((await post(c, { thresholds: '10, 90', _csrf: csrf }, { cookie })).status).toBe(303);
    const other = await login(readOnly);
    const refused = await post(readOnly, { thresholds: '10', _csrf: other.csrf }, { cookie: other.cookie });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('PICTOR_CONSOLE_ALLOW_CHANGES=1');
  });

  it('shows a change’s notice once, on the page the change sends the owner to, and never one written in the address', async () => {
    // A console of its own: the seeded server (spend two days ago) is paused by a burst, then resumed.
    const c = await startSeededConsole();
    onTestFinished(() => c.close());
    const scopeKey = 'discord:222222222222222222';
    const spoof = 'every server. The spend shown below is a test figure and the alerts you got today were sent in error; nothing to do';
    // A link sent to the owner: logged in through it, the owner lands on the page it names, with no notice and none of its words.
    for (const done of ['resumed', 'not-paused', 'rules']) {
      const next = `/settings?done=${done}&scope=${encodeURIComponent(spoof)}`;
      const res = await fetch(`${c.url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN, next }), redirect: 'manual', headers: { origin: c.url } });
      expect(res.headers.get('location')).toBe(next);
      const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
      const body = await (await fetch(`${c.url}${next}`, { headers: { cookie } })).text();
      expect(body, done).not.toContain('class="notice"');
      expect(body, done).not.toContain('test figure');
    }
    // A server the breaker paused, resumed by the owner: its notice shows on the page the change sends to, once.
    const limits = { breaker: { factor: 1, floorUsd: 0.01 } };
    expect(await c.store.reserve({ jobId: 'burst-1', userKey: 'discord:111111111111111111', scopeKey, estimateUsd: 2, limits, now: Date.now() })).toMatchObject({ code: 'scope_paused', tripped: true });
    const { cookie, csrf } = await login(c);
    const resume = (scope: string) => fetch(`${c.url}/breaker/resume`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf, scope }), redirect: 'manual', headers: { cookie, origin: c.url } });
    const resumed = await resume(scopeKey);
    expect(resumed.status).toBe(303);
    const to = resumed.headers.get('location')!;
    expect(to).toBe('/settings');
    const notice = (body: string) => /<p class="notice" role="status" data-notice="([\w-]+)">(.*?)<\/p>/s.exec(body)?.slice(1);
    const first = await (await fetch(`${c.url}${to}`, { headers: { cookie } })).text();
    expect(notice(first)).toEqual(['resumed', expect.stringContaining(scopeKey)]);
    const reload = await (await fetch(`${c.url}${to}`, { headers: { cookie } })).text();
    expect(notice(reload)).toBeUndefined();
    // Another session of the owner's is not told of it; a second resume of the same server is told as nothing changed.
    const other = await login(c);
    expect(notice(await (await fetch(`${c.url}/settings`, { headers: { cookie: other.cookie } })).text())).toBeUndefined();
    const again = await resume(scopeKey);
    expect(again.headers.get('location')).toBe('/settings');
    expect(notice(await (await fetch(`${c.url}/settings`, { headers: { cookie } })).text())?.[0]).toBe('not-paused');
    // The alert rules saved: told on the alerts page, and not on another page opened first.
    const rules = await fetch(`${c.url}/alerts/rules`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf, thresholds: '50, 80, 100', breaker: '1' }), redirect: 'manual', headers: { cookie, origin: c.url } });
    expect(rules.headers.get('location')).toBe('/alerts');
    expect(notice(await (await fetch(`${c.url}/alerts`, { headers: { cookie } })).text())?.[0]).toBe('rules');
    expect(notice(await (await fetch(`${c.url}/alerts`, { headers: { cookie } })).text())).toBeUndefined();
  });

  it('answers only at its own address on loopback (a rebinding page gets nothing)', async () => {
    const { port } = new URL(c.url);
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/login', headers: { host: `evil.example:${port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(421);
  });

  it('lets the owner log in through a TLS proxy at PICTOR_CONSOLE_ORIGIN with a Secure session cookie, whatever Host the proxy passes on, and still refuses a foreign origin', async () => {
    const proxied = await startSeededConsole({ publicOrigin: 'https://pictor.example.com' });
    try {
      const { port } = new URL(proxied.url);
      const loginVia = (host: string, origin: string) => rawRequest(port, { method: 'POST', path: '/login', headers: { host, origin, 'content-type': 'application/x-www-form-urlencoded' } }, new URLSearchParams({ token: TOKEN }).toString());
      // nginx's default: Host rewritten to the upstream's address.
      const upstream = await loginVia(`127.0.0.1:${port}`, 'https://pictor.example.com');
      expect(upstream.status).toBe(303);
      expect(upstream.headers['set-cookie']?.[0]).toMatch(/^pictor_console=/);
      // Opened at https: the browser sends the session cookie over TLS only.
      expect(upstream.headers['set-cookie']?.[0]).toMatch(/; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200; Secure$/);
      // proxy_set_header Host $host (caddy's default): the public host, answered on loopback too.
      const kept = await loginVia('pictor.example.com', 'https://pictor.example.com');
      expect(kept.status).toBe(303);
      const cookie = kept.headers['set-cookie']![0]!.split(';')[0]!;
      expect((await rawRequest(port, { path: '/spend', headers: { host: 'pictor.example.com', cookie } })).status).toBe(200);
      // Anything else is still refused: a foreign origin's form, a rebinding page's Host.
      expect((await loginVia(`127.0.0.1:${port}`, 'https://evil.example')).status).toBe(403);
      expect((await loginVia('pictor.example.com', 'https://evil.example')).status).toBe(403);
      expect((await rawRequest(port, { path: '/login', headers: { host: `evil.example:${port}` } })).status).toBe(421);
    } finally {
      await proxied.close();
    }
  });

  it('answers only its own addresses on any other address too: a page that rebinds its name to it gets 421, its form is not counted against the owner', async () => {
    const open = await startSeededConsole({ host: '0.0.0.0', publicOrigin: 'http://pictor.lan:8788' });
    try {
      const { port } = new URL(open.url);
      const loginVia = (host: string, origin: string, token = TOKEN) =>
        rawRequest(port, { method: 'POST', path: '/login', headers: { host, origin, 'content-type': 'application/x-www-form-urlencoded' } }, new URLSearchParams({ token }).toString());
      // A rebinding page: its Origin and Host agree, and name it.
      for (let i = 0; i < 12; i++) expect((await loginVia(`evil.example:${port}`, `http://evil.example:${port}`, `guess-${i}-0123456789`)).status).toBe(421);
      expect((await rawRequest(port, { path: '/login', headers: { host: `evil.example:${port}` } })).status).toBe(421);
      // None of it counted: the owner, at the same address, logs in at the console's own addresses.
      expect((await loginVia(`127.0.0.1:${port}`, `http://127.0.0.1:${port}`)).status).toBe(303);
      expect((await loginVia('pictor.lan:8788', 'http://pictor.lan:8788')).status).toBe(303);
      // An IP address is not a name a page can rebind: the machine's address on its network is answered.
      expect((await loginVia(`192.0.2.10:${port}`, `http://192.0.2.10:${port}`)).status).toBe(303);
      expect((await loginVia(`[2001:db8::10]:${port}`, `http://[2001:db8::10]:${port}`)).status).toBe(303);
    } finally {
      await open.close();
    }
  });

  it('answers its loopback names at any port, on loopback and off it (a port-forward, a mapped container port, an ssh tunnel), and no other name', async () => {
    const open = await startSeededConsole({ host: '0.0.0.0' });
    try {
      for (const at of [c, open]) {
        const { port } = new URL(at.url);
        const loginVia = (host: string) =>
          rawRequest(port, { method: 'POST', path: '/login', headers: { host, origin: `http://${host}`, 'content-type': 'application/x-www-form-urlencoded' } }, new URLSearchParams({ token: TOKEN }).toString());
        // `docker run -p 9000:8788`, `kubectl port-forward 9000:8788`, `ssh -L 9000:…:8788`: the browser names the forwarded port.
        for (const host of ['localhost:9000', '127.0.0.1:9000', '[::1]:9000', 'LOCALHOST:9000', `pictor.localhost:${port}`, 'localhost']) {
          expect((await rawRequest(port, { path: '/login', headers: { host } })).status, host).toBe(200);
        }
        expect((await loginVia('localhost:9000')).status).toBe(303);
        // A page elsewhere can never be at a loopback name: any other name is refused, at the console's own port too.
        // A name under .localhost only at the console's own port: a resolver that asks DNS for it lets a page be there.
        for (const host of [`evil.example:${port}`, 'evil.example:9000', 'localhost.evil.example:9000', 'localhost:9000.evil.example', 'localhost:notaport', 'user@localhost:9000', 'pictor.localhost:9000']) {
          expect((await rawRequest(port, { path: '/login', headers: { host } })).status, host).toBe(421);
        }
      }
    } finally {
      await open.close();
    }
  });

  it('shows the account’s and servers’ caps and only the 50 fullest members’ of many, says how many are not shown, and finds one by key', async () => {
    const many = await startSeededConsole({
      caps: { userDailyUsd: 100 },
      seed: async (store, now) => {
        for (let i = 0; i < 120; i++) {
          const jobId = `m-${i}`;
          const userKey = `discord:5${String(i).padStart(17, '0')}`;
          expect(await store.reserve({ jobId, userKey, scopeKey: 'discord:444444444444444444', estimateUsd: 0.01 * (i + 1), limits: {}, now })).toEqual({ ok: true });
          await store.markSent(jobId);
          await store.settle(jobId, 0.01 * (i + 1));
        }
      },
    });
    try {
      const { cookie } = await login(many);
      const body = await (await fetch(`${many.url}/spend`, { headers: { cookie } })).text();
      const rows = (page: string, owner: string) => [...page.matchAll(new RegExp(`<tr data-cap="${owner}:([^"]+)"`, 'g'))].map((m) => m[1]!);
      expect(rows(body, 'account')).toEqual(['account:day', 'account:month']);
      expect(rows(body, 'scope').length).toBeGreaterThan(0);
      const members = rows(body, 'user');
      expect(members.length + rows(body, 'dm').length).toBe(50);
      // The fullest first: the member who spent most is shown, the one who spent least is not.
      expect(members).toContain('discord:500000000000000119:day');
      expect(members).not.toContain('discord:500000000000000000:day');
      const hidden = Number(/data-caps-hidden="(\d+)"/.exec(body)![1]);
      expect(hidden).toBeGreaterThanOrEqual(70); // of the 120 and the seeded ledger's chat members
      const found = await (await fetch(`${many.url}/spend?cap=500000000000000000`, { headers: { cookie } })).text();
      expect(rows(found, 'user')).toEqual(['discord:500000000000000000:day']);
      expect(rows(found, 'account')).toEqual(['account:day', 'account:month']);
      // The search is kept in its box, never quoted in the page's own sentence (a link's words are not the console's).
      const words = 'spend shown is a test figure';
      const searched = await (await fetch(`${many.url}/spend?cap=${encodeURIComponent(words)}`, { headers: { cookie } })).text();
      expect(/<p class="more"[^>]*>(.*?)<\/p>/s.exec(searched)![1]).not.toContain(words);
      expect(searched).toContain(`name="cap" type="search" value="${words}"`);
    } finally {
      await many.close();
    }
  });

  it('takes the bots’ kept images only with whether each is still kept, so a cached thumbnail is never served unasked: a view without it fails to compile (the type-check runs this)', () => {
    const indices = async () => new Map<string, number[]>();
    const read = async () => undefined;
    const has = async () => false;
    const whole: BotsView = { images: { indices, read, has } };
    // @ts-expect-error — the images without `has`
    const withoutHas: BotsView = { images: { indices, read } };
    expect([whole, withoutHas]).toHaveLength(2);
  });

  it('serves a kept image’s thumbnail only to a logged-in owner, as WebP', async () => {
    const { cookie } = await login(c);
    const thumb = await fetch(`${c.url}/thumbs/d-1/0`, { headers: { cookie } });
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/webp');
    expect((await fetch(`${c.url}/thumbs/d-2/0`, { headers: { cookie } })).status).toBe(404);
  });

  it('draws a thumbnail only for each image kept, named by its number in the job: a job whose first image was not kept shows its second as image 2', async () => {
    const { cookie } = await login(c);
    const page = await (await fetch(`${c.url}/jobs`, { headers: { cookie } })).text();
    const images = (jobId: string) => [...(new RegExp(`<tr data-job="${jobId}">(.*?)</tr>`).exec(page)?.[1] ?? '').matchAll(/<img src="([^"]+)" alt="([^"]+)"/g)].map(([, src, alt]) => ({ src, alt }));
    // d-2 made two images and its first was not kept (the harness's bots): one thumbnail, for the job's image 2.
    expect(images('d-2')).toEqual([{ src: '/thumbs/d-2/1', alt: expect.stringMatching(/^Image 2 of the job of /) }]);
    expect(images('d-1')).toEqual([{ src: '/thumbs/d-1/0', alt: expect.stringMatching(/^Image 1 of the job of /) }]);
    // Nothing the page asks for answers 404: every thumbnail and every full image it links to is there.
    const asked = [...page.matchAll(/(?:src|href)="(\/thumbs\/[^"]+)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));
    expect(asked).toHaveLength(4);
    for (const path of asked) expect((await fetch(`${c.url}${path}`, { headers: { cookie } })).status, path).toBe(200);
  });
});

/** A request with the headers a client (or a proxy) sets, Host among them (fetch does not let it be set). */
/** A file ledger whose read of the caps' overrides waits for `open()`, counting the reads. */
class SlowFileStore extends FileQuotaStore {
  reads = 0;
  #open!: () => void;
  readonly #gate = new Promise<void>((resolve) => (this.#open = resolve));
  letThrough(): void {
    this.#open();
  }
  override async allCapOverrides(): Promise<Record<string, CapOverrides>> {
    this.reads++;
    await this.#gate;
    return super.allCapOverrides();
  }
}

describe('the console over a file ledger slow to read', () => {
  it('answers 503 "still being read" (not "cannot be reached"), and a reload takes the render under way instead of starting another', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-console-slow-'));
    await seedLedger(dir, Date.now());
    const store = new SlowFileStore({ dir });
    await store.open();
    const running = (await startConsole({
      source: { store, operator: { caps: { accountDailyUsd: 2 }, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' } },
      config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: false },
      alerts: NO_ALERTS,
      ledgerWhere: `the file ledger in ${dir}`,
      logger: silentLogger(),
      tellReconciles: NO_DEAD_PROCESSES,
      // No wait at all: every page not done at once answers 503.
      ledgerWaitMs: 0,
    }))!;
    try {
      const login = await fetch(`${running.url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }), redirect: 'manual', headers: { origin: running.url! } });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      for (let reload = 0; reload < 3; reload++) {
        const res = await fetch(`${running.url}/spend`, { headers: { cookie } });
        expect(res.status).toBe(503);
        const body = await res.text();
        expect(body).toContain('<h1>The ledger is still being read</h1>');
        expect(body).not.toContain('cannot be reached');
      }
      await expect.poll(() => store.reads).toBe(1);
      store.letThrough();
      // The render under way ends; the next reload gets it, without reading the ledger again.
      await expect.poll(async () => (await fetch(`${running.url}/spend`, { headers: { cookie } })).status).toBe(200);
      expect(store.reads).toBe(1);
    } finally {
      await running.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the console after a change, with a page kept for the reload', () => {
  it('shows the page read after the change, not one rendered before it and kept after its 503', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-console-kept-'));
    await seedLedger(dir, Date.now());
    const store = new FileQuotaStore({ dir });
    await store.open();
    // The alerts page's first read of the rules waits until the test lets it go: that page answers 503 and is kept.
    const rules = FileAlertLog.prototype.rules;
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    let held = 0;
    let heldDone = false;
    spyOnInstance(FileAlertLog.prototype, 'rules', (log) => log.path.startsWith(dir)).mockImplementation(async function (this: FileAlertLog) {
      if (held++ > 0) return rules.call(this);
      await gate;
      const answer = await rules.call(this);
      heldDone = true;
      return answer;
    });
    const running = (await startConsole({
      source: { store, operator: { caps: { accountDailyUsd: 2 }, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' } },
      config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: true },
      alerts: NO_ALERTS,
      ledgerWhere: `the file ledger in ${dir}`,
      logger: silentLogger(),
      tellReconciles: NO_DEAD_PROCESSES,
      // No wait at all: a page not done at once answers 503 and is kept for the reload. The change waits as usual.
      ledgerWaitMs: 0,
      backendWaitMs: LEDGER_WAIT_MS,
    }))!;
    try {
      const url = running.url!;
      const login = await fetch(`${url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }), redirect: 'manual', headers: { origin: url } });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      // A page with the session's form token: the reload that takes the render kept after a 503.
      let settings = '';
      await expect.poll(async () => (settings = await (await fetch(`${url}/settings`, { headers: { cookie } })).text())).toContain('name="_csrf"');
      const csrf = /name="_csrf" value="([^"]+)"/.exec(settings)![1]!;
      // Before the change: the page the change will send the owner to answers 503, and its render ends (kept).
      expect((await fetch(`${url}/alerts`, { headers: { cookie } })).status).toBe(503);
      letGo();
      await expect.poll(() => heldDone).toBe(true);
      const change = await fetch(`${url}/alerts/rules`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf, thresholds: '37, 81', breaker: '1' }), redirect: 'manual', headers: { cookie, origin: url } });
      expect(change.status).toBe(303);
      expect(change.headers.get('location')).toBe('/alerts');
      // Every page shown from here on was read after the change.
      const after = async () => {
        const res = await fetch(`${url}/alerts`, { headers: { cookie } });
        return res.status === 200 ? res.text() : undefined;
      };
      let page: string | undefined;
      await expect.poll(async () => (page = await after())).toBeDefined();
      expect(page).toContain('value="37, 81"');
    } finally {
      vi.mocked(FileAlertLog.prototype.rules).mockRestore();
      await running.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

async function rawRequest(port: string, options: { method?: string; path: string; headers: Record<string, string> }, body?: string): Promise<{ status: number; headers: Record<string, string[] | undefined> }> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: options.headers }, (res) => {
      res.resume();
      resolve({ status: res.statusCode!, headers: { 'set-cookie': res.headers['set-cookie'] } });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the console’s reads of the ledger for a page', () => {
  /** The store reads a load of `path` makes, by method, with the alert watcher's check and the index's first read done. */
  async function readsOfLoad(c: ConsoleUnderTest, cookie: string, path: string): Promise<Record<string, number>> {
    const methods = ['activeJobs', 'usageSince', 'reconcile', 'allCapOverrides', 'breakerStates', 'refusals'] as const;
    const spies = methods.map((method) => [method, spyOnInstance(FileQuotaStore.prototype, method, (store: FileQuotaStore, ..._args: unknown[]) => store === c.store)] as const);
    try {
      expect((await fetch(`${c.url}${path}`, { headers: { cookie } })).status).toBe(200);
      return Object.fromEntries(spies.filter(([, spy]) => spy.mock.calls.length > 0).map(([method, spy]) => [method, spy.mock.calls.length]));
    } finally {
      for (const [, spy] of spies) spy.mockRestore();
    }
  }

  it('reads for the settings page the usage records written since and, only to end gone processes’ ones, the reservations: never the list of them the page does not show', async () => {
    const clock = { now: Date.now() };
    const c = await startSeededConsole({ now: () => clock.now });
    try {
      const cookie = await loginCookie(c.url, '/settings');
      await c.console.watcher!.check();
      // A reconcile ran just now (the alert check's): none is due.
      expect(await readsOfLoad(c, cookie, '/settings')).toEqual({ usageSince: 1, allCapOverrides: 1, breakerStates: 1 });
      // One is due: the reservations are read to ask whether any are to end (none is, so no reconcile).
      clock.now += 5_000;
      expect(await readsOfLoad(c, cookie, '/settings')).toEqual({ activeJobs: 1, usageSince: 1, allCapOverrides: 1, breakerStates: 1 });
      // The spend page lists the reservations: it reads them.
      expect(await readsOfLoad(c, cookie, '/spend')).toMatchObject({ activeJobs: 1, usageSince: 1 });
    } finally {
      await c.close();
    }
  });
});
