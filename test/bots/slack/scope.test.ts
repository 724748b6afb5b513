import { afterEach, describe, expect, it } from 'vitest';
import { say } from '../../../bots/runner/index.js';
import { finishedActions, jobMessages, png, startHarness, statusOf, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('job buttons act only for the workspace the job was made in', () => {
  it('refuses Reroll, Edit and Delete pressed from another workspace of a shared channel, saying privately that the job is that workspace’s, and sends, opens and deletes nothing', async () => {
    h = await startHarness();
    const { fake } = h;
    const photo = fake.addFile({ name: 'private.png', bytes: await png(24, 24) });
    await fake.userMessage({ channel: 'C0SHARED', text: `<@${fake.botUserId}> add a hat`, files: [photo] });
    const done = await finishedActions(fake, 'C0SHARED');
    const sentBefore = h.emulator.requests.length;
    const downloadsBefore = fake.downloads.length;

    for (const action of ['pictor_reroll', 'pictor_edit', 'pictor_delete']) {
      const click = await fake.clickButton(done, action, 'U0EVE', 'T0OTHER');
      const answer = await fake.waitFor(() => fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private answer');
      // Not "I no longer have the details": the job is kept, in the workspace that made it.
      expect(answer.body.text).toBe(say('en', 'slack.button.other_workspace', { command: '`/imagine`' }));
      expect(answer.body.response_type).toBe('ephemeral');
    }
    // Each private refusal is the press's last step: nothing of it was to follow.
    expect(h.emulator.requests.length).toBe(sentBefore);
    expect(fake.downloads.length).toBe(downloadsBefore);
    expect(fake.callsOf('views.open')).toHaveLength(0);
    expect(fake.callsOf('files.delete')).toHaveLength(0);
    expect(fake.callsOf('chat.delete')).toHaveLength(0);
  });

  it('answers a Cancel pressed from another workspace of a shared channel on a running job that the job is that workspace’s, and the job runs on', async () => {
    h = await startHarness({ emulator: { latencyMs: 20_000 } });
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a very slow painting', channel: 'C0SHARED' });
    const running = await fake.waitFor(() => jobMessages(fake, 'C0SHARED').find((m) => statusOf(m).includes('Drawing')), 'the job to start');
    const click = await fake.clickButton(running, 'pictor_cancel', 'U0EVE', 'T0OTHER');
    const answer = await fake.waitFor(() => fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private answer');
    expect(answer.body.text).toBe(say('en', 'slack.button.other_workspace', { command: '`/imagine`' }));
    expect(h.runner.activeJobs()).toHaveLength(1);
  });
});
