import { afterEach, describe, expect, it } from 'vitest';
import { startSlackBot, type SlackBotOptions } from '../../../bots/slack/index.js';
import { withTimeout } from '../../../src/core/with-timeout.js';
import { silentLogger } from '../../../src/internal.js';
import { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import { startHarness, type Harness } from './harness.js';

describe('a stopped Slack bot', () => {
  let h: Harness | undefined;
  let release: (() => void) | undefined;
  afterEach(async () => {
    // Let go whatever is held, so the harness's close does not wait on it.
    release?.();
    await h?.close();
    h = undefined;
    release = undefined;
  });

  /** A bot whose job has ended, its final update waiting behind an update Slack holds unanswered. */
  async function startWithAnEndedJobHeld(): Promise<Harness> {
    // Kept in h at once: the harness is closed after the test however far this got.
    const started = (h = await startHarness({ emulator: { latencyMs: 0, defaultPartialImages: 0 } }));
    const held = started.fake.holdOpen('chat.update');
    release = held.release;
    await started.fake.command({ command: '/imagine', text: 'a lighthouse Slack never shows --quality low', channel: 'C0STOP' });
    await started.fake.waitFor(() => held.arrived() > 0, 'an update of the job held by Slack');
    await started.fake.waitFor(() => started.runner.activeJobs().length === 0, 'the job to end');
    return started;
  }

  it('is done by the stop’s until, a job’s final update still unanswered by Slack', async () => {
    h = await startWithAnEndedJobHeld();

    // Without `until` the stop would wait 10 s for the writes, then 10 s more for the job's end.
    const until = Date.now() + 500;
    await h.bot.stop({ until });
    // Done by its until (a little after, for the turn of the event loop that ends the last wait), not by the defaults.
    expect(Date.now() - until).toBeLessThan(2_000);
    expect(h.fake.callsOf('chat.update')).toHaveLength(0);
  }, 15_000);

  it('is done by the earlier until of a second stop, the first one given none, its waits under way cut short', async () => {
    h = await startWithAnEndedJobHeld();

    // The first stop alone would wait 10 s for the writes, then 10 s more for the job's end.
    const first = h.bot.stop();
    const until = Date.now() + 500;
    const second = h.bot.stop({ until });
    // Bounded so that a stop still waiting by its first call's defaults fails with its name, not a test timeout.
    await withTimeout(Promise.all([first, second]), 8_000, 'the stop waited past the earlier until');
    expect(Date.now() - until).toBeLessThan(2_000);
    expect(h.fake.callsOf('chat.update')).toHaveLength(0);
  }, 15_000);
});

describe('a Slack bot whose start is refused', () => {
  // One bad value of each option the bot hands its writer: the writer's own test has the full table of what it refuses.
  it.each([
    ['channelWriteIntervalMs', 2 ** 31],
    ['progressWritesPerMinute', 0],
    ['progressWritesBurst', NaN],
  ] as const)('refuses a %s of %s, naming it, before any request reaches Slack (its writer checks it, made first)', async (option, value) => {
    const fake = await new FakeSlack().start();
    try {
      const start = startSlackBot({ mode: 'http', botToken: fake.botToken, signingSecret: fake.signingSecret, apiUrl: fake.apiUrl, runner: {} as never, state: {} as never, logger: silentLogger(), [option]: value } as SlackBotOptions);
      await expect(start).rejects.toThrow(expect.objectContaining({ code: 'validation_error', param: option }));
      expect(fake.calls).toEqual([]);
    } finally {
      await fake.close();
    }
  });
});
