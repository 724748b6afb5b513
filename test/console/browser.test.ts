import { mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/core/pricing.js';
import { ACCOUNT_KEY } from '../../src/spend/types.js';
import { sumUsage, usageByKey } from '../../src/spend/usage-totals.js';
import { CHROMIUM_ARGS, findChromium, startSeededConsole, TOKEN, XSS_PROMPT, type ConsoleUnderTest } from './console-harness.js';

/**
 * The console in a real browser: Debian's Chromium, headless, driven by
 * playwright-core. Without Chromium on PATH the file is skipped with one line,
 * except in CI (CI=true), where it fails: CI installs it (.ci/run).
 *
 * With PICTOR_CONSOLE_SCREENSHOTS=<folder> the pages' screenshots are written
 * there (docs/console/ holds the ones docs/console.md shows).
 */
const executablePath = findChromium();
const inCi = process.env.CI === 'true';
if (!executablePath && !inCi) console.log('console browser tests skipped: no chromium on PATH (apt-get install chromium)');

const DAY = 24 * 60 * 60_000;
const shotsDir = process.env.PICTOR_CONSOLE_SCREENSHOTS;

describe.runIf(!executablePath && inCi)('the console in a browser (CI)', () => {
  it('needs Chromium on PATH: .ci/run installs Debian’s chromium', () => {
    expect.fail('no chromium on PATH in CI');
  });
});

describe.skipIf(!executablePath)('the console in a real browser', () => {
  let browser: Browser;
  let consoleUnderTest: ConsoleUnderTest;
  let context: BrowserContext;
  let page: Page;
  /** Errors the page logged (a Content-Security-Policy violation is one) and dialogs it opened: none is expected. */
  const problems: string[] = [];

  beforeAll(async () => {
    consoleUnderTest = await startSeededConsole();
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (message) => {
      // The login answers a wrong token with 401 (the first test gives one on purpose).
      if (message.type() === 'error' && !new URL(message.location().url || 'http://x/').pathname.startsWith('/login')) problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('dialog', (dialog) => {
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    if (shotsDir) await mkdir(shotsDir, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await consoleUnderTest?.close();
  });

  const shot = async (name: string) => {
    if (shotsDir) await page.screenshot({ path: join(shotsDir, `${name}.png`), fullPage: true });
  };
  const figure = async (name: string) => {
    const element = page.locator(`[data-figure="${name}"]`);
    return { text: (await element.textContent())?.trim(), value: Number(await element.getAttribute('value')) };
  };

  it('sends a page without a session to the login, and the login with the token back to it', async () => {
    await page.goto(`${consoleUnderTest.url}/jobs?surface=discord`);
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/jobs?surface=discord');
    await shot('login');
    await page.fill('#token', 'not-the-token-at-all');
    await page.click('button[type=submit]');
    await expect.poll(() => page.locator('.problem').textContent()).toContain('not the console’s token');
    await page.fill('#token', TOKEN);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/jobs\?surface=discord$/);
    const cookie = (await context.cookies()).find((c) => c.name === 'pictor_console')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  });

  it('ends a login on the console, whatever `next` a link to the login carried (a browser reads `/<tab>/host` as another host)', async () => {
    const evil = createServer((_req, res) => res.end('a page elsewhere'));
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    const own = await browser.newContext();
    try {
      const elsewhere = `127.0.0.1:${(evil.address() as AddressInfo).port}`;
      const tab = await own.newPage();
      for (const next of [`/\t/${elsewhere}/enter-your-token-again`, `/\\${elsewhere}/x`, `/.//${elsewhere}/x`]) {
        await tab.goto(`${consoleUnderTest.url}/login?next=${encodeURIComponent(next)}`);
        await tab.fill('#token', TOKEN);
        // Chromium reads a redirect to `/\t/host` as that host; the page's CSP (form-action 'self') then blocks it, and
        // the owner is left on the login page (without the CSP: on the other host's page).
        const [ended] = await Promise.all([
          tab.waitForURL(`${consoleUnderTest.url}/spend`).then(
            () => 'the console’s /spend',
            (error: Error) => `not the console’s page: ${error.message.split('\n')[0]}`,
          ),
          tab.click('button[type=submit]'),
        ]);
        expect(ended, next).toBe('the console’s /spend');
      }
    } finally {
      await own.close();
      await new Promise((resolve) => evil.close(resolve));
    }
  });

  it('shows on the spend page the figures of the ledger, for every surface, against every cap', async () => {
    await page.goto(`${consoleUnderTest.url}/spend`);
    const { store } = consoleUnderTest;
    const now = Date.now();
    const startOfToday = Math.floor(now / DAY) * DAY;
    const startOfMonth = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1);
    const today = await store.usage({ since: startOfToday });
    const month = await store.usage({ since: startOfMonth });

    for (const [name, expected] of [
      ['account-day-settled', sumUsage(today, 'd').usd],
      ['account-month-settled', sumUsage(month, 'm').usd],
      ['cap-used:account:account:day', await store.spentToday(ACCOUNT_KEY, now)],
      ['cap-used:account:account:month', await store.spentThisMonth(ACCOUNT_KEY, now)],
      // The account's row reads the ledger, as its cap rows do: one figure, never two.
      ['account-day-used', await store.spentToday(ACCOUNT_KEY, now)],
      ['account-month-used', await store.spentThisMonth(ACCOUNT_KEY, now)],
      ['cap-used:scope:discord:222222222222222222:day', await store.spentToday('discord:222222222222222222', now)],
      ['cap-used:dm:discord:dm:111111111111111113:day', await store.spentToday('discord:dm:111111111111111113', now)],
    ] as const) {
      const shown = await figure(name);
      expect(shown.value, name).toBeCloseTo(expected, 9);
      expect(shown.text, name).toBe(formatUsd(expected));
    }
    expect((await figure('account-day-jobs')).value).toBe(sumUsage(today, 'd').jobs);
    expect((await figure('account-month-images')).value).toBe(sumUsage(month, 'm').images);
    const surfaces = usageByKey(month, (r) => r.surface);
    expect(surfaces.map((s) => s.key).sort()).toEqual(['cli', 'discord', 'n8n', 'slack']);
    for (const s of surfaces) {
      expect((await figure(`surface-month:${s.key}`)).value, s.key).toBeCloseTo(s.usd, 9);
      expect((await figure(`surface-jobs:${s.key}`)).value, s.key).toBe(s.jobs);
    }
    for (const s of usageByKey(today, (r) => r.surface)) expect((await figure(`surface-day:${s.key}`)).value, s.key).toBeCloseTo(s.usd, 9);
    for (const s of usageByKey(month, (r) => r.scopeKey)) expect((await figure(`scope-month:${s.key}`)).value, s.key).toBeCloseTo(s.usd, 9);
    const refusals = Object.entries(await store.refusals(new Date(startOfMonth).toISOString().slice(0, 10))).reduce<Record<string, number>>((all, [, codes]) => {
      for (const [code, n] of Object.entries(codes)) all[code] = (all[code] ?? 0) + n;
      return all;
    }, {});
    for (const [code, n] of Object.entries(refusals)) expect((await figure(`refusals-month:${code}`)).value, code).toBe(n);
    // The cap a chat admin lowered says who set it; a server's name is the bots' (escaped), its key beside it.
    await expect.poll(() => page.locator('tr[data-cap="scope:discord:222222222222222222:day"]').textContent()).toContain('set by discord:999999999999999999 (chat admin)');
    expect(await page.locator('tr[data-cap="scope:discord:222222222222222222:day"] .name').textContent()).toBe('Design team');
    // The charts are drawn (by the console's own script and Chart.js, under the strict CSP).
    await page.waitForFunction("(() => { const c = document.querySelector('#spend-chart'); return c !== null && c.width > 0 && c.getAttribute('style') !== null; })()");
    expect((await figure('images-limit-per-hour')).value).toBe(300);
    await shot('spend');
  });

  it('lists the jobs with thumbnails, and shows the XSS prompt and a hostile name as text', async () => {
    const missing: string[] = [];
    const onResponse = (response: { status(): number; url(): string }) => {
      if (response.status() === 404) missing.push(response.url());
    };
    page.on('response', onResponse);
    await page.goto(`${consoleUnderTest.url}/jobs`);
    const row = page.locator('#recent-jobs tr[data-job="d-2"]');
    expect(await row.locator('td.prompt').textContent()).toBe(XSS_PROMPT);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(await page.locator('#recent-jobs b').count()).toBe(0);
    expect(await page.locator('#recent-jobs tr[data-job="s-1"]').textContent()).toContain('Acme <b>Workspace</b> (slack:T0001)');
    const thumb = page.locator('#recent-jobs tr[data-job="d-1"] img');
    await expect.poll(() => thumb.evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).complete && (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(128);
    // d-2's first image was not kept: one thumbnail, of the job's image 2, and no broken image where its first would be.
    const gapped = page.locator('#recent-jobs tr[data-job="d-2"] img');
    expect(await gapped.count()).toBe(1);
    expect(await gapped.getAttribute('alt')).toMatch(/^Image 2 of the job of /);
    await expect.poll(() => gapped.evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).complete && (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(128);
    page.off('response', onResponse);
    expect(missing).toEqual([]);
    expect(await page.locator('#recent-jobs tr[data-job="c-1"]').textContent()).toContain('completed');
    await shot('jobs');
  });

  it('drops the thumbnail of an image no longer kept (dropped past the bound since the page was made), never a broken image', async () => {
    const before = problems.length;
    await page.route('**/thumbs/d-1/0', (route) => route.fulfill({ status: 404, contentType: 'text/plain; charset=utf-8', body: 'No kept image\n' }));
    try {
      await page.goto(`${consoleUnderTest.url}/jobs`);
      const images = page.locator('#recent-jobs tr[data-job="d-1"] td').last();
      await expect.poll(() => images.textContent()).toBe('—');
      expect(await images.locator('img').count()).toBe(0);
      // d-2's kept image is still drawn.
      expect(await page.locator('#recent-jobs tr[data-job="d-2"] img').count()).toBe(1);
    } finally {
      await page.unroute('**/thumbs/d-1/0');
    }
    // The one error the page logged is the browser's own line for the 404 it was answered on purpose.
    const logged = problems.splice(before);
    expect(logged.every((line) => line.includes('404'))).toBe(true);
  });

  it('shows a job the moment it is reserved, as it is sent, and among the recent ones when it ends, without a reload', async () => {
    await page.goto(`${consoleUnderTest.url}/jobs`);
    await page.waitForSelector('#live[data-connected="true"]');
    await page.evaluate('window.stillThisPage = true');
    const { store } = consoleUnderTest;
    const job = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low', prompt: 'a live one' };
    expect(await store.reserve({ jobId: 'live-1', userKey: 'slack:U0009', scopeKey: 'slack:T0001', estimateUsd: 0.02, limits: {}, now: Date.now(), job })).toEqual({ ok: true });
    const live = page.locator('#live-jobs tr[data-job="live-1"]');
    await live.waitFor();
    expect(await live.textContent()).toContain('queued');
    await store.markSent('live-1');
    await expect.poll(() => live.textContent()).toContain('in flight');
    await store.settle('live-1', 0.011, { outcome: 'completed', images: 1 });
    await page.locator('#recent-jobs tr[data-job="live-1"]').waitFor();
    await live.waitFor({ state: 'detached' });
    expect(await page.locator('#recent-jobs tr[data-job="live-1"]').textContent()).toContain('a live one');
    // Its first image was not kept (the harness's bots): the row the page wrote itself shows only the job's image 2.
    const thumbs = page.locator('#recent-jobs tr[data-job="live-1"] img');
    expect(await thumbs.count()).toBe(1);
    expect(await thumbs.getAttribute('src')).toBe('/thumbs/live-1/1');
    expect(await thumbs.getAttribute('alt')).toMatch(/^Image 2 of the job of /);
    await expect.poll(() => thumbs.evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).complete && (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(128);
    expect(await page.evaluate('window.stillThisPage')).toBe(true);
  });

  it('refuses a change without the CSRF token, and makes it with it', async () => {
    await page.goto(`${consoleUnderTest.url}/settings`);
    const refused = await page.request.post(`${consoleUnderTest.url}/alerts/rules`, { form: { thresholds: '10', breaker: '1' }, maxRedirects: 0 });
    expect(refused.status()).toBe(403);
    // The seeded account spent past half its daily cap (so did a user): the alerts went to the webhook, and the page lists them.
    await consoleUnderTest.console.watcher!.check();
    expect(consoleUnderTest.alerts).toContainEqual(expect.objectContaining({ kind: 'cap', cap: expect.objectContaining({ owner: 'account', period: 'day', threshold: 50 }) }));
    await page.goto(`${consoleUnderTest.url}/alerts`);
    expect(await page.locator('[data-alert]').count()).toBe(consoleUnderTest.alerts.length);
    await page.fill('#thresholds', '25, 75, 100');
    await page.click('form.rules button[type=submit]');
    await page.waitForURL(/\/alerts$/);
    expect(await page.locator('[role=status]').textContent()).toBe('The alert rules are saved.');
    expect(await page.locator('#thresholds').inputValue()).toBe('25, 75, 100');
    await shot('alerts');
  });

  it('resumes a paused server from the caps and settings page', async () => {
    const { store } = consoleUnderTest;
    // A paused server, as the breaker leaves it (its history: spend two days ago; then a burst now).
    const now = Date.now();
    const limits = { breaker: { factor: 1, floorUsd: 0.01 } };
    expect(await store.reserve({ jobId: 'burst-1', userKey: 'discord:111111111111111111', scopeKey: 'discord:222222222222222222', estimateUsd: 2, limits, now })).toMatchObject({ code: 'scope_paused', tripped: true });
    await page.goto(`${consoleUnderTest.url}/settings`);
    await shot('settings');
    const row = page.locator('tr[data-paused="discord:222222222222222222"]');
    expect(await row.textContent()).toContain('Design team');
    await row.locator('button').click();
    await page.waitForURL(/\/settings$/);
    expect(await page.locator('[data-notice]').getAttribute('data-notice')).toBe('resumed');
    expect(await page.locator('tr[data-paused]').count()).toBe(0);
    expect((await store.breakerStates())['discord:222222222222222222']).toMatchObject({ resumedBy: 'console' });
  });

  it('finds no serious accessibility problem on any page (axe-core)', async () => {
    const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    for (const path of ['/spend', '/jobs', '/settings', '/alerts']) {
      await page.goto(`${consoleUnderTest.url}${path}`);
      // Through the DevTools protocol (not a script tag): the page's CSP allows no script but its own.
      await page.evaluate(axeSource);
      const violations = (await page.evaluate(
        "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))",
      )) as { id: string; impact: string; help: string; nodes: number }[];
      expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), path).toEqual([]);
    }
  });

  it('logged no error and opened no dialog on any page (no CSP violation, no script from the prompt)', () => {
    expect(problems).toEqual([]);
  });

  it('logs out, and the pages ask for the login again', async () => {
    await page.goto(`${consoleUnderTest.url}/spend`);
    await page.click('form.logout button');
    await page.waitForURL(/\/login$/);
    await page.goto(`${consoleUnderTest.url}/alerts`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });
});
