import { DiscordAPIError, HTTPError, REST } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { discordAuditPoster } from '../../../bots/discord/audit-poster.js';
import { DISCORD_LIMITS } from '../../../bots/discord/discord-facts.js';
import { nonceWindowOf } from '../../../bots/discord/nonce-window.js';
import { makeRequestWithEncodedForms, withPostsSentOnce } from '../../../bots/discord/rest-request.js';
import { FakeDiscord } from '../../fakes/discord/FakeDiscord.js';
import { AUDIT_PROMPT_MAX, AuditPostLost, auditSkippedNote, type AuditEntry } from '../../../bots/runner/index.js';

/** A REST client that keeps the bodies it was given. */
function recordingRest(): { rest: REST; bodies: Record<string, unknown>[] } {
  const bodies: Record<string, unknown>[] = [];
  const rest = { post: async (_route: string, options: { body: Record<string, unknown> }) => (bodies.push(options.body), { id: '1' }) } as unknown as REST;
  return { rest, bodies };
}

/**
 * A REST client whose posts fail with `error`, each noted in `made` first (Discord made it, then the answer was lost):
 * a post with a nonce goes through its window as `withPostsSentOnce` sends it.
 */
function failingRest(error: Error, made: Record<string, unknown>[] = []): REST {
  const post = async (_route: string, options: { body: Record<string, unknown> }) => {
    const window = typeof options.body.nonce === 'string' ? nonceWindowOf(options.body.nonce) : undefined;
    const request = async (): Promise<never> => (made.push(options.body), Promise.reject(error));
    return window ? window.send(request) : request();
  };
  return { post } as unknown as REST;
}

describe('audit posts on Discord', () => {
  it('fit ten entries with the longest prompts, all markdown, in one message: 10 embeds, at most 6,000 characters', async () => {
    const { rest, bodies } = recordingRest();
    const poster = discordAuditPoster(rest);
    const prompt = '*_~`|>'.repeat(AUDIT_PROMPT_MAX / 6);
    const entry: AuditEntry = { type: 'job', userId: '123456789012345678', channelId: '123456789012345679', kind: 'edit', prompt, n: 10, size: '1536x1024', quality: 'high', status: 'completed', costUsd: 2.5, link: `https://discord.com/channels/${'1'.repeat(19)}/${'2'.repeat(19)}/${'3'.repeat(19)}`, at: 0 };
    await poster.post({ platform: 'discord', scopeId: 'G', channelId: 'C', locale: 'de', entries: Array.from({ length: poster.maxEntries }, () => entry), skipped: 7 });
    const embeds = bodies[0]!.embeds as { description: string }[];
    expect(embeds).toHaveLength(10);
    expect(embeds.reduce((n, e) => n + e.description.length, 0)).toBeLessThanOrEqual(6000);
    expect(embeds[0]!.description).toContain('> \\*\\_');
    expect(bodies[0]!.content).toBe(`⚠️ ${auditSkippedNote(7, 'de')}`);
    expect(bodies[0]!.allowed_mentions).toEqual({ parse: [] });
  });

  it('fails a post whose embeds Discord dropped (no Embed Links there), though its text was kept', async () => {
    const rest = { post: async () => ({ id: '1', content: '⚠️ …', embeds: [] }) } as unknown as REST;
    const entry: AuditEntry = { type: 'refusal', userId: 'U', channelId: 'C', kind: 'generate', prompt: 'a fox', status: 'blocked_word', at: 0 };
    await expect(discordAuditPoster(rest).post({ platform: 'discord', scopeId: 'G', channelId: 'C', locale: 'en', entries: [entry], skipped: 3 })).rejects.toMatchObject({ problem: 'no_permission', platformCode: 'embed_links' });
  });

  it('sends each message with its nonce, enforced; a post whose answer was lost (made, then timed out) is AuditPostLost, a refusal as Discord said it', async () => {
    const entry: AuditEntry = { type: 'job', userId: 'U', channelId: 'C', kind: 'generate', prompt: 'a fox', status: 'completed', at: 0 };
    const made: Record<string, unknown>[] = [];
    // Discord makes the message, then the answer is lost on its way back (the request times out).
    const timingOut = failingRest(Object.assign(new Error('This operation was aborted'), { name: 'AbortError' }), made);
    const post = (rest: REST) => discordAuditPoster(rest).post({ platform: 'discord', scopeId: 'G', channelId: 'C', locale: 'en', entries: [entry], skipped: 0, nonce: 'n'.repeat(24) });
    await expect(post(timingOut)).rejects.toBeInstanceOf(AuditPostLost);
    expect(made[0]).toMatchObject({ nonce: 'n'.repeat(24), enforce_nonce: true });
    expect(discordAuditPoster(timingOut).replayMs).toBe(DISCORD_LIMITS.nonceKeptMs);
    const refusal = new DiscordAPIError({ code: 50013, message: 'Missing Permissions' }, 50013, 403, 'POST', '/channels/C/messages', {});
    await expect(post(failingRest(refusal))).rejects.toBe(refusal);
  });

  it('sends nothing of a replay once Discord no longer keeps its nonce (counted from its first send), and says its message may be there (the first send may have made it)', async () => {
    const discord = await FakeDiscord.start();
    try {
      const rest = new REST({ api: discord.apiBaseUrl, makeRequest: withPostsSentOnce(makeRequestWithEncodedForms) }).setToken(discord.botToken);
      const entry: AuditEntry = { type: 'job', userId: 'U', channelId: 'C', kind: 'generate', prompt: 'a fox', status: 'completed', at: 0 };
      const replay = { platform: 'discord' as const, scopeId: 'G', channelId: discord.channelId, locale: 'en', entries: [entry], skipped: 0, nonce: 'n'.repeat(24) };
      // A replay of a post first sent longer ago than Discord keeps its nonce: a send now could make a second message.
      const late = discordAuditPoster(rest).post({ ...replay, sentMsAgo: DISCORD_LIMITS.nonceKeptMs });
      await expect(late).rejects.toBeInstanceOf(AuditPostLost);
      await expect(late).rejects.toMatchObject({ code: 'nonce_window_over' });
      expect(discord.requests.filter((r) => r.route === 'channel-message')).toEqual([]);
      // Within it, it is sent.
      await expect(discordAuditPoster(rest).post({ ...replay, sentMsAgo: DISCORD_LIMITS.nonceKeptMs - 60_000 })).resolves.toMatchObject({ messageId: expect.any(String) });
    } finally {
      await discord.close();
    }
  });

  it('does not send a replay again after a rate limit that outlasted its nonce’s window, and says its message may be there', async () => {
    const discord = await FakeDiscord.start();
    try {
      let t = 0;
      const rest = new REST({
        api: discord.apiBaseUrl,
        makeRequest: async (url, init) => {
          const answer = await withPostsSentOnce(makeRequestWithEncodedForms)(url, init);
          // Discord's answer to the first try comes as the window is about to end: discord.js waits out its 429 past it.
          t += 60_000;
          return answer;
        },
      }).setToken(discord.botToken);
      discord.rateLimitNext({ route: 'channel-message', method: 'POST' }, 50);
      const entry: AuditEntry = { type: 'job', userId: 'U', channelId: 'C', kind: 'generate', prompt: 'a fox', status: 'completed', at: 0 };
      const replay = { platform: 'discord' as const, scopeId: 'G', channelId: discord.channelId, locale: 'en', entries: [entry], skipped: 0, nonce: 'n'.repeat(24) };
      // First sent 90 s ago: this try leaves within the window; the one after the rate limit would not.
      const post = discordAuditPoster(rest, { now: () => t }).post({ ...replay, sentMsAgo: 90_000 });
      await expect(post).rejects.toBeInstanceOf(AuditPostLost);
      await expect(post).rejects.toMatchObject({ code: 'nonce_window_over' });
      expect(discord.requests.filter((r) => r.route === 'channel-message').map((r) => r.status)).toEqual([429]);
    } finally {
      await discord.close();
    }
  });

  it('names a post whose answer was lost by the code the audit log shows: `timeout` for an abort, the network code, a 5xx status', async () => {
    const entry: AuditEntry = { type: 'job', userId: 'U', channelId: 'C', kind: 'generate', prompt: 'a fox', status: 'completed', at: 0 };
    const post = (error: Error) => discordAuditPoster({ post: async () => Promise.reject(error) } as unknown as REST).post({ platform: 'discord', scopeId: 'G', channelId: 'C', locale: 'en', entries: [entry], skipped: 0 });
    // The abort discord.js's REST throws when it gives up on a request: a DOMException, whose `code` is 20.
    await expect(post(new DOMException('This operation was aborted', 'AbortError'))).rejects.toMatchObject({ code: 'timeout' });
    await expect(post(new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }))).rejects.toMatchObject({ code: 'ECONNRESET' });
    await expect(post(new HTTPError(502, 'Bad Gateway', 'POST', '/channels/C/messages', { body: {} }))).rejects.toMatchObject({ name: 'AuditPostLost', code: 502 });
  });

  it('names a greeting that failed by the code the audit log shows: `timeout` for an abort, the network code, a 5xx status', async () => {
    const greet = (error: Error) => discordAuditPoster(failingRest(error)).greet({ scopeId: 'G', channelId: 'C', locale: 'en' });
    await expect(greet(new DOMException('This operation was aborted', 'AbortError'))).rejects.toMatchObject({ problem: 'failed', platformCode: 'timeout' });
    await expect(greet(new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }))).rejects.toMatchObject({ problem: 'failed', platformCode: 'ECONNRESET' });
    await expect(greet(new HTTPError(502, 'Bad Gateway', 'POST', '/channels/C/messages', { body: {} }))).rejects.toMatchObject({ problem: 'failed', platformCode: 502 });
  });

  it('says a skipped note Discord kept though it dropped the embeds was shown (not said again); none when there was no note', async () => {
    const rest = { post: async (_route: string, options: { body: Record<string, unknown> }) => ({ id: '1', content: options.body.content, embeds: [] }) } as unknown as REST;
    const entry: AuditEntry = { type: 'refusal', userId: 'U', channelId: 'C', kind: 'generate', prompt: 'a fox', status: 'blocked_word', at: 0 };
    const post = (skipped: number) => discordAuditPoster(rest).post({ platform: 'discord', scopeId: 'G', channelId: 'C', locale: 'en', entries: [entry], skipped });
    await expect(post(3)).rejects.toMatchObject({ platformCode: 'embed_links', noteShown: true });
    await expect(post(0)).rejects.toMatchObject({ platformCode: 'embed_links', noteShown: false });
  });

  it('answers not_found to an edit of a message that can never take one (deleted, its channel deleted); one the bot lost access to (50001, still shown) and other failures as they came', async () => {
    const entry: AuditEntry = { type: 'job', userId: 'U', channelId: 'C', kind: 'generate', prompt: '', erased: true, status: 'completed', at: 0 };
    const failing = (code: number, status: number) => ({ patch: async () => Promise.reject(Object.assign(new Error('Discord said no'), { code, status })) }) as unknown as REST;
    const edit = (rest: REST) => discordAuditPoster(rest).edit({ platform: 'discord', scopeId: 'G', channelId: 'C', locale: 'en', entries: [entry], skipped: 0, messageId: 'M' });
    for (const code of [10008, 10003]) await expect(edit(failing(code, 404))).rejects.toMatchObject({ problem: 'not_found', platformCode: code });
    await expect(edit(failing(50001, 403))).rejects.toMatchObject({ message: 'Discord said no', code: 50001 });
    await expect(edit(failing(0, 503))).rejects.toMatchObject({ message: 'Discord said no' });
  });
});
