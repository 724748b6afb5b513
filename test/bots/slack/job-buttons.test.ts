import { afterEach, describe, expect, it, vi } from 'vitest';
import { say } from '../../../bots/runner/index.js';
import { readCancelValue } from '../../../bots/slack/render-job.js';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { buttonsOf } from '../../fakes/slack/slack-objects.js';
import { requestStoreOf, spyOnInstance } from '../../helpers/instance-spy.js';
import { jobMessages, startHarness, statusOf, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

describe('a press of a job’s Cancel reads the job’s saved request once', () => {
  it.each([
    ['another member’s, on a job running here', 'U0BOB', 'slack.button.only_requester_cancel', false],
    ['its member’s, from a message naming a job this process does not run (a stale screen)', 'U0ALICE', 'slack.button.not_running', true],
  ] as const)('%s: answered privately, its saved request read once for all it decides', async (_name, user, answerKey, stale) => {
    h = await startHarness({ emulator: { latencyMs: 20_000 } });
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a very slow painting', channel: 'C0SLOW', user: 'U0ALICE' });
    const running = await fake.waitFor(() => jobMessages(fake, 'C0SLOW').find((m) => statusOf(m).includes('Drawing')), 'the job to start');
    const { requestId } = readCancelValue(buttonsOf(running).find((b) => b.actionId === 'pictor_cancel')!.value!);
    const pressed = stale
      ? { ...running, ts: '1700000000.000001', blocks: [{ type: 'actions', block_id: 'job_actions', elements: [{ type: 'button', action_id: 'pictor_cancel', value: `gonejob12345:${requestId}`, text: { type: 'plain_text', text: 'Cancel' } }] }] }
      : running;
    const reads = spyOnInstance(RequestStore.prototype, 'get', requestStoreOf(h));
    const click = await fake.clickButton(pressed, 'pictor_cancel', user);
    const answer = await fake.waitFor(() => fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private answer');
    expect(answer.body.text).toBe(say('en', answerKey));
    expect(reads.mock.calls.filter(([id]) => id === requestId)).toHaveLength(1);
    expect(h.runner.activeJobs()).toHaveLength(1);
  });
});
