import { describe, expect, it } from 'vitest';
import { ACTIONS, describeFinishedJob, finishedJobWords, renderJobActions, renderJobMessage, requestIdOfJobMessage, type JobViewState } from '../../../bots/slack/render-job.js';
import { LOCALES, say, usd, words } from '../../../bots/runner/index.js';
import { estimatePrice } from '../../../src/index.js';
import { slackKeyOf } from '../../helpers/message-keys.js';

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
    locale: 'en',
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


/** The status line of the job's message (its `status` block): which message it is, by `slackKeyOf`, and its values. */
const statusOf = (state: JobViewState) => {
  const block = renderJobMessage(state).blocks.find((b) => b.block_id === 'status') as { elements: { text: string }[] };
  return block.elements[0]!.text;
};

/** What the finished job's status line says of it: size · quality · format · cost · time. */
const SUMMARY = '1024x1024 · low · png · $0.0064 · 1.2 s';

const actionsOf = (state: JobViewState) =>
  renderJobMessage(state)
    .blocks.flatMap((block) => ('elements' in block ? (block.elements as { action_id?: string }[]) : []))
    .map((element) => element.action_id)
    .filter(Boolean);

describe('a finished job’s message', () => {
  it('says the images are being posted while they are, neither done nor failed, with no button yet (a fast job’s message may first appear then)', () => {
    const posting = statusOf(completedJob({ posting: true }));
    expect(slackKeyOf(posting)).toBe('slack.job.posting');
    expect(posting).toBe(say('en', 'slack.job.posting', { summary: SUMMARY, images: 1 }));
    expect(renderJobMessage(completedJob({ posting: true })).text).toBe(say('en', 'slack.job.text', { status: say('en', 'slack.job.plain_status', { stage: 'posting', summary: SUMMARY }) }));
    expect(actionsOf(completedJob({ posting: true }))).toEqual([]);
  });

  it('says the images could not be posted only once posting them has failed, offering Reroll', () => {
    expect(slackKeyOf(statusOf(completedJob({ posting: false })))).toBe('slack.job.not_posted');
    expect(statusOf(completedJob({ posting: false }))).toContain(SUMMARY);
    expect(actionsOf(completedJob({ posting: false }))).toEqual([ACTIONS.reroll]);
  });

  it('says Done once they are posted, with Reroll, Edit and Delete', () => {
    expect(slackKeyOf(statusOf(completedJob({ uploaded: true, where: 'channel' })))).toBe('slack.job.done');
    expect(actionsOf(completedJob({ uploaded: true, where: 'channel' }))).toEqual([ACTIONS.reroll, ACTIONS.edit, ACTIONS.delete]);
  });
});

describe('a finished job whose Reroll, Edit and Delete are posted beside its images', () => {
  const beside = completedJob({ uploaded: true, where: 'channel', actionsBeside: true });

  it('says on its message that it is done and where the images and their buttons are, with no button of its own', () => {
    expect(slackKeyOf(statusOf(beside))).toBe('slack.job.done');
    expect(statusOf(beside)).toBe(say('en', 'slack.job.done', { summary: SUMMARY, images: 1, where: 'channel', actionsBeside: 'yes' }));
    expect(statusOf(completedJob({ uploaded: true, where: 'dm', images: 2, actionsBeside: true }))).toBe(say('en', 'slack.job.done', { summary: SUMMARY, images: 2, where: 'dm', actionsBeside: 'yes' }));
    expect(actionsOf(beside)).toEqual([]);
  });

  it('names its saved request on its message all the same, for a mention in its thread', () => {
    expect(requestIdOfJobMessage(renderJobMessage(beside).blocks)).toBe('req1');
    expect(requestIdOfJobMessage([{ type: 'actions', block_id: 'job_actions', elements: [{ action_id: ACTIONS.cancel, value: 'job1:req0' }] }])).toBe('req0');
    expect(requestIdOfJobMessage([{ type: 'section', block_id: 'request' }])).toBeUndefined();
  });

  it('posts the buttons with the prompt they act on, without mentioning anyone again', () => {
    const actions = renderJobActions({ ...beside, prompt: 'a red \n kite <over> the sea' });
    expect(slackKeyOf(actions.text)).toBe('slack.job.actions_text');
    expect(actions.text).toContain('“a red kite &lt;over&gt; the sea”');
    expect(JSON.stringify(actions.blocks)).not.toContain('<@');
    expect(actions.blocks.flatMap((b) => ('elements' in b ? (b.elements as { action_id?: string; value?: string }[]) : [])).filter((e) => e.action_id).map((e) => [e.action_id, e.value])).toEqual([
      [ACTIONS.reroll, 'req1'],
      [ACTIONS.edit, 'req1'],
      [ACTIONS.delete, 'req1'],
    ]);
  });
});

describe('a cancelled job that was charged', () => {
  const cancelled: JobViewState = { ...completedJob({}), completed: undefined, status: 'cancelled', cancelled: { byUserId: 'U0BEN', reason: 'requested' }, charged: { totalUsd: 0.0064 } };

  it('says what it was charged under its status, and in its plain text (notifications, screen readers) without the emoji', () => {
    const rendered = renderJobMessage(cancelled);
    const charged = say('en', 'slack.job.charged', { usd: usd(0.0064) });
    expect(JSON.stringify(rendered.blocks)).toContain(JSON.stringify(`\n${charged}`).slice(1, -1));
    expect(rendered.text).toBe(`${say('en', 'slack.job.text', { status: say('en', 'slack.job.plain_status', { stage: 'cancelled' }) })}\n${charged.replace(/^:dollar: /, '')}`);
  });

  it('drops from its plain text only the emoji that leads the charge in the blocks, in every language: the translation’s own words and symbols stay', () => {
    for (const locale of LOCALES.filter((l) => l !== 'en')) {
      const rendered = renderJobMessage({ ...cancelled, locale });
      const charged = say(locale, 'slack.job.charged', { usd: usd(0.0064) });
      expect(charged.startsWith(':dollar: ')).toBe(true);
      expect(JSON.stringify(rendered.blocks)).toContain(JSON.stringify(charged).slice(1, -1));
      expect(rendered.text.split('\n').at(-1)).toBe(charged.slice(':dollar: '.length));
    }
  });

  it('says nothing of a charge when it was not charged', () => {
    expect(renderJobMessage({ ...cancelled, charged: undefined }).text).toBe(say('en', 'slack.job.text', { status: say('en', 'slack.job.plain_status', { stage: 'cancelled' }) }));
  });
});

describe('the answer to Cancel on a job that has finished', () => {
  it('says it is done, and links to its buttons when it can', () => {
    const link = 'https://team.slack.com/archives/C1/p1';
    expect(finishedJobWords({ actionsAt: link })).toEqual(words('slack.job.finished_where', { where: 'link', link }));
    expect(finishedJobWords({})).toEqual(words('slack.job.finished_where', { where: 'below', link: '' }));
    expect(finishedJobWords({ posting: true, actionsAt: link })).toEqual(words('slack.job.finished_where', { where: 'posting', link }));
    expect(finishedJobWords({ inDirectMessages: true })).toEqual(words('slack.job.finished_where', { where: 'dm', link: '' }));
    expect(slackKeyOf(describeFinishedJob({ actionsAt: link }))).toBe('slack.job.finished_where');
    expect(describeFinishedJob({ actionsAt: link })).toContain(`<${link}|here>`);
  });
});
