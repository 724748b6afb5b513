import { afterEach, describe, expect, it } from 'vitest';
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

  it('is done by the stop’s until, a job’s final update still unanswered by Slack', async () => {
    h = await startHarness({ emulator: { latencyMs: 0, defaultPartialImages: 0 } });
    const held = h.fake.holdOpen('chat.update');
    release = held.release;
    await h.fake.command({ command: '/imagine', text: 'a lighthouse Slack never shows --quality low', channel: 'C0STOP' });
    await h.fake.waitFor(() => held.arrived() > 0, 'an update of the job held by Slack');
    // The job has ended: its final update waits behind the one Slack holds.
    await h.fake.waitFor(() => h!.runner.activeJobs().length === 0, 'the job to end');

    // Without `until` the stop would wait 10 s for the writes, then 10 s more for the job's end.
    const until = Date.now() + 500;
    await h.bot.stop({ until });
    // Done by its until (a little after, for the turn of the event loop that ends the last wait), not by the defaults.
    expect(Date.now() - until).toBeLessThan(2_000);
    expect(h.fake.callsOf('chat.update')).toHaveLength(0);
  }, 15_000);
});
