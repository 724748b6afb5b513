import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { REST } from 'discord.js';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { FirstAnswersInFlight } from '../../../bots/discord/first-answers-first.js';
import { createWebhookRest, makeRequestWithEncodedForms, sentAgainByDiscordJs, UnansweredPost, withFirstAnswerPool, withPostsSentOnce } from '../../../bots/discord/rest-request.js';

const agents: Agent[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** A stand-in for Discord's webhook routes on 127.0.0.1: answers every request with 204, noting its path in `seen`. */
async function webhookServer(): Promise<{ api: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(request.url ?? '');
    request.resume().on('end', () => response.writeHead(204).end());
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { api: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`, seen };
}

describe('the first answers’ own connection pool', () => {
  it('sends an interaction callback over its own pool and every other request over the client’s', async () => {
    const firstAnswers = new Agent();
    agents.push(firstAnswers);
    const seen: { url: string; dispatcher: unknown }[] = [];
    const makeRequest = withFirstAnswerPool(async (url, init) => {
      seen.push({ url, dispatcher: (init as { dispatcher?: unknown }).dispatcher });
      return new Response(null, { status: 204 }) as never;
    }, firstAnswers, new FirstAnswersInFlight());
    const api = 'https://discord.com/api/v10';
    await makeRequest(`${api}/interactions/123456789012345678/aW50ZXJhY3Rpb24/callback`, { method: 'POST' } as never);
    await makeRequest(`${api}/interactions/123456789012345678/aW50ZXJhY3Rpb24/callback?with_response=true`, { method: 'POST' } as never);
    await makeRequest(`${api}/channels/1/messages`, { method: 'POST' } as never);
    await makeRequest(`${api}/webhooks/1/aW50ZXJhY3Rpb24/messages/@original`, { method: 'PATCH' } as never);
    expect(seen.map((s) => s.dispatcher === firstAnswers)).toEqual([true, true, false, false]);
  });

  it('counts a first answer in flight until Discord answers it, and nothing else', async () => {
    const inFlight = new FirstAnswersInFlight();
    const pool = new Agent();
    agents.push(pool);
    const answers: (() => void)[] = [];
    const makeRequest = withFirstAnswerPool(
      () =>
        new Promise((resolve) => {
          answers.push(() => resolve(new Response(null, { status: 204 }) as never));
        }),
      pool,
      inFlight,
    );
    const api = 'https://discord.com/api/v10';
    const callback = makeRequest(`${api}/interactions/123456789012345678/aW50ZXJhY3Rpb24/callback`, { method: 'POST' } as never);
    const edit = makeRequest(`${api}/webhooks/1/aW50ZXJhY3Rpb24/messages/@original`, { method: 'PATCH' } as never);
    expect(inFlight.size).toBe(1);
    answers.forEach((answer) => answer());
    await Promise.all([callback, edit]);
    expect(inFlight.size).toBe(0);
  });
});

describe('the interaction webhooks’ client', () => {
  it('sends an edit only once the first answers asked before it have come back', async () => {
    const { api, seen } = await webhookServer();
    // No giving up on the first answer meanwhile (Discord's 3 s), however loaded the machine.
    const firstAnswers = new FirstAnswersInFlight(60_000);
    let answered!: () => void;
    void firstAnswers.track(new Promise<void>((resolve) => (answered = resolve)));
    const edit = createWebhookRest(api, firstAnswers).patch('/webhooks/1/held/messages/@original', { body: { content: 'x' }, auth: false });
    // The same client with no first answer in flight: its edit, asked after, makes the whole round trip meanwhile.
    await createWebhookRest(api, new FirstAnswersInFlight()).patch('/webhooks/1/free/messages/@original', { body: { content: 'x' }, auth: false });
    expect(seen).toEqual(['/api/v10/webhooks/1/free/messages/@original']);
    answered();
    await edit;
    expect(seen).toEqual(['/api/v10/webhooks/1/free/messages/@original', '/api/v10/webhooks/1/held/messages/@original']);
  });

  it('sends an edit held behind a first answer that never comes back once the wait is over', async () => {
    const { api, seen } = await webhookServer();
    // A short wait in place of Discord's 3 s: the edit is what the test waits on.
    const firstAnswers = new FirstAnswersInFlight(50);
    void firstAnswers.track(new Promise<void>(() => {}));
    await createWebhookRest(api, firstAnswers).patch('/webhooks/1/held/messages/@original', { body: { content: 'x' }, auth: false });
    expect(seen).toEqual(['/api/v10/webhooks/1/held/messages/@original']);
    expect(firstAnswers.size).toBe(1);
  });
});

/**
 * A stand-in for Discord on 127.0.0.1 that answers every request with `answer` (a reset: the connection cut, no
 * answer), noting each as `METHOD path` in `seen`; and a REST client to it whose posts go as the bot's do.
 */
async function failingDiscord(answer: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ rest: REST; seen: string[]; failedPosts: number[] }> {
  const seen: string[] = [];
  const failedPosts: number[] = [];
  const server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url?.replace(/^\/api\/v10/, '')}`);
    request.resume().on('end', () => answer(request, response));
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  return { rest: new REST({ api, makeRequest: withPostsSentOnce(makeRequestWithEncodedForms, (status) => failedPosts.push(status)) }).setToken('t'), seen, failedPosts };
}

const failed = (_request: IncomingMessage, response: ServerResponse) => response.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"500: Internal Server Error","code":0}');
const reset = (request: IncomingMessage) => request.socket.resetAndDestroy();

describe('a post Discord failed on or did not answer: sent once (Discord may have made it)', () => {
  it.each([
    { what: 'a follow-up', path: '/webhooks/1/aW50ZXJhY3Rpb24?wait=true', body: { content: 'x' } },
    { what: 'a channel message without a nonce', path: '/channels/1/messages', body: { content: 'x' } },
    { what: 'a channel message whose nonce is not enforced', path: '/channels/1/messages', body: { content: 'x', nonce: 'n1', enforce_nonce: false } },
  ])('sends $what Discord failed on (5xx) once, throws its status and tells of it (a write refused)', async ({ path, body }) => {
    const { rest, seen, failedPosts } = await failingDiscord(failed);
    await expect(rest.post(path as `/${string}`, { body })).rejects.toMatchObject({ status: 500 });
    expect(seen).toEqual([`POST ${path}`]);
    expect(failedPosts).toEqual([500]);
  });

  it('sends a follow-up with files Discord failed on (5xx) once', async () => {
    const { rest, seen } = await failingDiscord(failed);
    const files = [{ name: 'a.png', data: Buffer.from('png') }];
    await expect(rest.post('/webhooks/1/aW50ZXJhY3Rpb24', { body: { content: 'x' }, files, auth: false })).rejects.toMatchObject({ status: 500 });
    expect(seen).toEqual(['POST /webhooks/1/aW50ZXJhY3Rpb24']);
  });

  it('sends a message whose connection was cut before Discord answered once, and throws with no status', async () => {
    const { rest, seen } = await failingDiscord(reset);
    const error: unknown = await rest.post('/channels/1/messages', { body: { content: 'x' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnansweredPost);
    expect((error as { status?: number }).status).toBeUndefined();
    expect(seen).toEqual(['POST /channels/1/messages']);
  });

  it('sends a message again after a 429 (nothing was made), as Discord asks', async () => {
    let answers = 0;
    const { rest, seen } = await failingDiscord((_request, response) => {
      if (answers++ === 0) response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0', 'x-ratelimit-scope': 'user' }).end('{"message":"You are being rate limited.","retry_after":0.01,"global":false}');
      else response.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"2"}');
    });
    await expect(rest.post('/channels/1/messages', { body: { content: 'x' } })).resolves.toEqual({ id: '2' });
    expect(seen).toEqual(['POST /channels/1/messages', 'POST /channels/1/messages']);
  });

  it.each([
    { what: 'an edit', method: 'PATCH' as const, path: '/channels/1/messages/2' },
    { what: 'a read', method: 'GET' as const, path: '/guilds/1/roles' },
    { what: 'an interaction callback (a second is refused, 40060)', method: 'POST' as const, path: '/interactions/1/aW50ZXJhY3Rpb24/callback' },
    { what: 'opening a DM (the same DM each time)', method: 'POST' as const, path: '/users/@me/channels' },
    { what: 'a channel message with its nonce enforced (Discord answers the one it made)', method: 'POST' as const, path: '/channels/1/messages', body: { content: 'x', nonce: 'n1', enforce_nonce: true } },
    { what: 'a channel message with files and its nonce enforced', method: 'POST' as const, path: '/channels/1/messages', body: { content: 'x', nonce: 'n1', enforce_nonce: true }, files: [{ name: 'a.png', data: Buffer.from('png') }] },
  ])('leaves $what Discord failed on (5xx) to discord.js’s own tries: it shows once however often it is sent', async ({ method, path, body = {}, files }) => {
    const { rest, seen } = await failingDiscord(failed);
    const request = method === 'GET' ? rest.get(path as `/${string}`) : method === 'PATCH' ? rest.patch(path as `/${string}`, { body }) : rest.post(path as `/${string}`, { body, files });
    await expect(request).rejects.toMatchObject({ status: 500 });
    expect(seen).toEqual(Array.from({ length: 4 }, () => `${method} ${path}`));
  });

  it('leaves an edit whose connection was cut to discord.js’s own tries', async () => {
    const { rest, seen } = await failingDiscord(reset);
    await expect(rest.patch('/channels/1/messages/2', { body: {} })).rejects.toBeInstanceOf(Error);
    expect(seen).toHaveLength(4);
  });
});

describe('what discord.js sends again, as its real REST client does it (the rule `withPostsSentOnce` copies)', () => {
  const RETRIES = 2;
  /**
   * A post through a plain discord.js client (no hook of ours) to a stand-in for Discord that answers as `answer` says
   * (`undefined`: no server listens, the connection is refused): the requests the client made, the server got, and
   * the errors its requests threw.
   */
  async function asTheClientSends(answer: ((request: IncomingMessage, response: ServerResponse) => void) | undefined): Promise<{ made: number; received: number; thrown: Error[] }> {
    let received = 0;
    const server = createServer((request, response) => {
      received++;
      if (answer) request.resume().on('end', () => answer(request, response));
    });
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    if (!answer) await new Promise((resolve) => server.close(resolve));
    const thrown: Error[] = [];
    let made = 0;
    const rest = new REST({
      api: `http://127.0.0.1:${port}/api`,
      retries: RETRIES,
      // Its own timeout, for the server that never answers.
      timeout: 300,
      makeRequest: async (url, init) => {
        made++;
        try {
          return await makeRequestWithEncodedForms(url, init);
        } catch (error) {
          thrown.push(error as Error);
          throw error;
        }
      },
    }).setToken('t');
    await rest.post('/channels/1/messages', { body: { content: 'x' } }).catch(() => undefined);
    return { made, received, thrown };
  }

  it('sends a request Discord failed on (5xx) again, its retries times: what `withPostsSentOnce` sends once', async () => {
    const { made, received } = await asTheClientSends(failed);
    expect([made, received]).toEqual([1 + RETRIES, 1 + RETRIES]);
  });

  it('sends a request again that Discord did not answer before the client’s timeout, and one whose connection was reset: both thrown errors are ones `sentAgainByDiscordJs` names', async () => {
    for (const answer of [() => undefined, reset]) {
      const { made, received, thrown } = await asTheClientSends(answer);
      expect([made, received, thrown.length]).toEqual([1 + RETRIES, 1 + RETRIES, 1 + RETRIES]);
      expect(thrown.map((error) => sentAgainByDiscordJs(error))).toEqual(thrown.map(() => true));
    }
  });

  it('does not send again a request whose connection was refused (it never reached Discord): nor does `sentAgainByDiscordJs` name its error', async () => {
    const { made, received, thrown } = await asTheClientSends(undefined);
    expect([made, received]).toEqual([1, 0]);
    expect(thrown.map((error) => sentAgainByDiscordJs(error))).toEqual([false]);
  });
});
