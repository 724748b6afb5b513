import { afterEach, describe, expect, it, vi } from 'vitest';
import { say } from '../../../bots/runner/index.js';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

describe('a job that fails after its request was taken and before the runner had it is told to its member', () => {
  it('/imagine whose request cannot be saved (the data folder refusing writes): the member is told privately that something went wrong on our side; nothing reaches the service', async () => {
    h = await startHarness();
    const { fake } = h;
    vi.spyOn(RequestStore.prototype, 'create').mockRejectedValueOnce(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    const ack = await fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0KITES', user: 'U0ALICE' });
    const note = await fake.waitFor(() => fake.responses.find((r) => ack.responseUrl.endsWith(r.id)), 'the private answer');
    expect(note.body).toMatchObject({ response_type: 'ephemeral', text: `:warning: ${say('en', 'error.on_my_side')}` });
    expect(fake.messages.filter((m) => m.channel === 'C0KITES')).toEqual([]);
    expect(h.emulator.requests).toHaveLength(0);
    expect(h.runner.activeJobs()).toEqual([]);
  });
});
