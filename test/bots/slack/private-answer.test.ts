import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { createServer as createTcpServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Context } from '@slack/bolt';
import { Agent } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { privateAnswerVia, type BotContext } from '../../../bots/slack/bot-context.js';
import { silentLogger } from '../../../src/internal.js';
import { certificate, HAS_OPENSSL } from '../../helpers/tls-certificate.js';

/**
 * `privateAnswerVia` against a response URL served here (a real HTTP, TLS or TCP server, so fetch's own errors are
 * the ones met): what becomes of a note whose answer is not the few bytes of JSON Slack answers.
 */
const servers: Server[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
    await new Promise((resolve) => server.close(resolve));
  }
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
  vi.unstubAllGlobals();
});

/** Listens on 127.0.0.1 and returns the port; closed after the test. */
async function listening(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A response URL whose every answer is `answer`'s, once the note was read. */
async function responseUrl(answer: (res: ServerResponse, req: IncomingMessage) => void): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res, req));
  });
  return `http://127.0.0.1:${await listening(server)}/actions/T0/1/x`;
}

/** A bot context whose warnings are kept (message, code and HTTP status, each as logged) and whose direct messages are recorded. */
function botContext() {
  const warnings: { code: unknown; status?: unknown; msg: string }[] = [];
  const direct: string[] = [];
  const logger = {
    ...silentLogger(),
    warn: (fields: { code?: unknown; status?: unknown }, msg?: string) => void warnings.push({ code: fields.code, ...('status' in fields ? { status: fields.status } : {}), msg: String(msg) }),
  };
  const client = { chat: { postMessage: async ({ text }: { text: string }) => void direct.push(text) } };
  const context = {
    logger,
    writer: { write: (_channel: string, task: { run: () => Promise<unknown> }) => task.run() },
    workspace: () => ({ client }),
  } as unknown as Pick<BotContext, 'writer' | 'logger' | 'workspace'>;
  return { context, warnings, direct };
}

/** Sends one private note through `url` and gives what was logged and what went to the member's direct messages. */
async function privateNoteVia(url: string) {
  const { context, warnings, direct } = botContext();
  await privateAnswerVia(context, {} as Context, { userId: 'U0ALICE', responseUrl: url })('only its member may delete it');
  return { warnings, direct };
}

const TOOK_NONE = 'a response_url took no private note (used up, expired, refused, rate-limited, failing on Slack’s side or unreachable): it goes to the member’s direct messages';
const MAY_HAVE_TAKEN = 'a response_url did not answer a private note it may have taken: it is not sent again';
const IN_DIRECT_MESSAGES = ['only its member may delete it'];
/** A code OpenSSL gave, as Node names it (`ERR_SSL_` and OpenSSL's reason): its text differs between OpenSSL versions. */
const OPENSSL_CODE = expect.stringMatching(/^ERR_SSL_[A-Z0-9_/]+$/);

describe('a private note through a response URL whose answer is not Slack’s few bytes of JSON', () => {
  it('an answer whose body breaks after its status: logged with fetch’s own code, as a note that may have reached the member, and not sent again', async () => {
    const url = await responseUrl((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"ok":');
      setImmediate(() => res.socket?.destroy());
    });
    const { warnings, direct } = await privateNoteVia(url);
    expect(warnings).toEqual([{ code: 'UND_ERR_SOCKET', status: 200, msg: MAY_HAVE_TAKEN }]);
    expect(direct).toEqual([]);
  });

  // Not Slack's JSON whatever its first bytes say (a cut document is not parsed): as any 2xx that is not JSON.
  it('a 2xx answer that never ends: the note is done with after its first 16 KiB (the rest is never waited for), counted delivered, and not sent again', async () => {
    const url = await responseUrl((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"ok":false,"error":"expired_url"}');
      const more = () => {
        while (!res.destroyed && res.write(' '.repeat(64 * 1024)));
      };
      res.on('drain', more);
      more();
    });
    const { warnings, direct } = await privateNoteVia(url);
    expect(warnings).toEqual([]);
    expect(direct).toEqual([]);
  });

  it('a 2xx with no body (a 204): delivered, nothing logged, not sent again', async () => {
    const { warnings, direct } = await privateNoteVia(await responseUrl((res) => res.writeHead(204).end()));
    expect(warnings).toEqual([]);
    expect(direct).toEqual([]);
  });
});

describe('a private note through a response URL whose answer is Slack’s own JSON: its `ok` decides, whatever the status (a bare `{"ok":false}` is Slack’s on a 2xx only)', () => {
  it.each([
    [200, '{"ok":false,"error":"expired_url"}', 'expired_url'],
    [503, '{"ok":false,"error":"service_unavailable"}', 'service_unavailable'],
    [429, '{"ok":false,"error":"rate_limited"}', 'rate_limited'],
    // On a 2xx, named or not, `ok: false` is Slack saying no: a bare one is logged as unnamed.
    [200, '{"ok":false}', 'unnamed'],
    // An error Slack named `unnamed` is Slack's answer on any status, logged with that name.
    [200, '{"ok":false,"error":"unnamed"}', 'unnamed'],
    [503, '{"ok":false,"error":"unnamed"}', 'unnamed'],
  ])('a %i saying `ok: false`: Slack took nothing, so the note goes to the member’s direct messages, logged with Slack’s error and the status', async (status, text, code) => {
    const { warnings, direct } = await privateNoteVia(await responseUrl((res) => res.writeHead(status, { 'content-type': 'application/json' }).end(text)));
    expect(warnings).toEqual([{ code, status, msg: TOOK_NONE }]);
    expect(direct).toEqual(IN_DIRECT_MESSAGES);
  });

  // A gateway's status over Slack's answer: Slack says it took the note, so sent again the member would read it twice.
  it.each([500, 503, 504, 429])('a %i whose body is Slack’s `{"ok":true}`: taken, nothing logged, not sent again', async (status) => {
    const { warnings, direct } = await privateNoteVia(await responseUrl((res) => res.writeHead(status, { 'content-type': 'application/json' }).end('{"ok":true}')));
    expect(warnings).toEqual([]);
    expect(direct).toEqual([]);
  });
});

describe('a private note through a response URL whose answer is not Slack’s JSON and not a 2xx: Slack took nothing, so it goes to the member’s direct messages, logged with the status', () => {
  it.each([
    [500, 'text/plain', 'rollup_error'],
    [502, 'text/html', '<html><body>Bad Gateway</body></html>'],
    [503, 'text/html', ''],
    [504, 'application/json', '{"error":"gateway_timeout"}'],
    // A bare `{"ok":false}` on a status that is not a 2xx is a gateway's body, not Slack's answer.
    [504, 'application/json', '{"ok":false}'],
  ])('Slack failing on its side, a %i (%s)', async (status, type, text) => {
    const { warnings, direct } = await privateNoteVia(await responseUrl((res) => res.writeHead(status, { 'content-type': type }).end(text)));
    expect(warnings).toEqual([{ code: 'http_error', status, msg: TOOK_NONE }]);
    expect(direct).toEqual(IN_DIRECT_MESSAGES);
  });

  it('a 5xx whose body breaks after its status: its status told that Slack took nothing', async () => {
    const url = await responseUrl((res) => {
      res.writeHead(503, { 'content-type': 'text/html', 'content-length': '100' });
      res.write('<html>');
      setImmediate(() => res.socket?.destroy());
    });
    const { warnings, direct } = await privateNoteVia(url);
    expect(warnings).toEqual([{ code: 'http_error', status: 503, msg: TOOK_NONE }]);
    expect(direct).toEqual(IN_DIRECT_MESSAGES);
  });

  it.each([
    ['with Retry-After and a text', { 'content-type': 'text/plain', 'retry-after': '1' }, 'rate_limited'],
    ['with no body', {}, ''],
  ])('Slack’s rate limit, a 429 %s', async (_, headers, text) => {
    const { warnings, direct } = await privateNoteVia(await responseUrl((res) => res.writeHead(429, headers).end(text)));
    expect(warnings).toEqual([{ code: 'http_error', status: 429, msg: TOOK_NONE }]);
    expect(direct).toEqual(IN_DIRECT_MESSAGES);
  });

  it.each([
    [404, 'no_service'],
    [410, 'expired_url'],
    [400, 'invalid_payload'],
    [403, 'action_prohibited'],
  ])('used up, expired or refused, a %i (%s)', async (status, text) => {
    const { warnings, direct } = await privateNoteVia(await responseUrl((res) => res.writeHead(status, { 'content-type': 'text/plain' }).end(text)));
    expect(warnings).toEqual([{ code: 'http_error', status, msg: TOOK_NONE }]);
    expect(direct).toEqual(IN_DIRECT_MESSAGES);
  });
});

describe.skipIf(!HAS_OPENSSL)('a private note through a response URL whose TLS handshake fails: nothing was sent, so it goes to the member’s direct messages, logged with the failure’s own code', () => {
  it('a certificate fetch does not trust (a proxy that intercepts TLS, signed by itself): DEPTH_ZERO_SELF_SIGNED_CERT', async () => {
    const { warnings, direct } = await privateNoteVia(await tlsResponseUrl(certificate('IP:127.0.0.1')));
    expect(warnings).toEqual([{ code: 'DEPTH_ZERO_SELF_SIGNED_CERT', msg: TOOK_NONE }]);
    expect(direct).toEqual(IN_DIRECT_MESSAGES);
  });

  it('a certificate fetch trusts, for another name: Node’s own check, ERR_TLS_CERT_ALTNAME_INVALID', async () => {
    const made = certificate('DNS:hooks.elsewhere.test');
    trustOnly(made.cert);
    const { warnings, direct } = await privateNoteVia(await tlsResponseUrl(made));
    expect(warnings).toEqual([{ code: 'ERR_TLS_CERT_ALTNAME_INVALID', msg: TOOK_NONE }]);
    expect(direct).toEqual(IN_DIRECT_MESSAGES);
  });

  // OpenSSL names these failures by its version (the alert is ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE under OpenSSL 3.0,
  // ERR_SSL_SSL/TLS_ALERT_HANDSHAKE_FAILURE under 3.5, which Node 22.20 and 24 bring): what counts is that the note
  // goes to the member's direct messages, logged with OpenSSL's code, whichever it is.
  it('a plain HTTP server where TLS was expected: logged with OpenSSL’s code', async () => {
    const plain = await responseUrl((res) => res.end('{"ok":true}'));
    const { warnings, direct } = await privateNoteVia(plain.replace('http:', 'https:'));
    expect(warnings).toEqual([{ code: OPENSSL_CODE, msg: TOOK_NONE }]);
    expect(direct).toEqual(IN_DIRECT_MESSAGES);
  });

  it.each([
    ['a server that speaks another protocol (an SSH banner)', Buffer.from('SSH-2.0-OpenSSH_9.6\r\n')],
    ['a TLS record longer than TLS allows', Buffer.from([0x16, 0x03, 0x03, 0xff, 0xff])],
    ['a handshake refused with an alert (handshake_failure)', Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28])],
  ])('%s: logged with OpenSSL’s code', async (_, answer) => {
    const port = await listening(createTcpServer((socket) => socket.on('error', () => undefined).once('data', () => socket.write(answer))));
    const { warnings, direct } = await privateNoteVia(`https://127.0.0.1:${port}/actions/T0/1/x`);
    expect(warnings).toEqual([{ code: OPENSSL_CODE, msg: TOOK_NONE }]);
    expect(direct).toEqual(IN_DIRECT_MESSAGES);
  });
});

describe('a private note whose connection fails after the note was written: it may have reached the member, so it is logged, not sent again', () => {
  it('a connection reset once the note arrived, before any answer (ECONNRESET)', async () => {
    const { warnings, direct } = await privateNoteVia(await responseUrl((_res, req) => req.socket.resetAndDestroy()));
    expect(warnings).toEqual([{ code: 'ECONNRESET', msg: MAY_HAVE_TAKEN }]);
    expect(direct).toEqual([]);
  });

  it.skipIf(!HAS_OPENSSL)('a TLS connection whose handshake passed, broken once the note arrived (bytes that are not TLS in its stream)', async () => {
    const made = certificate('IP:127.0.0.1');
    trustOnly(made.cert);
    let toFetch: Socket | undefined;
    const tls = createTlsServer(made, (req) => {
      req.resume();
      req.on('end', () => toFetch?.write('HTTP/1.1 400 Bad Request\r\n\r\n'));
    });
    const tlsPort = await listening(tls as unknown as Server);
    // A relay between fetch and the TLS server, which is how the bytes that are not TLS get into the stream.
    const relay = createTcpServer((socket) => {
      toFetch = socket.on('error', () => undefined);
      const upstream = connect(tlsPort, '127.0.0.1').on('error', () => undefined);
      socket.pipe(upstream).pipe(socket);
    });
    const { warnings, direct } = await privateNoteVia(`https://127.0.0.1:${await listening(relay)}/actions/T0/1/x`);
    expect(warnings).toEqual([{ code: expect.any(String), msg: MAY_HAVE_TAKEN }]);
    expect(direct).toEqual([]);
  });

  it.skipIf(!HAS_OPENSSL)('a TLS 1.3 server that refuses fetch for want of a client certificate, which it tells only after fetch wrote the note', async () => {
    const made = certificate('IP:127.0.0.1');
    trustOnly(made.cert);
    const tls = createTlsServer({ ...made, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.3' }, (_req, res) => res.end('{"ok":true}'));
    const { warnings, direct } = await privateNoteVia(`https://127.0.0.1:${await listening(tls as unknown as Server)}/actions/T0/1/x`);
    expect(warnings).toEqual([{ code: expect.any(String), msg: MAY_HAVE_TAKEN }]);
    expect(direct).toEqual([]);
  });
});

/** A response URL served over TLS with `made`, answering as Slack does. */
async function tlsResponseUrl(made: { key: Buffer; cert: Buffer }): Promise<string> {
  const tls = createTlsServer(made, (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
  return `https://127.0.0.1:${await listening(tls as unknown as Server)}/actions/T0/1/x`;
}

/** The real fetch, trusting only `cert` (as a machine with a proxy's certificate installed): its TLS handshakes can pass. */
function trustOnly(cert: Buffer): void {
  const agent = new Agent({ connect: { ca: cert } });
  agents.push(agent);
  const realFetch = globalThis.fetch;
  vi.stubGlobal('fetch', (input: string | URL, init?: RequestInit) => realFetch(input, { ...init, dispatcher: agent } as unknown as RequestInit));
}
