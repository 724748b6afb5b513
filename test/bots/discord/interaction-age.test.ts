import { afterEach, describe, expect, it } from 'vitest';
import { interactionAge } from '../../../bots/discord/interaction-age.js';
import { SIGNATURE_TIMESTAMP_WINDOW } from '../../../bots/discord/verify-signature.js';
import { botSpaces } from '../../../bots/state/index.js';
import type { FakeInteraction } from '../../fakes/discord/FakeDiscord.js';
import { DiscordHarness } from './harness.js';

const MINUTE = 60_000;
/** Writes of the bot to Discord: first answers, reply edits, follow-ups, channel messages, DMs. */
const WRITE_ROUTES = new Set(['interaction-callback', 'webhook-message', 'webhook-followup', 'channel-message', 'dm-channel']);

describe('interactionAge', () => {
  const now = 1_800_000_000_000;
  it('is fresh until the token’s 15 minutes are over, and a minute ahead of this clock at most', () => {
    expect(interactionAge(now - 15 * MINUTE + 1, now)).toBe('fresh');
    expect(interactionAge(now - 15 * MINUTE, now)).toBe('expired');
    expect(interactionAge(now - 20 * MINUTE, now)).toBe('expired');
    expect(interactionAge(now + MINUTE, now)).toBe('fresh');
    expect(interactionAge(now + MINUTE + 1, now)).toBe('future');
  });

  it('is kept taken in the bots’ state exactly as long as it can be taken: one stamped as far ahead as is fresh, until its token is over', () => {
    const { ttlMs } = botSpaces().discordInteractions;
    const stampedAhead = now + SIGNATURE_TIMESTAMP_WINDOW.maxAheadMs;
    expect(interactionAge(stampedAhead, now)).toBe('fresh');
    expect(interactionAge(stampedAhead, now + ttlMs - 1)).toBe('fresh');
    expect(interactionAge(stampedAhead, now + ttlMs)).toBe('expired');
  });
});

describe('stale interactions: refused on every entry point before anything is claimed, reserved or sent', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    await h?.close();
  });

  /** What reached anyone for the interaction: the service, Discord (writes with its token or in its channel) and the ledger. */
  async function traceOf(ix: FakeInteraction): Promise<{ service: number; discordWrites: number; charged: number }> {
    return {
      service: h.emulator.requests.filter((r) => r.route === 'generations' || r.route === 'edits').length,
      discordWrites: h.discord.requests.filter((r) => WRITE_ROUTES.has(r.route) && (r.token === ix.token || r.method !== 'GET')).length,
      charged: (await h.quotaStore.usage({})).length + (await h.quotaStore.spentToday('account', Date.now())),
    };
  }

  it('over HTTP, a signed /imagine stamped 20 minutes ago (a captured request played again) is answered 401, and the same interaction signed now still runs', async () => {
    h = await DiscordHarness.start({ http: true, partialImages: 0 });
    h.discord.staleness.signedOffsetMs = -20 * MINUTE;
    const stale = h.discord.slashCommand('imagine', { prompt: 'a lighthouse', quality: 'low' });
    await h.discord.waitFor(() => stale.httpStatus, 'the endpoint’s answer');
    expect(stale.httpStatus).toBe(401);
    expect(await traceOf(stale)).toEqual({ service: 0, discordWrites: 0, charged: 0 });
    expect(h.logger.entries.some((e) => e.msg === 'refused an interaction whose signature is too old or too far ahead (a replay?)')).toBe(true);
    // Nothing was claimed: the same interaction, signed now, is taken.
    const again = await h.discord.postToInteractionsEndpoint(JSON.stringify(stale.payload));
    expect(again.status).toBe(200);
  });

  it.each([
    { what: 'a signed /imagine stamped 20 minutes ahead', staleness: { madeAgoMs: 0, signedOffsetMs: 20 * MINUTE }, logged: 'refused an interaction whose signature is too old or too far ahead (a replay?)' },
    { what: 'an interaction made 20 minutes ago (its token dead), even signed now', staleness: { madeAgoMs: 20 * MINUTE, signedOffsetMs: 0 }, logged: 'refused an interaction made longer ago than its token lives (or stamped ahead)' },
  ])('over HTTP, $what is answered 401 and nothing runs', async ({ staleness, logged }) => {
    h = await DiscordHarness.start({ http: true, partialImages: 0 });
    h.discord.staleness = staleness;
    const stale = h.discord.slashCommand('imagine', { prompt: 'a lighthouse', quality: 'low' });
    await h.discord.waitFor(() => stale.httpStatus, 'the endpoint’s answer');
    expect(stale.httpStatus).toBe(401);
    expect(await traceOf(stale)).toEqual({ service: 0, discordWrites: 0, charged: 0 });
    expect(h.logger.entries.some((e) => e.msg === logged)).toBe(true);
  });

  it('on the gateway, an /imagine made 20 minutes ago is dropped unanswered, while a fresh one after it runs', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    h.discord.staleness.madeAgoMs = 20 * MINUTE;
    const old = h.discord.slashCommand('imagine', { prompt: 'a lighthouse', quality: 'low' });
    await h.discord.waitFor(() => h.logger.entries.some((e) => e.msg === 'dropped an interaction made longer ago than its token lives (or stamped ahead)'), 'the stale interaction to be dropped');
    h.discord.staleness.madeAgoMs = 0;
    const fresh = h.discord.slashCommand('imagine', { prompt: 'a lighthouse', quality: 'low' });
    expect((await h.finalReply(fresh)).attachments).toHaveLength(1);
    // Only the fresh one reached the service and the ledger; nothing was written to Discord with the stale one's token.
    expect(h.emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(1);
    expect(h.discord.requests.filter((r) => r.token === old.token)).toEqual([]);
    expect(await h.quotaStore.usage({})).toHaveLength(1);
  });
});
