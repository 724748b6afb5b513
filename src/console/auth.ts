import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The session cookie's name. */
export const SESSION_COOKIE = 'pictor_console';
/** How long a login lasts. */
export const SESSION_MS = 12 * 60 * 60_000;
const MAX_SESSIONS = 200;
/** Failed logins allowed per minute (from anywhere) before the login answers 429 for the rest of that minute. */
const FAILED_LOGINS_PER_MINUTE = 10;

interface Session {
  csrf: string;
  expiresAt: number;
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
  #failures: { minute: number; count: number } = { minute: 0, count: 0 };

  constructor(token: string, now: () => number = Date.now) {
    this.#token = token;
    this.#now = now;
  }

  /** A new session for the right token; `throttled` after too many wrong ones this minute; undefined for a wrong one. */
  login(token: string): { id: string; csrf: string } | 'throttled' | undefined {
    const minute = Math.floor(this.#now() / 60_000);
    if (this.#failures.minute !== minute) this.#failures = { minute, count: 0 };
    if (this.#failures.count >= FAILED_LOGINS_PER_MINUTE) return 'throttled';
    if (!sameSecret(token, this.#token)) {
      this.#failures.count++;
      return undefined;
    }
    const id = randomBytes(32).toString('base64url');
    const csrf = randomBytes(32).toString('base64url');
    this.#sessions.set(id, { csrf, expiresAt: this.#now() + SESSION_MS });
    while (this.#sessions.size > MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    return { id, csrf };
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
