import { envBoolean, envError, envNumber, envText, envUrl, type Env } from '../core/env.js';
import { isLoopbackHost } from '../core/emulator-identity.js';
import { ValidationError } from '../core/errors.js';

/** Whether a host name or address is this machine only (loopback): the one rule, the emulator's trust uses it too. */
export { isLoopbackHost };

/** The console's settings (`PICTOR_CONSOLE_*`), read once at an entry point. */
export interface ConsoleConfig {
  /** `PICTOR_CONSOLE_PORT` (0: a free port). */
  port: number;
  /** `PICTOR_CONSOLE_HOST`: default 127.0.0.1, this machine only. */
  host: string;
  /** `PICTOR_CONSOLE_TOKEN`: what the owner logs in with. Unset: a new one each start, printed once with the console's address. */
  token: string | undefined;
  /** `PICTOR_CONSOLE_ALLOW_CHANGES=1`: resume a paused server and change the alert rules from the console. Default: read-only. */
  allowChanges: boolean;
  /**
   * `PICTOR_CONSOLE_ORIGIN`: the address the owner opens the console at through a TLS proxy in front of it (e.g.
   * `https://pictor.example.com`), an origin only. Its forms and its `Host` are accepted as the console's own, whatever
   * `Host` the proxy passes on. Unset: only the console's own address is.
   */
  publicOrigin?: string | undefined;
}

/** The port `pictor console` listens on when neither `--port` nor `PICTOR_CONSOLE_PORT` says. */
export const DEFAULT_CONSOLE_PORT = 8788;
const MIN_TOKEN_LENGTH = 16;


/**
 * Reads the console's settings. For `npm start` the console is off unless
 * `PICTOR_CONSOLE_PORT` is set (undefined); `pictor console` passes
 * `always` with its default port. Listening anywhere but loopback needs
 * `PICTOR_CONSOLE_TOKEN` (16 characters or more): a ValidationError names it.
 */
export function readConsoleConfig(env: Env, options: { always?: { port: number } } = {}): ConsoleConfig | undefined {
  const port = envNumber(env, 'PICTOR_CONSOLE_PORT', { int: true, min: 0, max: 65535, takes: 'a port number from 0 to 65535' });
  const host = envText(env, 'PICTOR_CONSOLE_HOST');
  if (host !== undefined && !/^[\w.:[\]-]+$/.test(host)) throw envError(env, 'PICTOR_CONSOLE_HOST', 'a host name or an IP address to listen on, e.g. 127.0.0.1');
  if (port === undefined && !options.always) {
    if (host !== undefined) throw new ValidationError('PICTOR_CONSOLE_PORT', 'PICTOR_CONSOLE_HOST is set but PICTOR_CONSOLE_PORT is not: set the port to serve the console on');
    return undefined;
  }
  const token = envText(env, 'PICTOR_CONSOLE_TOKEN');
  if (token !== undefined && (token.length < MIN_TOKEN_LENGTH || /\s/.test(token))) {
    throw envError(env, 'PICTOR_CONSOLE_TOKEN', `a long random string without spaces (${MIN_TOKEN_LENGTH} characters or more), e.g. from openssl rand -hex 24`, { secret: true });
  }
  const listenOn = host ?? '127.0.0.1';
  if (!isLoopbackHost(listenOn) && token === undefined) {
    throw new ValidationError(
      'PICTOR_CONSOLE_TOKEN',
      `PICTOR_CONSOLE_TOKEN must be set for the console to listen on ${listenOn}: anyone who can reach it could see what the account spends. ` +
        'Set a long random string (openssl rand -hex 24), or leave PICTOR_CONSOLE_HOST unset to listen on this machine only.',
    );
  }
  return {
    publicOrigin: publicOriginOf(env),
    port: port ?? options.always!.port,
    host: listenOn,
    token,
    allowChanges: envBoolean(env, 'PICTOR_CONSOLE_ALLOW_CHANGES', '1 (resume paused servers and change alert rules from the console) or 0') ?? false,
  };
}

/**
 * `PICTOR_CONSOLE_ORIGIN` as an origin (`https://host[:port]`, no path, no query), lower-cased, its default port
 * dropped (`https://host:443` is `https://host`); undefined when unset.
 */
function publicOriginOf(env: Env): string | undefined {
  const text = envUrl(env, 'PICTOR_CONSOLE_ORIGIN', { example: 'https://pictor.example.com' });
  if (text === undefined) return undefined;
  const url = new URL(text);
  // Compared by its parts, not as text: `https://host:443` is `https://host`, and the origin is said as such.
  const originOnly = (url.protocol === 'https:' || url.protocol === 'http:') && url.pathname === '/' && url.search === '' && url.hash === '' && !text.includes('?') && !text.includes('#');
  if (!originOnly || url.username !== '' || url.password !== '') {
    throw envError(env, 'PICTOR_CONSOLE_ORIGIN', 'the address the console is opened at through its proxy, an origin only (no path, no query), e.g. https://pictor.example.com');
  }
  return url.origin.toLowerCase();
}
