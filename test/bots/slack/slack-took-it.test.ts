import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Agent, createServer, type ClientRequest } from 'node:http';
import { Agent as TlsAgent, createServer as createTlsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { webApi } from '@slack/bolt';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { lostAnswerCode } from '../../../bots/slack/slack-faults.js';
import { sentOnceClient, type SentOnceClient } from '../../../bots/slack/sent-once-client.js';
import { slackAnswerIn, slackTookIt } from '../../../bots/slack/slack-took-it.js';
import { certificate, HAS_OPENSSL } from '../../helpers/tls-certificate.js';
import { unansweringAddress } from '../../helpers/unanswering-address.js';

/**
 * One rule says whether Slack took a call, for a note through a response URL and for a Web API call alike; the one
 * thing the callers choose is what a 5xx without Slack's answer counts as.
 */
/** Whether Slack took it, as `slackTookIt` decided. */
const tookIt = (...args: Parameters<typeof slackTookIt>) => slackTookIt(...args).took;

describe('slackTookIt: whether Slack took a call it answered', () => {
  it('Slack’s own answer decides whatever the status: `ok: true` taken, `ok: false` (with its error) not', () => {
    for (const failing of ['not_taken', 'unknown'] as const) {
      for (const status of [200, 400, 404, 429, 500, 503, 504]) {
        expect(tookIt(status, { ok: true }, failing)).toBe('taken');
        expect(tookIt(status, { ok: false, error: 'expired_url' }, failing)).toBe('not_taken');
      }
    }
  });

  it('a 5xx without Slack’s answer, Slack failing or a gateway giving up, counts as the caller says: not taken for a private note, maybe taken for a public post', () => {
    for (const status of [500, 502, 503, 504]) {
      for (const answer of [undefined, 'unread'] as const) {
        expect(tookIt(status, answer, 'not_taken')).toBe('not_taken');
        expect(tookIt(status, answer, 'unknown')).toBe('unknown');
      }
    }
  });

  it('a 429 without Slack’s answer is Slack’s rate limit, which takes nothing, for every caller', () => {
    for (const failing of ['not_taken', 'unknown'] as const) {
      expect(tookIt(429, undefined, failing)).toBe('not_taken');
      expect(tookIt(429, 'unread', failing)).toBe('not_taken');
    }
  });

  it('another status that is not a 2xx, without Slack’s answer (used up or expired, refused), took nothing', () => {
    for (const status of [400, 403, 404, 410]) expect(tookIt(status, undefined, 'unknown')).toBe('not_taken');
  });

  it('a 2xx whose body is a bare `{"ok":false}` took nothing: Slack said no, naming no error', () => {
    for (const failing of ['not_taken', 'unknown'] as const) {
      expect(tookIt(200, slackAnswerIn('{"ok":false}'), failing)).toBe('not_taken');
      expect(tookIt(200, slackAnswerIn({ ok: false }), failing)).toBe('not_taken');
    }
  });

  it('a bare `{"ok":false}` on a status that is not a 2xx is not Slack’s answer (a gateway’s body): a 5xx counts as the caller says, not taken for a private note, maybe taken for a public post', () => {
    for (const status of [500, 502, 503, 504]) {
      for (const body of ['{"ok":false}', { ok: false }]) {
        expect(tookIt(status, slackAnswerIn(body), 'not_taken')).toBe('not_taken');
        expect(tookIt(status, slackAnswerIn(body), 'unknown')).toBe('unknown');
      }
    }
    expect(tookIt(429, slackAnswerIn('{"ok":false}'), 'unknown')).toBe('not_taken');
    expect(tookIt(404, slackAnswerIn('{"ok":false}'), 'unknown')).toBe('not_taken');
  });

  it('an `ok: false` whose error Slack named `unnamed` is Slack’s answer naming its error, on any status: not taken, and not read as a bare `{"ok":false}`', () => {
    for (const failing of ['not_taken', 'unknown'] as const) {
      for (const status of [200, 500, 503, 504]) {
        expect(tookIt(status, slackAnswerIn('{"ok":false,"error":"unnamed"}'), failing)).toBe('not_taken');
      }
    }
  });

  it('a 2xx without Slack’s answer is taken; one whose body broke before it was read may have been', () => {
    expect(tookIt(200, undefined, 'not_taken')).toBe('taken');
    expect(tookIt(204, undefined, 'not_taken')).toBe('taken');
    expect(tookIt(200, 'unread', 'not_taken')).toBe('unknown');
  });
});

describe('slackAnswerIn: Slack’s own answer in a body, as text or as its client parsed it', () => {
  it('finds `ok: true`, and `ok: false` with the error Slack names each refusal with', () => {
    expect(slackAnswerIn('{"ok":true}')).toEqual({ ok: true });
    expect(slackAnswerIn({ ok: true, ts: '1.2' })).toEqual({ ok: true });
    expect(slackAnswerIn('{"ok":false,"error":"expired_url"}')).toEqual({ ok: false, error: 'expired_url' });
    expect(slackAnswerIn({ ok: false, error: 'internal_error' })).toEqual({ ok: false, error: 'internal_error' });
  });

  it('finds `ok: false` naming no error (none, empty, or not a string): Slack said no, naming none', () => {
    for (const body of ['{"ok":false}', { ok: false }, '{"ok":false,"error":""}', '{"ok":false,"error":7}', { ok: false, error: null }]) {
      expect(slackAnswerIn(body)).toEqual({ ok: false, error: undefined });
    }
  });

  it('tells an error Slack named `unnamed` from one it did not name', () => {
    expect(slackAnswerIn('{"ok":false,"error":"unnamed"}')).toEqual({ ok: false, error: 'unnamed' });
    expect(slackAnswerIn('{"ok":false,"error":"unnamed"}')).not.toEqual(slackAnswerIn('{"ok":false}'));
  });

  it('finds none in a gateway’s page, a plain-text error or JSON of another shape', () => {
    for (const body of ['<html>Bad Gateway</html>', 'rollup_error', '', '[]', 'null', '{"ok":"yes"}', '{"error":"expired_url"}', undefined, null]) {
      expect(slackAnswerIn(body)).toBeUndefined();
    }
  });
});

describe('lostAnswerCode reads a Web API call answered with an HTTP status by the same rule, a 5xx without Slack’s answer being maybe taken', () => {
  const servers: (NetServer & { closeAllConnections?: () => void })[] = [];
  /** The client each error came from, which `lostAnswerCode` is asked with. */
  const sentBy = new WeakMap<object, SentOnceClient>();
  /** `lostAnswerCode` of an error thrown by the real client (`thrownAt`, `thrownFor`). */
  const lostAfter = (error: unknown) => lostAnswerCode(error, sentBy.get(error as object)!);
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  /** Listens on 127.0.0.1 and returns the port; closed after the test. */
  async function listening(server: NetServer): Promise<number> {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  /**
   * What the real WebClient (each call sent once) throws for a chat.postMessage sent to `apiUrl`, through `agent` when given,
   * the client giving up after `timeout` ms when given.
   */
  function thrownAt(apiUrl: string, agent?: Agent | TlsAgent, timeout?: number): Promise<unknown> {
    const client = sentOnceClient('xoxb-test', { slackApiUrl: apiUrl, agent, timeout, logLevel: webApi.LogLevel.ERROR });
    return thrownBy(client);
  }

  /** What the real WebClient (each call sent once) throws for a chat.postMessage Slack answers with `status` and `body`. */
  async function thrownFor(status: number, type: string, body: string): Promise<unknown> {
    const slack = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(status, { 'content-type': type }).end(body));
    });
    servers.push(slack);
    await new Promise<void>((resolve) => slack.listen(0, '127.0.0.1', resolve));
    const client = sentOnceClient('xoxb-test', { slackApiUrl: `http://127.0.0.1:${(slack.address() as AddressInfo).port}/api/`, logLevel: webApi.LogLevel.ERROR });
    return thrownBy(client);
  }

  /** What `client` throws for a chat.postMessage, kept with the client. */
  function thrownBy(client: SentOnceClient): Promise<unknown> {
    return client.chat.postMessage({ channel: 'C0BUSY', text: 'hi' }).then(
      () => undefined,
      (error: unknown) => {
        sentBy.set(error as object, client);
        return error;
      },
    );
  }

  it('a 503 whose body is a gateway’s page: its answer lost, the post maybe made (not sent again blindly)', async () => {
    expect(lostAfter(await thrownFor(503, 'text/html', '<html>Service Unavailable</html>'))).toBe(503);
  });

  it('a 504 whose body is Slack’s `{"ok":true}`: Slack took it, so it is not sent again', async () => {
    expect(lostAfter(await thrownFor(504, 'application/json', '{"ok":true}'))).toBe(504);
  });

  it('a 500 whose body is Slack’s `ok: false` with its error: Slack took nothing, its answer not lost', async () => {
    expect(lostAfter(await thrownFor(500, 'application/json', '{"ok":false,"error":"internal_error"}'))).toBeUndefined();
  });

  it('a 503 whose body is a bare `{"ok":false}`, a gateway’s and not Slack’s answer: its answer lost, the post maybe made (not sent again blindly)', async () => {
    expect(lostAfter(await thrownFor(503, 'application/json', '{"ok":false}'))).toBe(503);
  });

  it('a 503 whose body is Slack’s `ok: false` naming its error `unnamed`: Slack took nothing, its answer not lost', async () => {
    expect(lostAfter(await thrownFor(503, 'application/json', '{"ok":false,"error":"unnamed"}'))).toBeUndefined();
  });

  it('a post whose connection was refused: it never reached Slack, so nothing was posted and its answer is not lost (it may be sent again)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const error = await thrownAt(`http://127.0.0.1:${port}/api/`);
    expect((error as { code?: unknown }).code).toBe('slack_webapi_request_error');
    expect(lostAfter(error)).toBeUndefined();
  });

  it('a post to a name with two addresses, an IPv6 and an IPv4, each refusing the connection: it never reached Slack, its answer not lost', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    // The name resolves to both families, as most hosts do: Node tries each address in turn (`autoSelectFamily`).
    const twoAddresses = ((_name: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      if (options.all) callback(null, [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }]);
      else callback(null, '127.0.0.1', 4);
    }) as NonNullable<ConstructorParameters<typeof Agent>[0]>['lookup'];
    const agent = new Agent({ lookup: twoAddresses });
    const error = await thrownAt(`http://slack.test:${port}/api/`, agent);
    agent.destroy();
    expect((error as { code?: unknown }).code).toBe('slack_webapi_request_error');
    expect(lostAfter(error)).toBeUndefined();
  });

  /**
   * An agent whose lookup gives every name these addresses, in this order. Node tries each address but the last for
   * the least time it allows (10 ms, its `autoSelectFamilyAttemptTimeout`; 250 ms by default): its own timer, which a
   * faked clock does not reach.
   */
  function agentResolvingTo(...addresses: { address: string; family: 4 | 6 }[]): Agent {
    const lookup = ((_name: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    }) as NonNullable<ConstructorParameters<typeof Agent>[0]>['lookup'];
    return new Agent({ lookup, autoSelectFamilyAttemptTimeout: 10 });
  }

  // Linux drops a connection to a listener whose queue is full (it never answers); other systems may refuse it.
  it.runIf(process.platform === 'linux')('a post to a name whose first address never answers (Node gives up on it after its attempt timeout, not the client) and whose other refuses: it never reached Slack, its answer not lost', async () => {
    const { port } = await unansweringAddress();
    const agent = agentResolvingTo({ address: '127.0.0.1', family: 4 }, { address: '127.0.0.2', family: 4 });
    const error = await thrownAt(`http://slack.test:${port}/api/`, agent);
    agent.destroy();
    expect((error as { code?: unknown }).code).toBe('slack_webapi_request_error');
    expect(lostAfter(error)).toBeUndefined();
  });

  /**
   * The client's own clock, faked: its timeout (a wall-clock timer the HTTP library sets for each call, the connection
   * still being made or not) strikes when the test moves the clock, not after the time passed. Only `setTimeout` and
   * `clearTimeout` are faked; Node's sockets keep their own timers. Restored after the test.
   */
  function fakeClientClock(): void {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
  }

  /** The socket of the next request the client makes, told when Node has the whole request (`http.client.request.start`). */
  function nextRequestSocket(): Promise<Socket> {
    return new Promise((resolve) => {
      const told = (message: unknown) => {
        const request = (message as { request: ClientRequest }).request;
        unsubscribe('http.client.request.start', told);
        if (request.socket) resolve(request.socket);
        else request.once('socket', resolve);
      };
      subscribe('http.client.request.start', told);
      onTestFinished(() => void unsubscribe('http.client.request.start', told));
    });
  }

  // Linux drops a connection to a listener whose queue is full (it never answers); other systems may refuse it.
  it.runIf(process.platform === 'linux')('a post to a name whose last (here only) address never answers, given up by the client’s own timeout while still connecting: it never reached Slack, its answer not lost', async () => {
    // Node gives the last address no attempt timeout of its own: only the client's ends the wait.
    const { port } = await unansweringAddress();
    const agent = agentResolvingTo({ address: '127.0.0.1', family: 4 });
    fakeClientClock();
    const socket = nextRequestSocket();
    const thrown = thrownAt(`http://slack.test:${port}/api/`, agent, 1000);
    expect((await socket).connecting).toBe(true);
    vi.advanceTimersByTime(1000);
    const error = await thrown;
    agent.destroy();
    expect((error as { code?: unknown }).code).toBe('slack_webapi_request_error');
    expect(lostAfter(error)).toBeUndefined();
  });

  it('a post whose connection was made and then not answered until the client’s own timeout: Slack may have posted it, its answer lost', async () => {
    let arrived!: () => void;
    const postArrived = new Promise<void>((resolve) => (arrived = resolve));
    const slack = createServer((req) => req.resume().on('end', arrived));
    fakeClientClock();
    const thrown = thrownAt(`http://127.0.0.1:${await listening(slack)}/api/`, undefined, 500);
    await postArrived;
    vi.advanceTimersByTime(500);
    const error = await thrown;
    expect((error as { code?: unknown }).code).toBe('slack_webapi_request_error');
    expect(lostAfter(error)).toBe('request_error');
  });

  it('a post to a name that is not found: it never reached Slack, its answer not lost', async () => {
    const error = await thrownAt('http://slack.invalid/api/');
    expect((error as { code?: unknown }).code).toBe('slack_webapi_request_error');
    expect(lostAfter(error)).toBeUndefined();
  });

  it('a post whose connection was made and then closed without an answer: Slack may have posted it, its answer lost', async () => {
    const slack = createServer((req) => {
      req.resume();
      req.on('end', () => req.socket.destroy());
    });
    servers.push(slack);
    await new Promise<void>((resolve) => slack.listen(0, '127.0.0.1', resolve));
    const error = await thrownAt(`http://127.0.0.1:${(slack.address() as AddressInfo).port}/api/`);
    expect(lostAfter(error)).toBe('request_error');
  });

  // No byte of a request leaves before its TLS handshake has passed: one that failed posted nothing, whatever its code.
  it.skipIf(!HAS_OPENSSL)('a post whose TLS handshake failed on a certificate the client does not trust (signed by itself): it never reached Slack, its answer not lost', async () => {
    const tls = createTlsServer(certificate('IP:127.0.0.1'), (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    const error = await thrownAt(`https://127.0.0.1:${await listening(tls)}/api/`);
    expect((error as { code?: unknown }).code).toBe('slack_webapi_request_error');
    expect(lostAfter(error)).toBeUndefined();
  });

  it('a post whose connection was reset during its TLS handshake (ECONNRESET before the handshake passed): it never reached Slack, its answer not lost', async () => {
    const port = await listening(createTcpServer((socket) => socket.on('error', () => undefined).once('data', () => socket.resetAndDestroy())));
    const error = await thrownAt(`https://127.0.0.1:${port}/api/`);
    expect((error as { code?: unknown }).code).toBe('slack_webapi_request_error');
    expect(lostAfter(error)).toBeUndefined();
  });

  it('a post to a plain HTTP server where TLS was expected (OpenSSL’s protocol error): it never reached Slack, its answer not lost', async () => {
    const plain = createServer((req, res) => res.end('{"ok":true}'));
    const error = await thrownAt(`https://127.0.0.1:${await listening(plain)}/api/`);
    expect((error as { code?: unknown }).code).toBe('slack_webapi_request_error');
    expect(lostAfter(error)).toBeUndefined();
  });

  it.skipIf(!HAS_OPENSSL)('a post to a TLS 1.3 server that refuses the client for want of a client certificate, which it tells only after the client wrote the post: Slack may have posted it, its answer lost', async () => {
    const made = certificate('IP:127.0.0.1');
    const tls = createTlsServer({ ...made, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.3' }, (_req, res) => res.end('{"ok":true}'));
    const agent = new TlsAgent({ ca: made.cert });
    const error = await thrownAt(`https://127.0.0.1:${await listening(tls)}/api/`, agent);
    agent.destroy();
    expect((error as { code?: unknown }).code).toBe('slack_webapi_request_error');
    expect(lostAfter(error)).toBe('request_error');
  });

  it('a 400 without Slack’s answer: Slack took nothing, its answer not lost', async () => {
    expect(lostAfter(await thrownFor(400, 'text/plain', 'invalid_payload'))).toBeUndefined();
  });
});
