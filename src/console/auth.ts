import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Notice } from './pages/layout.js';

/** The session cookie's name. */
export const SESSION_COOKIE = 'pictor_console';
/** How long a login lasts. */
export const SESSION_MS = 12 * 60 * 60_000;
const MAX_SESSIONS = 200;
/** Wrong tokens one client address may send in a minute before its logins are answered 429 for the rest of it. */
const FAILED_LOGINS_PER_MINUTE = 10;
/** At most this many client addresses counted at once (the most recent kept). */
const MAX_COUNTED_ADDRESSES = 10_000;

interface Session {
  csrf: string;
  expiresAt: number;
  /** The notice of the change this session made last, for the page it sent the owner to; taken by the next page. */
  notice?: { path: string; notice: Notice } | undefined;
}

/** Two secrets compared in constant time (hashed first, so their lengths do not show either). */
export function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/**
 * The owner's sessions: a login with the console's token starts one, held by
 * an HttpOnly, SameSite=Strict cookie (Secure behind an https: proxy); each has its own CSRF token that every
 * change (a POST) must carry. Kept in this process's memory: a restart logs
 * everyone out. At most 200 at once (the oldest goes first).
 */
export class Sessions {
  readonly #token: string;
  readonly #now: () => number;
  readonly #sessions = new Map<string, Session>();
  /** The wrong tokens of this minute, by client address. */
  #failures: { minute: number; byAddress: Map<string, number> } = { minute: 0, byAddress: new Map() };

  constructor(token: string, now: () => number = Date.now) {
    this.#token = token;
    this.#now = now;
  }

  /**
   * A new session for the right token; undefined for a wrong one. Once `from` (the client's address) has sent ten
   * wrong ones this minute, `throttled` for the rest of it, its token not compared (its right one too: a throttled
   * address learns nothing about its guesses). Only that address is throttled: a wrong token is counted against
   * `from` alone (an IPv6 address by its /64, see `clientOf`); `from` null: not counted, never throttled (the login
   * link's token, made at start, is not one to guess).
   */
  login(token: string, address: string | null): { id: string; csrf: string } | 'throttled' | undefined {
    const from = address === null ? null : clientOf(address);
    if (from !== null && this.#count(from, 0) >= FAILED_LOGINS_PER_MINUTE) return 'throttled';
    if (!sameSecret(token, this.#token)) {
      if (from !== null) this.#count(from, 1);
      return undefined;
    }
    const id = randomBytes(32).toString('base64url');
    const csrf = randomBytes(32).toString('base64url');
    this.#sessions.set(id, { csrf, expiresAt: this.#now() + SESSION_MS });
    while (this.#sessions.size > MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    return { id, csrf };
  }

  /** `from`'s wrong tokens this minute, `more` added; `from` becomes the one most recently heard from. */
  #count(from: string, more: number): number {
    const minute = Math.floor(this.#now() / 60_000);
    if (this.#failures.minute !== minute) this.#failures = { minute, byAddress: new Map() };
    const counted = this.#failures.byAddress;
    const count = (counted.get(from) ?? 0) + more;
    if (count === 0) return 0;
    counted.delete(from);
    counted.set(from, count);
    while (counted.size > MAX_COUNTED_ADDRESSES) counted.delete(counted.keys().next().value!);
    return count;
  }

  /** The session of a request's cookie header, if it is one that lives. */
  of(cookieHeader: string | undefined): { id: string; csrf: string } | undefined {
    const id = cookieValue(cookieHeader, SESSION_COOKIE);
    if (!id) return undefined;
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    if (session.expiresAt <= this.#now()) {
      this.#sessions.delete(id);
      return undefined;
    }
    return { id, csrf: session.csrf };
  }

  /** Keeps `notice` for session `id`'s next page, shown there when it is `path` (a later change's replaces it). */
  tell(id: string, path: string, notice: Notice): void {
    const session = this.#sessions.get(id);
    if (session) session.notice = { path, notice };
  }

  /**
   * The notice kept for session `id`, taken by its next page (`path`): said there when it is the page the change sent
   * the owner to, and dropped either way, so a reload, another page or another session never shows it.
   */
  takeNotice(id: string, path: string): Notice | undefined {
    const session = this.#sessions.get(id);
    const kept = session?.notice;
    if (!session || !kept) return undefined;
    session.notice = undefined;
    return kept.path === path ? kept.notice : undefined;
  }

  logout(id: string): void {
    this.#sessions.delete(id);
  }

  /**
   * The Set-Cookie value that starts a session (`id`) or ends it (undefined). `secure` (the console is opened at an
   * https: address through its proxy) adds `Secure`: the browser then sends it over TLS only.
   */
  static cookie(id: string | undefined, options: { secure?: boolean } = {}): string {
    const value = id ?? '';
    const age = id ? Math.floor(SESSION_MS / 1000) : 0;
    return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${age}${options.secure ? '; Secure' : ''}`;
  }
}

/**
 * The client an address is counted as: an IPv4 client seen through IPv6 as its IPv4 address (IPv4-mapped
 * `::ffff:192.0.2.7`, IPv4-translated `::ffff:0:192.0.2.7`, or through NAT64's well-known prefix `64:ff9b::192.0.2.7`,
 * however written), so each one behind a NAT64 is its own; any other IPv6 address by its /64 (the least one holder is
 * given, so rotating within it gains nothing), written `2001:db8:1:2::/64`; anything else as written.
 */
export function clientOf(address: string): string {
  const bare = address.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(bare) === 4) return bare;
  const groups = isIP(bare) === 6 ? ipv6Groups(bare) : undefined;
  if (!groups) return address;
  const [a, b, c, d, e, f, g, h] = groups as [number, number, number, number, number, number, number, number];
  const mapped = a === 0 && b === 0 && c === 0 && d === 0 && ((e === 0 && f === 0xffff) || (e === 0xffff && f === 0));
  const nat64 = a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0;
  if (mapped || nat64) return [g >> 8, g & 0xff, h >> 8, h & 0xff].join('.');
  return `${groups.slice(0, 4).map((n) => n.toString(16)).join(':')}::/64`;
}

/** An IPv6 address (`isIP` 6, no brackets) as its eight 16-bit groups; its zone (`%eth0`) dropped. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.replace(/%.*$/, '');
  // A trailing IPv4 part (`64:ff9b::192.0.2.7`) is two groups.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [p, q, r, s] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((p << 8) | q).toString(16)}:${((r << 8) | s).toString(16)}`;
  }
  const halves = text.split('::');
  const parse = (part: string | undefined) => (part === undefined || part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(halves[0]);
  const right = parse(halves[1]);
  const groups = halves.length === 2 ? [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right] : left;
  return groups.length === 8 && groups.every((n) => Number.isInteger(n) && n >= 0 && n <= 0xffff) ? groups : undefined;
}

/** One cookie's value from a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A token for a console started without `PICTOR_CONSOLE_TOKEN`: 32 random bytes. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * A warning said at most once a minute per key: `note(key)` is the number of that key's notes not said since its last
 * line when one is due now (0 the first time), undefined when not. At most 10,000 keys (the one longest quiet forgotten).
 */
export class OncePerMinute<K> {
  readonly #now: () => number;
  readonly #keys = new Map<K, { saidAt: number; notSaid: number }>();

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  note(key: K): number | undefined {
    const now = this.#now();
    const seen = this.#keys.get(key);
    this.#keys.delete(key);
    if (seen && now - seen.saidAt < 60_000) {
      this.#keys.set(key, { saidAt: seen.saidAt, notSaid: seen.notSaid + 1 });
      return undefined;
    }
    this.#keys.set(key, { saidAt: now, notSaid: 0 });
    while (this.#keys.size > MAX_COUNTED_ADDRESSES) this.#keys.delete(this.#keys.keys().next().value!);
    return seen?.notSaid ?? 0;
  }
}
