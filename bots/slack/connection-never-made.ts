import { subscribe } from 'node:diagnostics_channel';

/**
 * The errors fetch's engine (undici, Node's own and this package's alike) failed a connection with: it publishes each
 * on its documented `undici:client:connectError` diagnostics channel before it fails the requests that waited for that
 * connection. A connection is made when its TCP connection and, for `https:`, its TLS handshake (the certificate
 * checks included) have passed; undici writes no byte of a request before that. Kept by the error itself, so one that
 * is let go is forgotten.
 */
const connectFailures = new WeakSet<object>();

subscribe('undici:client:connectError', (message) => {
  const error = (message as { error?: unknown } | null)?.error;
  if (typeof error === 'object' && error !== null) connectFailures.add(error);
});

/**
 * Whether fetch failed (its rejection, whose `cause` is the failure) because no connection could be made for the
 * request, so that nothing of it was sent: a name not found, a connection refused or timed out, every address of a
 * name failing, a TLS handshake that failed — a certificate refused (`DEPTH_ZERO_SELF_SIGNED_CERT`,
 * `ERR_TLS_CERT_ALTNAME_INVALID`), a server that does not speak TLS (`ERR_SSL_WRONG_VERSION_NUMBER`), a handshake
 * refused with an alert (`ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE` under OpenSSL 3.0,
 * `ERR_SSL_SSL/TLS_ALERT_HANDSHAKE_FAILURE` under 3.5: OpenSSL's codes change with its version) — whatever its code.
 * Decided by when undici failed, not by the code: the same codes (an OpenSSL error, `EPROTO`, `ECONNRESET`) can come
 * after the request was written, and then it may have been taken.
 */
export function connectionNeverMade(fetchError: unknown): boolean {
  const cause = (fetchError as { cause?: unknown } | null | undefined)?.cause;
  return typeof cause === 'object' && cause !== null && connectFailures.has(cause);
}

/**
 * The same for the Web API client (`slack_webapi_request_error`), which sends through Node's own http, not fetch: its
 * request error keeps the failure (`original`, the HTTP library's error, whose `cause` is Node's system error), and Node
 * names the step that failed (`syscall`). A name not resolved (`getaddrinfo`) or a connection refused, unreachable or
 * timed out (`connect`) fails before the socket is connected, and Node's http writes no byte of a request before that.
 * A name with more than one address (most have an IPv6 and an IPv4 one) is tried address by address (Node's
 * `autoSelectFamily`), and when each fails Node fails with an `AggregateError` naming no step, its `errors` each
 * attempt's failure: the connection never made when every one of them is. Any other failure (a reset, a TLS error, a
 * timeout after the connection was made) may have come after the request was written.
 *
 * Read so only for a client that sends each call once (`retryConfig: { retries: 0 }`): on a client that tries again,
 * the error is the last try's, and a connection refused then can hide an earlier try that Slack took.
 */
export function webApiConnectionNeverMade(requestError: unknown): boolean {
  const original = (requestError as { original?: unknown } | null | undefined)?.original as { cause?: unknown } | undefined;
  const failure = (original?.cause ?? original) as { syscall?: unknown; errors?: unknown } | undefined;
  if (failedBeforeConnecting(failure)) return true;
  const attempts = failure?.errors;
  return Array.isArray(attempts) && attempts.length > 0 && attempts.every(failedBeforeConnecting);
}

/** Whether Node's system error names a step that fails before the socket is connected. */
function failedBeforeConnecting(error: unknown): boolean {
  const syscall = (error as { syscall?: unknown } | null | undefined)?.syscall;
  return syscall === 'getaddrinfo' || syscall === 'connect';
}
