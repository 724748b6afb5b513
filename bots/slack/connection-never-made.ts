import { subscribe } from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { systemFailure } from 'pictor/internal';

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
 * Each request of Node's http (the Web API client's), and whether a byte of it may have left: told on Node's documented
 * `http.client.request.start` diagnostics channel, which Node publishes once the whole request is handed to its socket
 * (`end()` called and a socket given; the socket may still be connecting), and by its socket's readiness: `connect` for
 * `http:` (a TCP connection made), `secureConnect` for `https:` (the TLS handshake passed, the certificate checks
 * included). Until then Node's http writes no byte of the request: what was handed over waits in the socket, so a
 * handshake that failed — a certificate refused, a server that does not speak TLS, a connection reset before it ended —
 * sent nothing. A socket kept alive from an earlier request has long been ready. Kept by the request itself, so one
 * that is let go is forgotten.
 */
const requestMayHaveLeft = new WeakMap<object, boolean>();

/** Whether `socket` can carry a request's bytes now: connected, and for TLS its handshake passed (both sides' Finished messages exchanged). */
function readyToWrite(socket: Socket): boolean {
  if (socket.connecting) return false;
  if (!(socket as TLSSocket).encrypted) return true;
  return (socket as TLSSocket).getFinished() !== undefined && (socket as TLSSocket).getPeerFinished() !== undefined;
}

subscribe('http.client.request.start', (message) => {
  const request = (message as { request?: ClientRequest } | null)?.request;
  if (!request || typeof request.once !== 'function') return;
  requestMayHaveLeft.set(request, false);
  const watch = (socket: Socket) => {
    if (readyToWrite(socket)) requestMayHaveLeft.set(request, true);
    else socket.once((socket as TLSSocket).encrypted ? 'secureConnect' : 'connect', () => requestMayHaveLeft.set(request, true));
  };
  // Node gives the request its socket before it tells this; watched on `socket` should that ever come later.
  if (request.socket) watch(request.socket);
  else request.once('socket', watch);
});

/**
 * The same for the Web API client (`slack_webapi_request_error`), which sends through Node's own http, not fetch: its
 * request error keeps the failure (`original`, the HTTP library's error, which keeps the request and, as its `cause`,
 * Node's system error). "Never reached Slack" means the request was not written: decided first by the request's
 * socket, one never ready to write when the client failed — a name not resolved, a connection refused, every address
 * of the name never answering until the client's own timeout gave up (Node's `autoSelectFamily` gives each address but
 * the last its attempt timeout; the last one waits for the client's, or for its agent's socket timeout when that comes
 * first), a TLS handshake that failed (whatever its code: OpenSSL's change with its version) — sent nothing. Else by
 * the step Node names as failed (`systemFailure`): a name not resolved (`getaddrinfo`) or a connection refused,
 * unreachable or timed out (`connect`) fails before the socket is connected; when each address of a name failed (an
 * `AggregateError`), the connection was never made when every attempt failed so. Any other failure (a reset, a TLS
 * error, a timeout once the request could be written) may have come after the request was written — a TLS 1.3 server
 * refusing the client's certificate tells so only after the client wrote its request.
 *
 * Read so only for a client that sends each call once (`SentOnceClient`): on a client that tries again, the error is
 * the last try's, and a connection refused then can hide an earlier try that Slack took.
 */
export function webApiConnectionNeverMade(requestError: unknown): boolean {
  const request = ((requestError as { original?: unknown } | null | undefined)?.original as { request?: unknown } | null | undefined)?.request;
  if (typeof request === 'object' && request !== null && requestMayHaveLeft.get(request) === false) return true;
  const failure = systemFailure(requestError);
  return failure !== undefined && (failure.attempts ?? [failure]).every((step) => step?.syscall === 'getaddrinfo' || step?.syscall === 'connect');
}
