import { formatUsd } from '../../core/pricing.js';
import { html, type SafeHtml } from '../html.js';
import { percentOf } from '../percent.js';

/** The console's pages, in the order of its menu. */
export const PAGES = [
  { path: '/spend', title: 'Spend' },
  { path: '/jobs', title: 'Jobs' },
  { path: '/settings', title: 'Caps and settings' },
  { path: '/alerts', title: 'Alerts' },
] as const;

export type PagePath = (typeof PAGES)[number]['path'];

/** What a change the owner just made did, said once on the page it sends them to: `code` names it, `text` says it. */
export interface Notice {
  code: 'resumed' | 'not-paused' | 'rules';
  text: string;
}

export interface PageContext {
  /** The session's CSRF token, for the forms of changes and the logout. */
  csrf: string;
  /** `PICTOR_CONSOLE_ALLOW_CHANGES`: forms that change something are shown (else the page says how to allow them). */
  allowChanges: boolean;
  /** Which ledger the console reads. */
  ledger: 'account' | 'emulator';
  /** Where it is kept, in words ("the file ledger in /var/lib/pictor", "Redis, prefix pictor"). */
  ledgerWhere: string;
  now: number;
  /** A one-line notice of a change this session just made (kept with the session, never read from the address), shown at the top. */
  notice?: Notice | undefined;
  /** A warning about what the page shows, on every page (no ledger found where the console reads it). */
  warning?: string | undefined;
}

/**
 * A page of the console: the menu, the logout, and `main`. `charts` loads the chart library (deferred). The console's
 * own script is not deferred: it runs in the head, before any thumbnail of the body can fail to load, so it listens
 * for each failure (its work on the page waits for the document); it is small, and kept by the browser five minutes.
 */
export function page(path: PagePath, context: PageContext, main: SafeHtml, options: { charts?: boolean; title?: string } = {}): SafeHtml {
  const title = options.title ?? PAGES.find((p) => p.path === path)!.title;
  return html`${head(title)}
${options.charts ? html`<script src="/assets/chart.umd.js" defer></script>` : ''}
<script src="/assets/console.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<header class="top">
<p class="brand">Pictor console</p>
<nav aria-label="Console pages"><ul>
${PAGES.map((p) => html`<li><a href="${p.path}"${p.path === path ? html` aria-current="page"` : ''}>${p.title}</a></li>`)}
</ul></nav>
<form method="post" action="/logout" class="logout"><input type="hidden" name="_csrf" value="${context.csrf}"><button type="submit">Log out</button></form>
</header>
<main id="main">
<h1>${title}</h1>
${context.ledger === 'emulator' ? html`<p class="note" role="note">This is the embedded emulator’s ledger: its jobs cost nothing. Set PICTOR_BASE_URL to see the account’s.</p>` : ''}
${context.warning ? html`<p class="problem" role="alert" data-warning="ledger">${context.warning}</p>` : ''}
${context.notice ? html`<p class="notice" role="status" data-notice="${context.notice.code}">${context.notice.text}</p>` : ''}
${main}
</main>
<footer><p>From ${context.ledgerWhere}, at ${utcTime(context.now)}. Days and months are UTC, as the caps count them. ${context.allowChanges ? 'Changes are allowed (PICTOR_CONSOLE_ALLOW_CHANGES=1).' : 'Read-only: set PICTOR_CONSOLE_ALLOW_CHANGES=1 to resume servers and change alert rules here.'}</p></footer>
</body>
</html>
`;
}

/** The start of every page of the console, up to its scripts: the document, its title, icon and style sheet. */
export function head(title: string): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · Pictor console</title>
<link rel="icon" href="/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/console.css">`;
}

/** A time as `2030-06-15 14:05 UTC`. */
export function utcTime(at: number): string {
  const iso = new Date(at).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** An amount as shown (`formatUsd`), with its exact value for machines (`data-usd`). */
export function usd(amount: number, figure?: string): SafeHtml {
  return html`<data value="${amount}" data-usd="${amount}"${figure ? html` data-figure="${figure}"` : ''}>${formatUsd(amount)}</data>`;
}

/** A count, with its value for machines. */
export function count(n: number, figure?: string): SafeHtml {
  return html`<data value="${n}"${figure ? html` data-figure="${figure}"` : ''}>${n.toLocaleString('en-US')}</data>`;
}

/** A cap's share for people: "82 %", rounded down as the alerts say it (`percentOf`). */
export function percent(ratio: number): string {
  return Number.isFinite(ratio) ? `${percentOf(ratio)} %` : '∞';
}
