import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { REST } from 'discord.js';
import { request, type Agent } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DISCORD_LIMITS } from '../../../bots/discord/discord-facts.js';
import { madeNothing, NonceWindow, postWithNonce } from '../../../bots/discord/nonce-window.js';
import { discordAuditPoster } from '../../../bots/discord/audit-poster.js';
import { AuditPostLost, type AuditEntry } from '../../../bots/runner/index.js';
import { discordAgent, makeRequestWithEncodedForms, withPostsSentOnce } from '../../../bots/discord/rest-request.js';

const agents: Agent[] = [];
const servers: Server[] = [];
const held: (() => void)[] = [];
afterEach(async () => {
  for (const release of held.splice(0)) release();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
  await Promise.all(agents.splice(0).map((a) => a.close()));
});

/**
 * A stand-in for Discord on 127.0.0.1 that notes each request it receives with the time on `clock` then; a request to
 * `/busy` is held (an upload holding the connection) until `release` is called.
 */
async function discordHoldingAnUpload(clock: { t: number }): Promise<{ api: string; origin: string; received: { path: string; at: number }[]; release: () => void }> {
  const received: { path: string; at: number }[] = [];
  let busy: ServerResponse | undefined;
  const server = createServer((req, res) => {
    received.push({ path: req.url ?? '', at: clock.t });
    req.resume().on('end', () => {
      if (req.url === '/busy') busy = res;
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: '1' }));
    });
  });
  servers.push(server);
  held.push(() => busy?.end());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { api: `${origin}/api`, origin, received, release: () => busy?.end('ok') };
}

describe('a message with an enforced nonce: no request of it leaves after Discord may have forgotten its nonce', () => {
  it('refuses a request that passed the check but waited for a connection of the shared pool past the window: Discord never receives it', async () => {
    const clock = { t: 0 };
    const discord = await discordHoldingAnUpload(clock);
    const agent = discordAgent(1);
    agents.push(agent);
    const rest = new REST({ api: discord.api, timeout: 600_000, makeRequest: withPostsSentOnce(makeRequestWithEncodedForms), agent: agent as never }).setToken('t');
    // An upload holds the pool's one connection (32 in the bot, shared with every upload).
    const upload = request(`${discord.origin}/busy`, { dispatcher: agent, method: 'POST', body: 'x' });
    await vi.waitFor(() => expect(discord.received.map((r) => r.path)).toEqual(['/busy']));
    // A send again of a message first sent at t=0 (Discord may have made it): within the window at 119 s.
    clock.t = 119_000;
    const window = new NonceWindow({ sentMsAgo: clock.t, now: () => clock.t });
    const post = postWithNonce(rest, '1', { body: { content: 'x' } }, window);
    await vi.waitFor(() => expect(Object.values(agent.stats).map((s) => (s as { pending?: number }).pending)).toEqual([1]));
    // The connection is free 56 s later: past the window, the waiting request is not written.
    clock.t = 175_000;
    discord.release();
    await (await upload).body.text();
    await expect(post).rejects.toMatchObject({ code: 'nonce_window_over', mayHaveMade: true });
    expect(discord.received.map((r) => r.path)).toEqual(['/busy']);
  });

  it('sends a request that reaches a connection within the window, and counts the window from when the first was written', async () => {
    const clock = { t: 0 };
    const discord = await discordHoldingAnUpload(clock);
    const agent = discordAgent(1);
    agents.push(agent);
    const rest = new REST({ api: discord.api, timeout: 600_000, makeRequest: withPostsSentOnce(makeRequestWithEncodedForms), agent: agent as never }).setToken('t');
    const upload = request(`${discord.origin}/busy`, { dispatcher: agent, method: 'POST', body: 'x' });
    await vi.waitFor(() => expect(discord.received.map((r) => r.path)).toEqual(['/busy']));
    const window = new NonceWindow({ now: () => clock.t });
    const post = postWithNonce(rest, '1', { body: { content: 'x' } }, window);
    await vi.waitFor(() => expect(Object.values(agent.stats).map((s) => (s as { pending?: number }).pending)).toEqual([1]));
    // It waited 100 s for the connection: its window starts as it is written, not as it was handed to the pool.
    clock.t = 100_000;
    discord.release();
    await (await upload).body.text();
    await expect(post).resolves.toMatchObject({ id: '1' });
    expect(discord.received).toEqual([{ path: '/busy', at: 0 }, { path: '/api/v10/channels/1/messages', at: 100_000 }]);
    clock.t = 100_000 + DISCORD_LIMITS.nonceKeptMs - 1;
    expect(window.open).toBe(true);
  });

  it('does not count as sent a request given up on (as its REST timeout does) while it waited for a connection: Discord never receives it, and a next try with a new nonce is delivered once', async () => {
    const clock = { t: 0 };
    const discord = await discordHoldingAnUpload(clock);
    const agent = discordAgent(1);
    agents.push(agent);
    // The first request is given up on when the test says, as discord.js's REST timeout gives up on one: it aborts the
    // request's signal (no timer decides when).
    const giveUp = new AbortController();
    let requests = 0;
    const makeRequest: typeof makeRequestWithEncodedForms = (url, init) => {
      const first = requests++ === 0;
      const signal = first && init.signal ? AbortSignal.any([init.signal as AbortSignal, giveUp.signal]) : init.signal;
      return makeRequestWithEncodedForms(url, { ...init, signal });
    };
    const rest = new REST({ api: discord.api, timeout: 600_000, retries: 0, makeRequest: withPostsSentOnce(makeRequest), agent: agent as never }).setToken('t');
    const upload = request(`${discord.origin}/busy`, { dispatcher: agent, method: 'POST', body: 'x' });
    await vi.waitFor(() => expect(discord.received.map((r) => r.path)).toEqual(['/busy']));
    const window = new NonceWindow({ now: () => clock.t });
    const post = postWithNonce(rest, '1', { body: { content: 'x' } }, window);
    await vi.waitFor(() => expect(Object.values(agent.stats).map((s) => (s as { pending?: number }).pending)).toEqual([1]));
    // Given up on while it waits behind the upload; it ends when the pool hands it the connection, unwritten.
    giveUp.abort();
    discord.release();
    await (await upload).body.text();
    await expect(post).rejects.toMatchObject({ name: 'AbortError' });
    expect(discord.received.map((r) => r.path)).toEqual(['/busy']);
    expect(window.mayHaveMade).toBe(false);
    // Its window never started: nothing of the nonce was written.
    clock.t = 200_000;
    expect(window.open).toBe(true);
    await expect(postWithNonce(rest, '1', { body: { content: 'x' } }, new NonceWindow({ now: () => clock.t }))).resolves.toMatchObject({ id: '1' });
    expect(discord.received.map((r) => r.path)).toEqual(['/busy', '/api/v10/channels/1/messages']);
  });
});

/** How a send of a message ends, its one request taken by the pool of connections it goes out over. */
type Ending = '403' | '429' | '500' | 'connection reset' | 'aborted before it was written' | 'aborted after it was written';

/**
 * A REST client whose requests go through `withPostsSentOnce` to a stand-in for undici's pool, which takes each request,
 * writes it to a connection (calls its `onConnect`) unless it ends `aborted before it was written`, and ends it as
 * `ending` says. No tries again by discord.js; a 429 is given up on (`RateLimitError`).
 */
function restEndingSo(ending: Ending): REST {
  let taken: { onConnect: (abort: (reason?: Error) => void) => void } | undefined;
  const pool = { dispatch: (_options: unknown, handler: typeof taken) => ((taken = handler), true) };
  const makeRequest: typeof makeRequestWithEncodedForms = async (_url, init) => {
    (init.dispatcher as unknown as typeof pool).dispatch({}, { onConnect: () => undefined });
    if (ending !== 'aborted before it was written') taken?.onConnect(() => undefined);
    const answer = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'retry-after': '1' } });
    switch (ending) {
      case '403':
        return answer(403, { code: 50013, message: 'Missing Permissions' });
      case '429':
        return answer(429, { message: 'You are being rate limited.', retry_after: 1, global: false });
      case '500':
        return answer(500, { message: 'Internal Server Error', code: 0 });
      case 'connection reset':
        throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
      default:
        throw Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    }
  };
  return new REST({ api: 'http://127.0.0.1:9/api', retries: 0, rejectOnRateLimit: () => true, makeRequest: withPostsSentOnce(makeRequest), agent: pool as never }).setToken('t');
}

describe('whether a send of a message made nothing: one answer for the window, the reply target and the audit poster', () => {
  const cases: [Ending, boolean][] = [
    ['403', true],
    ['429', true],
    ['500', false],
    ['connection reset', false],
    ['aborted before it was written', true],
    ['aborted after it was written', false],
  ];
  it.each(cases)('a send that ended %s made nothing: %s', async (ending, nothing) => {
    const window = new NonceWindow();
    const failure: unknown = await postWithNonce(restEndingSo(ending), '1', { body: { content: 'x' } }, window).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(window.mayHaveMade).toBe(!nothing);
    expect(madeNothing(failure)).toBe(nothing);
    // The audit poster throws a post that made nothing as it failed (tried again later), else as lost (it may be there).
    const entry: AuditEntry = { type: 'job', userId: 'U', channelId: 'C', kind: 'generate', prompt: 'a fox', status: 'completed', at: 0 };
    const audit: unknown = await discordAuditPoster(restEndingSo(ending))
      .post({ platform: 'discord', scopeId: 'G', channelId: 'C', locale: 'en', entries: [entry], skipped: 0, nonce: 'n'.repeat(24) })
      .catch((error: unknown) => error);
    expect(audit instanceof AuditPostLost).toBe(!nothing);
  });
});

describe('a message with an enforced nonce on a REST client that checks no window', () => {
  it('fails loudly the first time (its request left unchecked: it may be there), and sends nothing after', async () => {
    const posted: unknown[] = [];
    const makeRequest: typeof makeRequestWithEncodedForms = async (_url, init) => (posted.push(init.body), new Response(JSON.stringify({ id: '1' }), { status: 200, headers: { 'content-type': 'application/json' } }));
    // Built without `withPostsSentOnce`: nothing checks its requests against their window.
    const rest = new REST({ api: 'http://127.0.0.1:9/api', makeRequest }).setToken('t');
    const first: unknown = await postWithNonce(rest, '1', { body: { content: 'x' } }, new NonceWindow()).catch((error: unknown) => error);
    expect(first).toMatchObject({ code: 'internal_error', mayHaveMade: true });
    expect(madeNothing(first)).toBe(false);
    expect(posted).toHaveLength(1);
    const second: unknown = await postWithNonce(rest, '1', { body: { content: 'x' } }, new NonceWindow()).catch((error: unknown) => error);
    expect(second).toMatchObject({ code: 'internal_error', mayHaveMade: false });
    expect(madeNothing(second)).toBe(true);
    expect(posted).toHaveLength(1);
  });

  it('says a message may be there when it is posted again on that client after its first post went out unchecked', async () => {
    const posted: unknown[] = [];
    const makeRequest: typeof makeRequestWithEncodedForms = async (_url, init) => (posted.push(init.body), new Response(JSON.stringify({ id: '1' }), { status: 200, headers: { 'content-type': 'application/json' } }));
    const rest = new REST({ api: 'http://127.0.0.1:9/api', makeRequest }).setToken('t');
    const window = new NonceWindow();
    await postWithNonce(rest, '1', { body: { content: 'x' } }, window).catch(() => undefined);
    // Sent again with the same nonce (a reply's try again, a Cancel's end): nothing is sent, and the first may have made it.
    const again: unknown = await postWithNonce(rest, '1', { body: { content: 'x' } }, window).catch((error: unknown) => error);
    expect(again).toMatchObject({ code: 'internal_error', mayHaveMade: true });
    expect(madeNothing(again)).toBe(false);
    expect(posted).toHaveLength(1);
  });

  it('sends every post of a client that checks windows as before', async () => {
    const rest = new REST({ api: 'http://127.0.0.1:9/api', makeRequest: withPostsSentOnce(async () => new Response(JSON.stringify({ id: '1' }), { status: 200, headers: { 'content-type': 'application/json' } })) }).setToken('t');
    await expect(postWithNonce(rest, '1', { body: { content: 'x' } }, new NonceWindow())).resolves.toMatchObject({ id: '1' });
    await expect(postWithNonce(rest, '1', { body: { content: 'x' } }, new NonceWindow())).resolves.toMatchObject({ id: '1' });
  });
});
