import { describe, expect, it } from 'vitest';
import { ACTIONS, renderJobMessage, type JobViewState } from '../../../bots/slack/render-job.js';
import { estimatePrice } from '../../../src/index.js';

function completedJob(completed: Partial<NonNullable<JobViewState['completed']>>): JobViewState {
  return {
    kind: 'generate',
    prompt: 'a red kite',
    options: {},
    userId: 'U0ANN',
    inputCount: 0,
    requestId: 'req1',
    jobId: 'job1',
    status: 'completed',
    ahead: undefined,
    previewsShown: 0,
    completed: {
      size: '1024x1024',
      quality: 'low',
      format: 'png',
      cost: estimatePrice({ operation: 'generate', size: '1024x1024', quality: 'low', n: 1 }),
      elapsedMs: 1200,
      images: 1,
      uploaded: false,
      ...completed,
    },
  };
}

/** What the message's blocks show (the status line is one of them; `text` is the notification's plain line). */
const shown = (state: JobViewState) => JSON.stringify(renderJobMessage(state).blocks);

const actionsOf = (state: JobViewState) =>
  renderJobMessage(state)
    .blocks.flatMap((block) => ('elements' in block ? (block.elements as { action_id?: string }[]) : []))
    .map((element) => element.action_id)
    .filter(Boolean);

describe('a finished job’s message', () => {
  it('says the images are being posted while they are, neither done nor failed, with no button yet (a fast job’s message may first appear then)', () => {
    const posting = shown(completedJob({ posting: true }));
    expect(posting).toContain(':outbox_tray: Made (');
    expect(posting).toContain('posting the image…');
    expect(posting).not.toMatch(/could not be posted|Done ·/);
    expect(renderJobMessage(completedJob({ posting: true })).text).toContain('posting the images');
    expect(actionsOf(completedJob({ posting: true }))).toEqual([]);
  });

  it('says the images could not be posted only once posting them has failed, offering Reroll', () => {
    expect(shown(completedJob({ posting: false }))).toContain('could not be posted to Slack; press Reroll to try again.');
    expect(actionsOf(completedJob({ posting: false }))).toEqual([ACTIONS.reroll]);
  });

  it('says Done once they are posted, with Reroll, Edit and Delete', () => {
    expect(shown(completedJob({ uploaded: true, where: 'channel' }))).toContain(':white_check_mark: Done · ');
    expect(actionsOf(completedJob({ uploaded: true, where: 'channel' }))).toEqual([ACTIONS.reroll, ACTIONS.edit, ACTIONS.delete]);
  });
});
