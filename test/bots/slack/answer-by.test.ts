import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { usageText } from '../../../bots/slack/imagine-text.js';
import { openBotState, type Space } from '../../../bots/state/index.js';
import { ACK_WAITS_MS } from '../../../bots/slack/answer-by.js';
import { silentLogger } from '../../../src/internal.js';
import { withSpace } from '../../helpers/runner-harness.js';
import { testTempDir } from '../../helpers/temp-dir.js';
import { settledOnHeldClock, startHarness, waitOnHeldClock, type Harness } from './harness.js';

/**
 * Slack takes an acknowledgement within 3 s of sending a request. Before it, Pictor may wait on the bots' state (HTTP's
 * replay guard claims the request's signature) and on Slack (the look-up of a new member's language): each wait takes
 * what is left of one budget counted from the request's arrival (`ACK_WAITS_MS`), so together they end in time, however
 * many they are. The clock is the test's: which wait gave up when is read off it, not measured.
 */
describe('the waits before a Slack acknowledgement', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await h?.close();
    h = undefined;
  });

  /** A bot whose replay guard's claims are held until the test lets each through (the state answering late). */
  async function withHeldClaims() {
    const state = await openBotState({ dataDir: await testTempDir('pictor-ack-'), logger: silentLogger() });
    const asked: Array<() => void> = [];
    const held = withSpace(state, state.spaces.slackSeen, (space: Space<unknown>) => ({
      claimOnce: (key, token) => new Promise<void>((resolve) => asked.push(resolve)).then(() => space.claimOnce(key, token)),
    }));
    h = await startHarness({ bot: { state: held } });
    onTestFinished(() => state.close());
    return { h, asked };
  }

  const commands = { imagine: '/imagine', edit: '/imagine-edit' };
  const helpIn = (ack: { body?: unknown }) => (ack.body as { text?: string }).text;

  it('end 2 s after the request arrived: a claim answered just inside its own limit leaves the language look-up the rest, and the acknowledgement goes out then, in English for a member whose language came too late', async () => {
    const { h, asked } = await withHeldClaims();
    expect(ACK_WAITS_MS).toBe(2_000);
    h.fake.setLocale('U0NEW', 'de-DE');
    // The clock is the test's from before the command: the bot's every reading of it is the test's to move.
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    // A member not known yet, whose language Slack does not tell in time.
    const lookup = h.fake.holdOpen('users.info');
    try {
      const delivered = h.fake.command({ command: '/imagine', text: 'help', user: 'U0NEW' });
      await waitOnHeldClock(h.fake, () => asked.length > 0, 'the replay guard’s claim');
      vi.advanceTimersByTime(1_460);
      asked[0]!();
      await waitOnHeldClock(h.fake, () => lookup.arrived() > 0, 'the look-up of the member’s language');
      // What is left of the 2 s: 540 ms, not the look-up's own 1.5 s.
      vi.advanceTimersByTime(540);
      const ack = await settledOnHeldClock(h.fake, delivered, 'the acknowledgement');
      expect(ack.status).toBe(200);
      expect(helpIn(ack)).toBe(usageText(commands, undefined));
    } finally {
      lookup.release();
    }
  });

  it('a member whose language is known is answered in it before the acknowledgement, however little of the 2 s the claim left', async () => {
    const { h, asked } = await withHeldClaims();
    h.fake.setLocale('U0DE', 'de-DE');
    const first = h.fake.command({ command: '/imagine', text: 'help', user: 'U0DE' });
    await h.fake.waitFor(() => asked.length > 0, 'the first claim');
    asked[0]!();
    expect(helpIn(await first)).toBe(usageText(commands, 'de-DE'));
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const delivered = h.fake.command({ command: '/imagine', text: 'help', user: 'U0DE' });
    await waitOnHeldClock(h.fake, () => asked.length > 1, 'the replay guard’s claim');
    vi.advanceTimersByTime(1_499);
    asked[1]!();
    const ack = await settledOnHeldClock(h.fake, delivered, 'the acknowledgement');
    expect(helpIn(ack)).toBe(usageText(commands, 'de-DE'));
    expect(h.fake.callsOf('users.info')).toHaveLength(1);
  });
});
