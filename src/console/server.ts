import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { isChatScopeKey } from '../spend/caps.js';
import type { LoggerLike } from '../client/PictorClient.js';
import { listenOn } from '../core/listen.js';
import { describeDuration } from '../core/describe-duration.js';
import { LATE, within } from '../core/with-timeout.js';
import { formatUsd } from '../core/pricing.js';
import { SPEND_CAP_VARIABLES } from '../spend/caps.js';
import type { UsageRecord } from '../spend/types.js';
import { utcMonth } from '../spend/utc-period.js';
import { FileQuotaStore } from '../spend/FileQuotaStore.js';
import type { AlertLog } from './alerts/alert-log.js';
import { parseThresholds, type AlertConfig } from './alerts/config.js';
import { loadAssets } from './assets.js';
import { clientOf, OncePerMinute, sameSecret, Sessions } from './auth.js';
import { isLoopbackHost, type ConsoleConfig } from './config.js';
import { capsShown, roleBudgetsOf, spendFigures } from './figures.js';
import type { LedgerNow } from './ledger-now.js';
import type { SafeHtml } from './html.js';
import { LiveJobs } from './live-jobs.js';
import { alertsPage } from './pages/alerts.js';
import { filterOf, jobRow, jobsPage, liveRow, matchesFilter, MAX_THUMBS, type JobFilter } from './pages/jobs.js';
import type { Notice, PageContext } from './pages/layout.js';
import { loginPage } from './pages/login.js';
import { ledgerWaitPage } from './pages/unreachable.js';
import { settingsPage } from './pages/settings.js';
import { spendPage } from './pages/spend.js';
import type { ConsoleSource, SettingRow } from './source.js';
import { Thumbnails } from './thumbnails.js';
import type { UsageIndex } from './usage-index.js';

export interface ConsoleServerOptions {
  source: ConsoleSource;
  config: ConsoleConfig;
  /** The token to log in with: `PICTOR_CONSOLE_TOKEN`, or one made at start. */
  token: string;
  /** The token was made at start (the login page says where to find it). */
  generatedToken: boolean;
  index: UsageIndex;
  alerts: { config: AlertConfig; log: AlertLog; channels: string[]; poke(): void };
  /** "the file ledger in …", "Redis (prefix …)". */
  ledgerWhere: string;
  logger: LoggerLike;
  now?: (() => number) | undefined;
  /** How often the jobs page's live part reads the ledger. Default 1 s. */
  liveIntervalMs?: number | undefined;
  /**
   * The ledger's reservations with those of gone processes ended, shared with the alerts: the one `startConsole` makes,
   * whose usage index the store tells of each step that ended them (no default: one made here would never be told).
   */
  ledgerNow: LedgerNow;
  /** How long a page waits for the ledger before it answers 503 (`startConsole` reads it once: `LEDGER_WAIT_MS` unless set). */
  ledgerWaitMs: number;
  /**
   * How long a change, the live stream's reads, a name and a thumbnail wait before they answer 503 (or end, or go
   * without): the one backend wait `startConsole` reads once and gives the usage records' read and the alerts too.
   */
  backendWaitMs: number;
  /**
   * Said on every page while it holds (the file ledger's folder has no ledger in it: likely not the folder the bots or
   * n8n write); undefined once it is fine.
   */
  ledgerWarning?: (() => string | undefined) | undefined;
}

export interface ConsoleServer {
  /** `http://host:port`, as it listens. */
  url: string;
  close(): Promise<void>;
}

/**
 * The Content-Security-Policy of every answer: the console's own script and
 * styles only (no inline script, no inline style, nothing from elsewhere),
 * images from itself, no framing, forms only to itself.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const MAX_FORM_BYTES = 8 * 1024;
/**
 * How long a page waits for the ledger's reads (Redis unreachable: its commands wait for the connection to come back)
 * before it answers 503, "the ledger cannot be reached"; the next page asks again.
 */
export const LEDGER_WAIT_MS = 5_000;
/** The members' and DM users' cap rows the spend page shows (the fullest first); the account's and scopes' are all shown. */
export const MEMBER_CAP_ROWS = 50;
/** How long a page done after its 503 is kept for the reload that takes it. */
const RENDER_KEPT_MS = 60_000;
/** At most this many renders kept at once (a page beyond renders on its own). */
const MAX_RENDERS_KEPT = 50;
const PAGE_PATHS = new Set(['/spend', '/jobs', '/settings', '/alerts']);

/**
 * The console's HTTP server (node:http). Every page needs a session (a login
 * with the token); without one a page answers with a redirect to the login,
 * anything else with 401. Every change is a POST carrying the session's CSRF
 * token, from this origin, and only with `PICTOR_CONSOLE_ALLOW_CHANGES=1`.
 */
export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const { source, config, index, logger } = options;
  // A file ledger that is slow is being read, not out of reach: its 503 says so.
  const fileLedger = source.store instanceof FileQuotaStore;
  /** The renders of pages under way, or done after their page answered 503 (kept for the reload): one per session and page. */
  const renders = new Map<string, Promise<SafeHtml>>();
  const now = options.now ?? Date.now;
  const sessions = new Sessions(options.token, now);
  /** Wrong tokens are warned of once a minute per address, and once a minute for the login link (null). */
  const wrongTokens = new OncePerMinute<string | null>(now);
  /** An address kept at 429 is warned of once a minute, keyed as the throttle counts it (an IPv6 one by its /64). */
  const throttledLogins = new OncePerMinute<string>(now);
  const assets = loadAssets();
  const thumbnails = new Thumbnails(source.bots);
  const { ledgerWaitMs, backendWaitMs } = options;
  const { ledgerNow } = options;
  const loopback = isLoopbackHost(config.host);
  const live = new LiveJobs({ ledger: ledgerNow, index, intervalMs: options.liveIntervalMs, readWaitMs: backendWaitMs, onError: (err) => logger.warn({ err }, 'the console could not read the live jobs') });
  // The address the owner opens the console at through its proxy: its Host and its forms' Origin are the console's own.
  const publicOrigin = config.publicOrigin;
  const publicHost = publicOrigin === undefined ? undefined : new URL(publicOrigin).host;
  // Opened at an https: address: the session cookie is sent over TLS only.
  const cookieOptions = { secure: publicOrigin?.startsWith('https:') === true };
  let allowedHosts: Set<string> = new Set(publicHost === undefined ? [] : [publicHost]);
  const own = { port: undefined as number | undefined };

  /**
   * The console's own names: its listen address and its public origin; `localhost` and a loopback address (127.0.0.1,
   * [::1]) at any port, as a port-forward, a mapped container port or an ssh tunnel passes on (a page elsewhere can
   * never be at one); a name under `.localhost` at the console's own port only (a resolver that asks DNS for such a
   * name lets a page elsewhere be at it); off loopback any IP address too.
   */
  const answersAt = (host: string | undefined): boolean => {
    const asked = (host ?? '').toLowerCase();
    if (allowedHosts.has(asked)) return true;
    const name = hostNameOf(asked);
    if (name === undefined) return false;
    if (isLoopbackHost(name)) return !name.endsWith('.localhost') || asked === `${name}:${own.port}`;
    return !loopback && isIP(name.replace(/^\[|\]$/g, '')) !== 0;
  };

  const names = async (keys: Iterable<string>): Promise<ReadonlyMap<string, string>> => {
    const list = [...new Set(keys)];
    if (list.length === 0 || !source.bots?.names) return new Map();
    return source.bots.names(list).catch(() => new Map());
  };

  /** `names`, given the backends' wait: past it, none (the keys are shown). */
  const namesWithin = async (keys: Iterable<string>): Promise<ReadonlyMap<string, string>> => {
    const named = await within(names(keys), backendWaitMs);
    return named === LATE ? new Map() : named;
  };

  const context = (csrf: string, notice?: Notice): PageContext => ({
    csrf,
    allowChanges: config.allowChanges,
    ledger: source.operator.ledger,
    ledgerWhere: options.ledgerWhere,
    now: now(),
    notice,
    warning: options.ledgerWarning?.(),
  });

  /**
   * A change or a thumbnail that had no answer within the wait: 503 and a line in the log. A change may still be made
   * (`afterChange` logs it then); one that fails later is logged too, with its error (the logger hides its secrets), so the
   * owner who was told "reload to see" can find why it was not made.
   */
  function tooLate(res: ServerResponse, path: string, what: string, change?: Promise<unknown>): void {
    logger.warn({ path, waitedMs: backendWaitMs, ledger: options.ledgerWhere }, `the console had no answer from ${what} in time: answered 503`);
    change?.catch((error: unknown) =>
      logger.warn({ path, ledger: options.ledgerWhere, err: error }, `a change the console answered 503 for failed later: ${what} did not make it`),
    );
    res.setHeader('retry-after', '5');
    send(res, 503, 'text/plain; charset=utf-8', `No answer from ${what} within ${describeDuration(backendWaitMs)}: try again in a moment${what === 'the kept images' ? '' : ' (reload the page to see whether the change was made)'}.\n`);
  }

  async function renderPage(path: string, query: URLSearchParams, csrf: string, notice: Notice | undefined): Promise<SafeHtml> {
    const ctx = context(csrf, notice);
    const { store } = source;
    switch (path) {
      case '/spend': {
        const chartDays = query.get('days') === '90' ? 90 : 30;
        const active = await ledgerNow.read();
        const [overrides, refusals, roleBudgets] = await Promise.all([store.allCapOverrides(), store.refusals(`${utcMonth(ctx.now)}-01`), roleBudgetsOf(source, logger)]);
        const figures = await spendFigures({ index, operator: source.operator, active, overrides, refusals, now: ctx.now, chartDays, ledger: store, roleBudgets });
        const caps = capsShown(figures.caps, { members: MEMBER_CAP_ROWS, key: query.get('cap') ?? undefined });
        const keys = [...caps.rows.flatMap((c) => (c.scopeKey === undefined ? [c.key] : [c.key, c.scopeKey])), ...figures.byScope.map((r) => r.key), ...figures.byUser.map((r) => r.key)];
        return spendPage(ctx, { ...figures, caps: caps.rows }, await names(keys), chartDays, caps);
      }
      case '/jobs': {
        const filter = filterOf(query);
        const active = (await ledgerNow.read()).filter((j) => matchesFilter(filter, j));
        const recent = index.recent((r) => matchesFilter(filter, r), 100).sort((a, b) => b.time - a.time);
        const [named, kept] = await Promise.all([names(keysOf(recent, active)), keptIndices(recent)]);
        return jobsPage(
          ctx,
          filter,
          active.map((j) => liveRow(j, named)),
          recent.map((r) => jobRow(r, named, kept.get(r.jobId) ?? [])),
          recent.some((r) => r.prompt !== undefined),
        );
      }
      case '/settings': {
        // The scopes listed come from the usage records too: read in the same order as every page, without the reservations it does not show.
        await ledgerNow.records();
        const [breaker, overrides] = await Promise.all([store.breakerStates(), store.allCapOverrides()]);
        const scopes = [...new Set([...Object.keys(overrides), ...index.period(utcMonth(ctx.now)).scopes.keys()])].filter(isChatScopeKey);
        // A failed read (Redis down mid-scan) is said as such: an empty table would hide the scopes whose jobs are refused.
        const chatSettings = source.bots?.chatSettings
          ? await source.bots.chatSettings(scopes).catch((err: unknown) => {
              logger.warn({ err }, 'the console could not read the chat settings');
              return 'unreadable' as const;
            })
          : {};
        const keys = [...Object.keys(breaker), ...Object.keys(overrides), ...(chatSettings === 'unreadable' ? [] : Object.keys(chatSettings))];
        for (const caps of Object.values(overrides)) for (const o of Object.values(caps)) keys.push(o.by);
        return settingsPage(ctx, {
          operator: operatorRows(source, options.alerts.config),
          bots: source.bots?.settings?.() ?? [],
          breaker,
          breakerOn: source.operator.breaker !== undefined,
          overrides,
          chatSettings,
          names: await names(keys),
        });
      }
      default: {
        const rules = await options.alerts.log.rules();
        return alertsPage(ctx, {
          thresholds: rules?.thresholds ?? options.alerts.config.thresholds,
          breaker: rules?.breaker ?? options.alerts.config.breaker,
          chosen: rules && { by: rules.by, at: rules.at },
          channels: options.alerts.channels,
          checkMs: options.alerts.config.checkMs,
          recent: await options.alerts.log.recent(50),
        });
      }
    }
  }

  async function keptIndices(records: readonly UsageRecord[]): Promise<ReadonlyMap<string, readonly number[]>> {
    if (!source.bots?.images || records.length === 0) return new Map();
    return source.bots.images.indices(records.map((r) => r.jobId), MAX_THUMBS).catch(() => new Map());
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    secure(res);
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    // Only the console's own names are answered: a page elsewhere rebinding its name to the console's address gets
    // nothing (and its forms, whose Origin would match that Host, are not counted against the owner's address). A
    // loopback name is answered at any port (forwarded ports), and off loopback an IP address too: neither is a name a
    // page can rebind.
    if (!answersAt(req.headers.host)) return send(res, 421, 'text/plain; charset=utf-8', 'This console answers only at its own address.\n');

    if (path.startsWith('/assets/') && (method === 'GET' || method === 'HEAD')) {
      const asset = assets.get(path.slice('/assets/'.length));
      if (!asset) return send(res, 404, 'text/plain; charset=utf-8', 'Not found\n');
      res.writeHead(200, { 'content-type': asset.type, 'cache-control': 'private, max-age=300', 'content-length': asset.body.length });
      res.end(method === 'HEAD' ? undefined : asset.body);
      return;
    }
    if (path === '/favicon.ico') return redirect(res, '/assets/icon.svg');

    if (path === '/login') {
      if (method === 'GET') {
        // The link printed at start carries the token made then: it logs in and is dropped from the address.
        const token = url.searchParams.get('token');
        if (token !== null) {
          // Opened from another site (an <img> or a link on a web page): refused, not counted, no token compared.
          const site = req.headers['sec-fetch-site'];
          if (site === 'cross-site' || site === 'same-site') return send(res, 403, 'text/plain; charset=utf-8', 'Refused: open the login link printed at start yourself.\n');
          // PICTOR_CONSOLE_TOKEN lasts: it is taken in the form only, never from an address (proxy logs, history).
          if (!options.generatedToken) {
            return html(res, 400, loginPage({ next: '/spend', problem: 'Type the token into the form: it is not taken from the address.', generatedToken: false }));
          }
          // The token made at start is 32 random bytes: a wrong one is not counted, and the link is never throttled (another's guesses from the owner's address do not shut it).
          return login(res, token, '/spend', options.generatedToken, null, req.socket.remoteAddress ?? '');
        }
        return html(res, 200, loginPage({ next: safeNext(url.searchParams.get('next')), generatedToken: options.generatedToken }));
      }
      if (method === 'POST') {
        if (!sameOrigin(req, publicOrigin)) return send(res, 403, 'text/plain; charset=utf-8', 'Refused: the form did not come from this console.\n');
        const form = await readForm(req);
        if (!form) return send(res, 413, 'text/plain; charset=utf-8', 'Too large\n');
        const address = req.socket.remoteAddress ?? '';
        return login(res, form.get('token') ?? '', safeNext(form.get('next')), options.generatedToken, address, address);
      }
      return notAllowed(res, 'GET, POST');
    }

    const session = sessions.of(req.headers.cookie);
    if (method === 'GET' || method === 'HEAD') {
      if (path === '/') return redirect(res, '/spend');
      if (PAGE_PATHS.has(path)) {
        if (!session) return redirect(res, `/login?next=${encodeURIComponent(path + url.search)}`);
        // The notice of a change this session just made, kept with it: never text from the address.
        const notice = method === 'GET' ? sessions.takeNotice(session.id, path) : undefined;
        return page(res, path, url.searchParams, session.csrf, notice);
      }
      if (path === '/events/jobs') {
        if (!session) return send(res, 401, 'text/plain; charset=utf-8', 'Log in first.\n');
        return events(req, res, filterOf(url.searchParams));
      }
      const thumb = /^\/thumbs\/([A-Za-z0-9_:.-]{1,200})\/(\d{1,2})$/.exec(path);
      if (thumb) {
        if (!session) return send(res, 401, 'text/plain; charset=utf-8', 'Log in first.\n');
        const image = await within(thumbnails.get(decodeURIComponent(thumb[1]!), Number(thumb[2]), url.searchParams.get('full') === '1'), backendWaitMs);
        if (image === LATE) return tooLate(res, path, 'the kept images');
        if (!image) return send(res, 404, 'text/plain; charset=utf-8', 'No kept image\n');
        res.writeHead(200, { 'content-type': image.type, 'cache-control': 'private, max-age=3600', 'content-length': image.data.length });
        res.end(method === 'HEAD' ? undefined : image.data);
        return;
      }
      return send(res, 404, 'text/plain; charset=utf-8', 'Not found\n');
    }
    if (method !== 'POST') return notAllowed(res, 'GET, POST');

    // A change: a session, this origin, its CSRF token, and changes allowed.
    if (!session) return send(res, 401, 'text/plain; charset=utf-8', 'Log in first.\n');
    if (!sameOrigin(req, publicOrigin)) return send(res, 403, 'text/plain; charset=utf-8', 'Refused: the form did not come from this console.\n');
    const form = await readForm(req);
    if (!form) return send(res, 413, 'text/plain; charset=utf-8', 'Too large\n');
    if (!sameSecret(form.get('_csrf') ?? '', session.csrf)) {
      logger.warn({ path }, 'the console refused a change without its CSRF token');
      return send(res, 403, 'text/plain; charset=utf-8', 'Refused: this form is missing its security token (reload the page and try again).\n');
    }
    if (path === '/logout') {
      sessions.logout(session.id);
      res.setHeader('set-cookie', Sessions.cookie(undefined, cookieOptions));
      return changed(res, '/login');
    }
    if (!config.allowChanges) return send(res, 403, 'text/plain; charset=utf-8', 'This console is read-only: set PICTOR_CONSOLE_ALLOW_CHANGES=1 to make changes from it.\n');
    if (path === '/breaker/resume') {
      const scopeKey = (form.get('scope') ?? '').trim();
      // What follows the change is done when it is made, answered in time or not (a late one may still be made).
      const resuming = scopeKey
        ? afterChange(source.store.resumeScope(scopeKey, 'console', now()), (before) => {
            if (before) logger.info({ scopeKey, by: 'console', pausedAt: before.pausedAt, pausedUsd: before.pausedUsd, limitUsd: before.limitUsd }, 'the owner resumed a server the breaker had paused');
          })
        : undefined;
      const before = resuming ? await within(resuming, backendWaitMs) : undefined;
      if (before === LATE) return tooLate(res, path, 'the ledger', resuming);
      sessions.tell(session.id, '/settings', before ? { code: 'resumed', text: `Resumed ${scopeKey}: its jobs are taken again, and its last hour counts from zero.` } : { code: 'not-paused', text: `${scopeKey || 'That scope'} was not paused: nothing changed.` });
      return changed(res, '/settings');
    }
    if (path === '/alerts/rules') {
      const thresholds = parseThresholds(form.get('thresholds') ?? '');
      if (!thresholds) return send(res, 400, 'text/plain; charset=utf-8', 'thresholds must be whole percentages from 1 to 1000, separated by commas (at most 10), e.g. 50, 80, 100.\n');
      const rules = { thresholds, breaker: form.get('breaker') === '1', by: 'console', at: now() };
      const setting = afterChange(options.alerts.log.setRules(rules), () => {
        logger.info({ thresholds: rules.thresholds, breaker: rules.breaker, by: rules.by }, 'the owner changed the alert rules');
        options.alerts.poke();
      });
      if ((await within(setting, backendWaitMs)) === LATE) return tooLate(res, path, 'the alert log', setting);
      sessions.tell(session.id, '/alerts', { code: 'rules', text: 'The alert rules are saved.' });
      return changed(res, '/alerts');
    }
    return send(res, 404, 'text/plain; charset=utf-8', 'Not found\n');
  }

  /**
   * A page, its ledger reads bounded by `ledgerWaitMs`: past it (Redis unreachable, its commands waiting for the
   * connection; a file ledger slow to read) the owner gets 503 and a short page saying so, and the log a line. The
   * render goes on: a reload of the same page (same session, same address) takes it, running or done, instead of
   * starting another; one that failed is asked again. A page with a notice is rendered afresh and never kept: the notice
   * is shown on that answer only (answered 503, it is not shown at all), and the next read of the address is a page
   * without it.
   */
  async function page(res: ServerResponse, path: string, query: URLSearchParams, csrf: string, notice: Notice | undefined): Promise<void> {
    const key = `${csrf} ${path}?${query.toString()}`;
    let rendering = notice === undefined ? renders.get(key) : undefined;
    if (rendering === undefined) {
      const started = renderPage(path, query, csrf, notice);
      rendering = started;
      if (notice === undefined && renders.size < MAX_RENDERS_KEPT) {
        renders.set(key, started);
        started.catch(() => forget(key, started));
      }
    }
    const answer = await within(rendering, ledgerWaitMs);
    if (answer !== LATE) {
      forget(key, rendering);
      return html(res, 200, answer);
    }
    // The reads go on; whatever they end with, this page has answered. Done, the page is kept a while for the reload
    // (not one with a notice: that is never kept).
    const kept = rendering;
    if (notice === undefined) {
      kept.then(
        () => setTimeout(() => forget(key, kept), RENDER_KEPT_MS).unref(),
        () => undefined,
      );
    }
    const reason = fileLedger ? 'slow' : 'unreachable';
    logger.warn(
      { path, waitedMs: ledgerWaitMs, ledger: options.ledgerWhere, reason },
      fileLedger ? 'the console was still reading the file ledger: answered 503, the page is kept for the reload' : 'the console could not reach the ledger in time: answered 503',
    );
    res.setHeader('retry-after', '5');
    return html(res, 503, ledgerWaitPage(reason, options.ledgerWhere, ledgerWaitMs));
  }

  /**
   * A change was made (or a session ended): the renders kept for a reload were read before it, so they are dropped,
   * and the page the owner is sent to (a fixed address, such as /alerts) is read again.
   */
  function changed(res: ServerResponse, location: string): void {
    renders.clear();
    redirect(res, location);
  }

  /**
   * A change, and what follows it once made: the renders kept for a reload (read before it) are dropped, then `done`
   * (its log line, a poke). Run when the change is made, so also for one whose form was answered 503 meanwhile.
   */
  function afterChange<T>(change: Promise<T>, done: (result: T) => void): Promise<T> {
    return change.then((result) => {
      renders.clear();
      done(result);
      return result;
    });
  }

  function forget(key: string, rendering: Promise<SafeHtml>): void {
    if (renders.get(key) === rendering) renders.delete(key);
  }

  /**
   * A login with `token` from the client at `address`; its wrong tokens counted against `from` (null: not counted, the
   * login link). A wrong token is warned of once a minute per address (and once a minute for the link), with how many
   * went unsaid since, so nobody can flood the log. So is a login answered 429 (the address is throttled, the owner too
   * when it is theirs), naming the address as the throttle counts it; a token is never logged.
   */
  function login(res: ServerResponse, token: string, next: string, generated: boolean, from: string | null, address: string): void {
    const session = sessions.login(token, from);
    // The client as the throttle counts it (an IPv6 address by its /64): the warnings are kept once a minute per that client too.
    const client = from === null ? null : clientOf(from);
    if (session === 'throttled') {
      // Only a counted address is throttled (never the login link, `from` null).
      const notLogged = client === null ? undefined : throttledLogins.note(client);
      if (notLogged !== undefined) logger.warn({ from: client, notLogged }, 'a console login answered 429: too many wrong tokens from this address this minute');
      html(res, 429, loginPage({ next, problem: 'Too many wrong tokens came from here this minute: try again in a minute.', generatedToken: generated }));
      return;
    }
    if (!session) {
      const notLogged = wrongTokens.note(client);
      if (notLogged !== undefined) {
        logger.warn(from === null ? { from: address, via: 'the login link', notLogged } : { from, notLogged }, 'a console login with a wrong token');
      }
      html(res, 401, loginPage({ next, problem: 'That is not the console’s token.', generatedToken: generated }));
      return;
    }
    res.setHeader('set-cookie', Sessions.cookie(session.id, cookieOptions));
    redirect(res, next);
  }

  async function events(req: IncomingMessage, res: ServerResponse, filter: JobFilter): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.write('retry: 3000\n\n');
    const write = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    let closed = false;
    req.on('close', () => (closed = true));
    const subscribing = live.subscribe({
      live: (jobs) => {
        const shown = jobs.filter((j) => matchesFilter(filter, j));
        // The names are looked up within the wait; past it the rows go with the keys alone.
        void namesWithin(keysOf([], shown)).then((named) => write('live', shown.map((j) => liveRow(j, named))));
      },
      finished: (records) => {
        const shown = records.filter((r) => matchesFilter(filter, r));
        if (shown.length === 0) return;
        void Promise.all([namesWithin(keysOf(shown, [])), within(keptIndices(shown), backendWaitMs).then((kept) => (kept === LATE ? new Map<string, readonly number[]>() : kept))]).then(([named, kept]) =>
          write('finished', shown.map((r) => jobRow(r, named, kept.get(r.jobId) ?? []))),
        );
      },
    });
    const unsubscribe = await within(subscribing, backendWaitMs);
    if (unsubscribe === LATE) {
      // The ledger did not answer the first read: the stream ends (the page's EventSource asks again in 3 s), and the
      // listener, once the read ends, is let go at once.
      void subscribing.then((late) => late?.(), () => undefined);
      logger.warn({ path: '/events/jobs', waitedMs: backendWaitMs, ledger: options.ledgerWhere }, 'the console could not read the live jobs in time: the live stream was closed');
      res.end('event: unavailable\ndata: "the ledger did not answer in time; trying again"\n\n');
      return;
    }
    if (!unsubscribe) {
      res.end('event: busy\ndata: "too many pages are listening; reload later"\n\n');
      return;
    }
    if (closed) {
      unsubscribe();
      return;
    }
    const heartbeat = setInterval(() => res.write(': still here\n\n'), 15_000).unref();
    req.on('close', () => {
      clearInterval(heartbeat);
      unsubscribe();
    });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error({ err: error, path: (req.url ?? '').split('?')[0] }, 'the console failed to answer');
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'The console could not answer; see the log.\n');
      else res.end();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const listening = await listenOn(server, config.port, config.host);
  const port = listening.port;
  own.port = port;
  allowedHosts = new Set([...allowedHosts, `${listening.host}:${port}`.toLowerCase(), `${config.host}:${port}`.toLowerCase()]);
  return {
    url: listening.url,
    close: () =>
      new Promise<void>((resolve) => {
        live.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The name in a Host header (`name`, `name:port`, `[v6]` or `[v6]:port`, lower case), brackets kept; undefined when it
 * is anything else (a user part, a path, a port that is not a number, an IPv4 address in brackets).
 */
function hostNameOf(host: string): string | undefined {
  const parts = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/.exec(host);
  if (!parts) return undefined;
  const name = parts[1]!;
  return name.startsWith('[') && isIP(name.slice(1, -1)) !== 6 ? undefined : name;
}

/** The headers of every answer: the CSP, no sniffing, no framing, no referrer outside the console (a form's Origin is then this console's), nothing cached. */
function secure(res: ServerResponse): void {
  res.setHeader('content-security-policy', CONTENT_SECURITY_POLICY);
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('referrer-policy', 'same-origin');
  res.setHeader('cross-origin-opener-policy', 'same-origin');
  res.setHeader('cross-origin-resource-policy', 'same-origin');
  res.setHeader('cache-control', 'no-store');
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function html(res: ServerResponse, status: number, page: SafeHtml): void {
  send(res, status, 'text/html; charset=utf-8', page.value);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { location, 'content-length': 0 });
  res.end();
}

function notAllowed(res: ServerResponse, allow: string): void {
  res.setHeader('allow', allow);
  send(res, 405, 'text/plain; charset=utf-8', 'Method not allowed\n');
}

/**
 * A POST from a page of this console: its Origin (or, without one, its Referer) names the host it was sent to, or is
 * the console's public origin (`PICTOR_CONSOLE_ORIGIN`: behind a proxy that passes on a Host of its own).
 */
function sameOrigin(req: IncomingMessage, publicOrigin: string | undefined): boolean {
  const from = req.headers.origin ?? req.headers.referer;
  if (from === undefined) return true; // not a browser's cross-site form: browsers send Origin with every POST
  try {
    const url = new URL(from);
    if (publicOrigin !== undefined && url.origin.toLowerCase() === publicOrigin) return true;
    return url.host.toLowerCase() === (req.headers.host ?? '').toLowerCase();
  } catch {
    return false;
  }
}

/** A form body (application/x-www-form-urlencoded), at most 8 KiB; undefined when larger. */
async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const NEXT_BASE = 'http://console.invalid';

/**
 * Where to go after the login: a page of this console only, else `/spend`. `next` is read as a browser would (the
 * WHATWG URL parser, which drops a tab or newline and reads a backslash as `/`) against the console's own origin, and must
 * stay on it as a path that cannot be read as another host (`//host`), with no control character or backslash, as
 * written or percent-decoded, and no `.` or `..` segment.
 */
function safeNext(next: string | null): string {
  if (!next || !next.startsWith('/') || hostile(next)) return '/spend';
  let decoded: string;
  try {
    decoded = decodeURIComponent(next);
  } catch {
    return '/spend';
  }
  if (hostile(decoded)) return '/spend';
  const url = new URL(next, NEXT_BASE);
  const path = `${url.pathname}${url.search}${url.hash}`;
  return url.origin === NEXT_BASE && path === next ? path : '/spend';
}

/** A control character, a backslash, a path read as a host (`//`), or a `.`/`..` segment. */
function hostile(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u001f\u007f\\]/.test(text) || text.startsWith('//') || /\/\.{1,2}(?:[/?#]|$)/.test(text);
}

function keysOf(records: readonly UsageRecord[], active: readonly { userKey: string; scopeKey: string }[]): string[] {
  return [...records, ...active].flatMap((r) => [r.userKey, r.scopeKey]);
}

/** The operator's caps and limits, each with where it comes from; never a secret. */
function operatorRows(source: ConsoleSource, alerts: AlertConfig): SettingRow[] {
  const { caps, dmCaps, breaker, imagesPerMinute } = source.operator;
  const money = (usd: number | undefined) => (usd === undefined ? 'no cap' : formatUsd(usd));
  const from = (variable: string, set: boolean) => (set ? variable : `${variable} (not set)`);
  const words: Record<string, string> = {
    accountDailyUsd: 'The whole account, per day',
    accountMonthlyUsd: 'The whole account, per month',
    userDailyUsd: 'Each chat user, per day',
    userMonthlyUsd: 'Each chat user, per month',
    scopeDailyUsd: 'Each server/workspace, per day',
    scopeMonthlyUsd: 'Each server/workspace, per month',
  };
  const rows: SettingRow[] = Object.entries(SPEND_CAP_VARIABLES).map(([variable, field]) => ({ name: words[field]!, value: money(caps[field]), source: from(variable, caps[field] !== undefined) }));
  rows.push(
    { name: 'Each DM user, per day', value: money(dmCaps.dailyUsd), source: from('PICTOR_DM_DAILY_USD', dmCaps.dailyUsd !== undefined) },
    { name: 'Each DM user, per month', value: money(dmCaps.monthlyUsd), source: from('PICTOR_DM_MONTHLY_USD', dmCaps.monthlyUsd !== undefined) },
    { name: 'Breaker: times the usual hourly spend', value: breaker ? `${breaker.factor} ×` : 'off', source: from('PICTOR_BREAKER_FACTOR', breaker !== undefined) },
    { name: 'Breaker: never below, an hour', value: breaker ? formatUsd(breaker.floorUsd) : 'off', source: from('PICTOR_BREAKER_FLOOR_USD', breaker !== undefined) },
    { name: 'Images per minute (the account’s limit)', value: imagesPerMinute === undefined ? 'no pacing' : String(imagesPerMinute), source: from('PICTOR_IMAGES_PER_MINUTE', imagesPerMinute !== undefined) },
    { name: 'Alert thresholds', value: alerts.thresholds.map((t) => `${t} %`).join(', '), source: 'PICTOR_ALERT_THRESHOLDS (or the Alerts page)' },
  );
  return rows;
}
