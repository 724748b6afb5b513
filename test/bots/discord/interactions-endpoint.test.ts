import { openBotState } from '../../../bots/state/index.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startDiscordBot } from '../../../bots/discord/index.js';
import { DISCORD_LIMITS } from '../../../bots/discord/discord-facts.js';
import { HttpInitialResponses, MAX_INTERACTION_BODY_BYTES } from '../../../bots/discord/interactions-endpoint.js';
import { FileQuotaStore, JobRunner } from '../../../bots/runner/index.js';
import { DEV_API_KEY } from '../../../src/emulator/index.js';
import { PictorClient } from '../../../src/index.js';
import { FakeDiscord } from '../../fakes/discord/FakeDiscord.js';
import { deliveringToBoth, deliveringToBothAtOnce, recordingProxy } from '../../helpers/delivering-to-both.js';
import { spyOnInstance } from '../../helpers/instance-spy.js';
import { buttonId, buttonsOf, DiscordHarness, previewByPreview, RecordingLogger } from './harness.js';

describe('interactions over HTTP: a signed POST from the fake Discord to the bot’s /interactions endpoint', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('answers Discord’s PING with a PONG, and the bot never connects to the gateway', async () => {
    h = await DiscordHarness.start({ http: true });
    expect(h.bot.interactionsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/interactions$/);
    expect(await h.discord.pingInteractionsEndpoint()).toEqual({ status: 200, body: { type: 1 } });
    expect(h.bot.online()).toBe(true);
    expect(h.discord.gatewayStats.identifies).toBe(0);
  });

  it('refuses with 401 a missing signature, a wrong one, and one over another body, and runs nothing', async () => {
    h = await DiscordHarness.start({ http: true });
    const ping = JSON.stringify({ id: '1', type: 1, token: 't', version: 1 });
    expect((await h.discord.postToInteractionsEndpoint(ping, { signature: null })).status).toBe(401);
    expect((await h.discord.postToInteractionsEndpoint(ping, { signature: 'ab'.repeat(64) })).status).toBe(401);
    expect((await h.discord.postToInteractionsEndpoint(ping, { signature: 'not hex' })).status).toBe(401);
    // A real signature of one timestamp does not cover another.
    const now = Math.floor(Date.now() / 1000);
    const real = await h.discord.postToInteractionsEndpoint(ping, { timestamp: String(now) });
    expect(real.status).toBe(200);
    expect((await h.discord.postToInteractionsEndpoint(ping, { timestamp: String(now + 1), signature: h.discord.signInteraction(String(now), ping) })).status).toBe(401);
    expect(h.logger.entries.filter((e) => e.msg === 'refused an interaction with a bad or missing signature')).toHaveLength(4);
  });

  it('refuses a body over its bound before checking anything, answers only POST /interactions, and only interactions', async () => {
    h = await DiscordHarness.start({ http: true });
    const huge = JSON.stringify({ type: 1, pad: 'x'.repeat(MAX_INTERACTION_BODY_BYTES) });
    expect((await h.discord.postToInteractionsEndpoint(huge)).status).toBe(413);
    const url = h.bot.interactionsUrl!;
    expect((await fetch(url)).status).toBe(405);
    expect((await fetch(url.replace(/\/interactions$/, '/other'), { method: 'POST', body: '{}' })).status).toBe(404);
    // Signed, but not an interaction.
    expect((await h.discord.postToInteractionsEndpoint('null')).status).toBe(400);
    expect((await h.discord.postToInteractionsEndpoint('{"type":2}')).status).toBe(400);
    expect((await h.discord.postToInteractionsEndpoint('not json')).status).toBe(400);
  });

  it('refuses a body that passes its bound as it arrives, with no length declared (413), without waiting for its end', async () => {
    h = await DiscordHarness.start({ http: true });
    const url = new URL(h.bot.interactionsUrl!);
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode);
        req.destroy();
      });
      // An error after the answer (the request destroyed above) changes nothing: the promise is settled.
      req.on('error', reject);
      // Past the bound, in pieces, and never ended: the answer comes before the body does.
      for (let sent = 0; sent <= MAX_INTERACTION_BODY_BYTES; sent += 1024) req.write('x'.repeat(1024));
    });
    expect(status).toBe(413);
  });

  it('runs /imagine: the answer to the POST is the deferral, then the queue, each preview and the final image', async () => {
    h = await DiscordHarness.start({ http: true, emulator: { latencyMs: 600 }, holdEvent: previewByPreview });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a lighthouse at dusk', quality: 'low' });
    const final = await h.finalReply(ix);

    expect(ix.via).toBe('http');
    expect(ix.httpStatus).toBe(200);
    expect(ix.ack?.type).toBe(5);
    // Nothing went to the callback endpoint: the HTTP answer was the initial response.
    expect(h.discord.requests.filter((r) => r.route === 'interaction-callback')).toEqual([]);
    const history = final.history.map((s) => ({ via: s.via, status: s.content.split('\n')[1], files: s.attachments.map((a) => a.filename) }));
    expect(history.slice(0, 5)).toEqual([
      { via: 'callback', status: undefined, files: [] },
      { via: 'webhook', status: '⏳ Next in line…', files: [] },
      { via: 'webhook', status: '🎨 Drawing the image…', files: [] },
      { via: 'webhook', status: '🎨 Drawing… preview 1', files: ['preview-1-1.jpg'] },
      { via: 'webhook', status: '🎨 Drawing… preview 2', files: ['preview-1-2.jpg'] },
    ]);
    expect(final.content.split('\n')[1]).toMatch(/^1024x1024 · low · png · \$0\.0064 · /);
    expect(final.attachments).toHaveLength(1);
    expect(buttonsOf(final).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
  });

  it('answers an option mistake privately in the response itself, before anything is spent', async () => {
    h = await DiscordHarness.start({ http: true });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a sticker', background: 'transparent', format: 'jpeg' });
    const reply = await h.discord.waitFor(() => h.discord.original(ix), 'the reply');
    expect(ix.ack?.type).toBe(4);
    expect(reply.flags & 64).toBe(64);
    // In the words of this surface's options (the sentence itself is the runner's: describe-failure.test.ts).
    expect(reply.content).toContain('The format option is not valid: format must be png or webp when background is transparent');
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('runs an interaction POSTed twice (a replay, a proxy that retries) once, and refuses the second POST with 409', async () => {
    h = await DiscordHarness.start({ http: true, partialImages: 0 });
    const proxy = await deliveringToBoth(h.bot.interactionsUrl!, h.bot.interactionsUrl!);
    try {
      h.discord.interactionsEndpoint = proxy.url;
      const ix = h.discord.slashCommand('imagine', { prompt: 'a pear', quality: 'low' });
      expect((await h.finalReply(ix)).attachments).toHaveLength(1);
      expect(ix.httpStatus).toBe(200);
      expect(await proxy.secondStatus).toBe(409);
      expect(h.emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('takes an interaction POSTed twice at once (a retry while the first is in flight) once: one 200, one 409, one image request', async () => {
    h = await DiscordHarness.start({ http: true, partialImages: 0 });
    const proxy = await deliveringToBothAtOnce(h.bot.interactionsUrl!, h.bot.interactionsUrl!);
    try {
      h.discord.interactionsEndpoint = proxy.url;
      h.discord.slashCommand('imagine', { prompt: 'a pear', quality: 'low' });
      // Either POST may take it; the answer Discord gets may be the refused one, so the job's messages are not awaited.
      expect((await proxy.statuses).toSorted()).toEqual([200, 409]);
      await h.discord.waitFor(() => h.emulator.requests.some((r) => r.route === 'generations'), 'the image request');
      expect(h.emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('refuses an interaction replayed after a restart without Redis (the ids taken are kept in the data folder): nothing is sent again', async () => {
    h = await DiscordHarness.start({ http: true, partialImages: 0 });
    const recorder = await recordingProxy(h.bot.interactionsUrl!);
    try {
      h.discord.interactionsEndpoint = recorder.url;
      const ix = h.discord.slashCommand('imagine', { prompt: 'a pear', quality: 'low' });
      expect((await h.finalReply(ix)).attachments).toHaveLength(1);
      await h.restart();
      const before = h.discord.requests.length;
      // Its deadline counts from when the replay arrived, however long ago its id says it was made: its id is found taken.
      expect(await recorder.replayTo(h.bot.interactionsUrl!)).toBe(409);
      expect(h.emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(1);
      // Nothing reached Discord either: the replay got no answer but the 409.
      expect(h.discord.requests.slice(before).filter((r) => r.method !== 'GET')).toEqual([]);
    } finally {
      await recorder.close();
    }
  });

  it('refuses an interaction with 503 when the state cannot check it, and takes the same POST sent again (a proxy’s retry) once the state answers', async () => {
    h = await DiscordHarness.start({ http: true, partialImages: 0 });
    const recorder = await recordingProxy(h.bot.interactionsUrl!);
    const taken = h.state.store.space(h.state.spaces.discordInteractions);
    const claimOnce = taken.claimOnce.bind(taken);
    let claims = 0;
    vi.spyOn(taken, 'claimOnce').mockImplementation((key) => (++claims === 1 ? Promise.reject(new Error('the state does not answer')) : claimOnce(key)));
    try {
      h.discord.interactionsEndpoint = recorder.url;
      const ix = h.discord.slashCommand('imagine', { prompt: 'a pear', quality: 'low' });
      await h.discord.waitFor(() => ix.httpStatus, 'the answer to the first POST');
      expect(ix.httpStatus).toBe(503);
      expect(h.emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(0);
      expect(await recorder.replayTo(h.bot.interactionsUrl!)).toBe(200);
      await h.discord.waitFor(() => h.emulator.requests.some((r) => r.route === 'generations'), 'the image request');
      expect(claims).toBe(2);
    } finally {
      await recorder.close();
    }
  });

  it('holds a POST only until Discord’s 3 s from its arrival are over, the wait for its claim counted in (never a fresh 3 s after it)', async () => {
    h = await DiscordHarness.start({ http: true, partialImages: 0 });
    // The claim takes 1.4 s by the bot's clock.
    let token: string | undefined;
    const { held } = claimTaking(h, 1_400, () => token);
    try {
      const ix = h.discord.slashCommand('imagine', { prompt: 'a pear', quality: 'low' });
      token = ix.token;
      await h.discord.waitFor(() => ix.httpStatus, 'the answer to the POST');
      expect(held).toHaveBeenCalledTimes(1);
      expect(held.mock.calls[0]![3]).toBeLessThanOrEqual(DISCORD_LIMITS.acknowledgeMs - 1_400);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('counts every wait before the first answer with its ackDeadlineMs, as it counts its hold of the POST: one number decides both', async () => {
    // A deadline of 10 s, on both sides; the claim takes 4 s of it by the bot's clock (past Discord's usual 3 s).
    h = await DiscordHarness.start({ http: true, partialImages: 0, endpointAckDeadlineMs: 10_000, discord: { ackDeadlineMs: 10_000 } });
    let token: string | undefined;
    const { held } = claimTaking(h, 4_000, () => token);
    try {
      const ix = h.discord.slashCommand('imagine', { prompt: 'a pear', quality: 'low' });
      token = ix.token;
      // Its intake (the runner's reads and reservation) still had time: the job is sent.
      await h.discord.waitFor(() => h.emulator.requests.some((r) => r.route === 'generations'), 'the image request');
      expect(ix.httpStatus).toBe(200);
      expect(held).toHaveBeenCalledTimes(1);
      expect(held.mock.calls[0]![3]).toBeGreaterThan(DISCORD_LIMITS.acknowledgeMs);
      expect(held.mock.calls[0]![3]).toBeLessThanOrEqual(10_000 - 4_000);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it.each([0, 500, Infinity, NaN, -1, 2 ** 31])('refuses an ackDeadlineMs of %s, naming it, before it connects or takes a port', async (ackDeadlineMs) => {
    // At or under the answer's own trip every interaction would get a 503 (no time left to claim it); NaN, Infinity or
    // more than a timer waits would reach setTimeout as 1 ms, and every claim would run out at once.
    const start = startDiscordBot({
      token: 'unused',
      runner: {} as never,
      state: {} as never,
      logger: {} as never,
      interactions: { publicKey: '00'.repeat(32), host: '127.0.0.1', port: 0, ackDeadlineMs },
    });
    await expect(start).rejects.toThrow(RangeError);
    await expect(start).rejects.toThrow(/ackDeadlineMs/);
  });

  it('takes an ackDeadlineMs just over the answer’s own trip, and answers a PING with it', async () => {
    h = await DiscordHarness.start({ http: true, endpointAckDeadlineMs: 501 });
    expect(await h.discord.pingInteractionsEndpoint()).toEqual({ status: 200, body: { type: 1 } });
  });

  it('shares the work between two processes behind a load balancer, each interaction answered by one of them', async () => {
    h = await DiscordHarness.start({ http: true, partialImages: 0 });
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-discord-second-'));
    const quota = new FileQuotaStore({ dir: dataDir });
    const logger = new RecordingLogger();
    const runner = new JobRunner({ client: new PictorClient({ baseURL: h.emulatorUrl, apiKey: DEV_API_KEY, maxRetries: 0 }), store: quota, limits: {}, partialImages: 0, logger });
    const state = await openBotState({ dataDir, ledger: quota, logger });
    const second = await startDiscordBot({
      token: h.discord.botToken,
      apiBaseUrl: h.discord.apiBaseUrl,
      runner,
      state,
      logger,
      allowedAttachmentHosts: [h.discord.cdnHost],
      interactions: { publicKey: h.discord.publicKeyHex, host: '127.0.0.1', port: 0 },
    });
    const balancer = await roundRobin([h.bot.interactionsUrl!, second.interactionsUrl!]);
    try {
      h.discord.interactionsEndpoint = balancer.url;
      const asked = ['a pear', 'a plum', 'a fig', 'a lime'].map((prompt) => h.discord.slashCommand('imagine', { prompt, quality: 'low' }));
      for (const ix of asked) expect((await h.finalReply(ix)).attachments).toHaveLength(1);
      const completedBy = (l: RecordingLogger) => l.entries.filter((e) => e.msg === 'job completed').length;
      expect([completedBy(h.logger), completedBy(logger)]).toEqual([2, 2]);
      expect(asked.map((ix) => ix.callbackAttempts)).toEqual([1, 1, 1, 1]);
      expect(h.emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(4);
    } finally {
      await balancer.close();
      await runner.shutdown({ graceMs: 0 });
      await second.stop();
      await state.close();
      await quota.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('keeps the buttons working after a restart: Reroll, and Edit with its modal', async () => {
    h = await DiscordHarness.start({ http: true, partialImages: 0 });
    const first = h.discord.slashCommand('imagine', { prompt: 'a red kite', quality: 'low' });
    const result = await h.finalReply(first);

    await h.restart();
    const reroll = h.discord.clickButton(result, buttonId(result, 'Reroll'));
    const rerolled = await h.finalReply(reroll);
    expect(reroll.via).toBe('http');
    expect(reroll.ack?.type).toBe(5);
    expect(rerolled.id).not.toBe(result.id);
    expect(rerolled.attachments).toHaveLength(1);

    const edit = h.discord.clickButton(result, buttonId(result, 'Edit'));
    await h.discord.waitFor(() => edit.modal, 'the edit modal');
    expect(edit.ack?.type).toBe(9);
    const submit = h.discord.submitModal(edit, { prompt: 'add a storm' });
    const edited = await h.finalReply(submit);
    expect(edited.attachments).toHaveLength(1);
    expect(h.emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(2);
    expect(h.emulator.requests.filter((r) => r.route === 'edits').at(-1)!.fields).toMatchObject({ prompt: 'add a storm' });
    expect(h.discord.requests.filter((r) => r.route === 'interaction-callback')).toEqual([]);
  });
});

describe('the fake Discord’s rules for interactions endpoints, as Discord’s: an answer after 3 s, or one too large, counts as failed', () => {
  let discord: FakeDiscord | undefined;
  let endpoint: Server | undefined;
  afterEach(async () => {
    endpoint?.closeAllConnections();
    await new Promise((resolve) => endpoint?.close(resolve));
    await discord?.close();
  });

  it('does not take a deferral that comes too late: the interaction is not acknowledged and its token edits nothing', async () => {
    discord = await FakeDiscord.start({ ackDeadlineMs: 200 });
    let deferred!: () => void;
    const deferralSent = new Promise<void>((resolve) => (deferred = resolve));
    endpoint = createServer((_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 5 }));
        deferred();
      }, 400);
    });
    await new Promise<void>((resolve) => endpoint!.listen(0, '127.0.0.1', resolve));
    discord.interactionsEndpoint = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/interactions`;
    const ix = discord.slashCommand('imagine', { prompt: 'too slow' });
    await deferralSent;
    // The fake takes a webhook call with the interaction's token once it is done with the endpoint's answer.
    const edit = await fetch(`${discord.apiBaseUrl}/v10/webhooks/${discord.applicationId}/${ix.token}/messages/@original`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'late' }),
    });
    expect(ix.ack).toBeUndefined();
    expect(ix.httpStatus).toBeUndefined();
    expect(edit.status).toBe(404);
    expect(await edit.json()).toMatchObject({ code: 10015 });
  });

  it('does not take a reply of more than 25 MiB, as it refuses such a request to send a message: the interaction is not acknowledged and no message is made', async () => {
    discord = await FakeDiscord.start();
    // Three files of 9 MiB: each within the 10 MiB a file may have, 27 MiB together.
    const form = new FormData();
    form.set('payload_json', JSON.stringify({ type: 4, data: { content: 'three images', attachments: [0, 1, 2].map((id) => ({ id, filename: `${id}.png` })) } }));
    for (const id of [0, 1, 2]) form.set(`files[${id}]`, new Blob([new Uint8Array(9 * 1024 * 1024)], { type: 'image/png' }), `${id}.png`);
    const encoded = new Response(form);
    const type = encoded.headers.get('content-type')!;
    const reply = Buffer.from(await encoded.arrayBuffer());
    let replied!: () => void;
    const replySent = new Promise<void>((resolve) => (replied = resolve));
    endpoint = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': type }).end(reply);
      replied();
    });
    await new Promise<void>((resolve) => endpoint!.listen(0, '127.0.0.1', resolve));
    discord.interactionsEndpoint = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/interactions`;
    const ix = discord.slashCommand('imagine', { prompt: 'too large together' });
    await replySent;
    // The fake takes a webhook call with the interaction's token once it is done with the endpoint's answer.
    const edit = await fetch(`${discord.apiBaseUrl}/v10/webhooks/${discord.applicationId}/${ix.token}/messages/@original`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'smaller' }),
    });
    expect(reply.length).toBeGreaterThan(25 * 1024 * 1024);
    expect(ix.ack).toBeUndefined();
    expect([...discord.messages.values()].filter((m) => m.interactionId === ix.id)).toEqual([]);
    expect(edit.status).toBe(404);
    expect(await edit.json()).toMatchObject({ code: 10015 });
  });
});

describe('HttpInitialResponses: discord.js’s callback request becomes the answer to Discord’s POST', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  /** A server whose every request waits (up to `waitMs`) for the initial response of interaction 42. */
  async function endpoint(responses: HttpInitialResponses, waitMs = 3000): Promise<{ url: string; taken: Promise<ServerResponse> }> {
    let take!: (res: ServerResponse) => void;
    const taken = new Promise<ServerResponse>((resolve) => (take = resolve));
    server = createServer((_req, res) => {
      void responses.expect('42', 'tok', res, waitMs);
      take(res);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/interactions`, taken };
  }

  const callbackUrl = 'https://discord.test/api/v10/interactions/42/tok/callback?with_response=false';
  const deferral = { method: 'POST', body: JSON.stringify({ type: 5 }), headers: { 'Content-Type': 'application/json' } };
  const neverCalled = async () => {
    throw new Error('sent to the callback endpoint');
  };

  it('writes the callback body into the pending HTTP response and tells discord.js it went through', async () => {
    const responses = new HttpInitialResponses();
    const { url, taken } = await endpoint(responses);
    const post = fetch(url, { method: 'POST', body: '{}' });
    await taken;
    const answered = await responses.wrap(neverCalled)(callbackUrl, deferral);
    expect(answered.status).toBe(204);
    const res = await post;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ type: 5 });
  });

  it('sends the callback to Discord’s callback endpoint when Discord hung up before the answer (Discord then says whether it still takes it)', async () => {
    const responses = new HttpInitialResponses();
    const { url, taken } = await endpoint(responses);
    const abort = new AbortController();
    const post = fetch(url, { method: 'POST', body: '{}', signal: abort.signal }).catch(() => 'aborted');
    const res = await taken;
    abort.abort();
    await new Promise((resolve) => res.once('close', resolve));
    expect(await post).toBe('aborted');
    const sent: string[] = [];
    const answered = await responses.wrap(async (u) => {
      sent.push(u);
      return Response.json({ message: 'Unknown interaction', code: 10062 }, { status: 404 });
    })(callbackUrl, deferral);
    expect(sent).toEqual([callbackUrl]);
    expect(answered.status).toBe(404);
  });

  it('sends the callback to Discord once the wait for it is over, and for interactions it does not hold', async () => {
    const responses = new HttpInitialResponses();
    const { url, taken } = await endpoint(responses, 50);
    const post = fetch(url, { method: 'POST', body: '{}' });
    await taken;
    expect((await post).status).toBe(500);
    const sent: string[] = [];
    const inner = async (u: string) => {
      sent.push(u);
      return new Response(null, { status: 204 });
    };
    await responses.wrap(inner)(callbackUrl, deferral);
    await responses.wrap(inner)('https://discord.test/api/v10/interactions/43/other/callback', deferral);
    expect(sent).toHaveLength(2);
  });
});

/** A load balancer that sends each request to the next of `targets` in turn. */
/**
 * The interaction's claim takes `ms` by the bot's clock (Date.now moves on as it answers); `held` spies on the POST's
 * hold of the interaction whose token `token` answers (this test's, not another file's).
 */
function claimTaking(harness: DiscordHarness, ms: number, token: () => string | undefined) {
  const taken = harness.state.store.space(harness.state.spaces.discordInteractions);
  const claimOnce = taken.claimOnce.bind(taken);
  const realNow = Date.now.bind(Date);
  let shift = 0;
  const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + shift);
  vi.spyOn(taken, 'claimOnce').mockImplementation(async (key) => {
    const took = await claimOnce(key);
    shift += ms;
    return took;
  });
  return { clock, held: spyOnInstance(HttpInitialResponses.prototype, 'expect', (_responses, _id, held) => held === token()) };
}

async function roundRobin(targets: string[]): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const server = createServer((req, res) => {
    const target = new URL(targets[next++ % targets.length]!);
    const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/interactions`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
