import { describe, expect, it } from 'vitest';
import { anyOf, LOCALES, say } from '../../../bots/runner/index.js';
import { editModal } from '../../../bots/slack/edit-modal.js';
import { allowedFor, usageText } from '../../../bots/slack/imagine-text.js';
import { stepStoppedWords } from '../../../bots/slack/listeners/workflow-step.js';

/** The sentences of Slack's buttons, flags, help and workflow step, as a member reads them (each checked once, here). */
describe('what Slack tells a member', () => {
  it('tells another member who may edit a job’s images', () => {
    expect(say('en', 'slack.button.only_requester_edit', { user: '<@U0ALICE>' })).toBe('Only <@U0ALICE> or an admin can use this Edit button. To edit these images yourself, use the message’s ⋯ menu → *Edit image*.');
  });

  it('offers, first in each option of the edit form, the member’s default, which fits a choice of Slack’s', () => {
    const view = editModal({ channelId: 'C0ART' }, 'en');
    const first = (view.blocks as { element?: { options?: { text: { text: string } }[] } }[]).flatMap((b) => (b.element?.options ? [b.element.options[0]!.text.text] : []));
    expect(first).toEqual(Array.from({ length: 5 }, () => 'Your default'));
    for (const locale of LOCALES) expect(say(locale, 'slack.edit.default_choice').length, locale).toBeLessThanOrEqual(75);
  });

  it('words a flag’s range from the spec’s limits, and names --format in the rule of --compression', () => {
    expect(allowedFor('n', 'en')).toBe('an integer from 1 to 10');
    expect(allowedFor('compression', 'en')).toBe('an integer from 0 to 100, only with --format jpeg or webp');
    expect(allowedFor('n', 'de')).toBe('eine ganze Zahl von 1 bis 10');
    expect(say('de', 'slack.flag.compression_range', { min: 0, max: 100, flag: '--format', formats: anyOf(['jpeg', 'webp']) })).toBe(
      'eine ganze Zahl von 0 bis 100, nur mit --format jpeg oder webp',
    );
  });

  it('fails a workflow step a crash cut off with the words of a stopped job and what the ledger charged it, or may still charge it, as the job’s message says it', () => {
    expect(stepStoppedWords('en')).toBe('The image job was stopped before it finished.');
    expect(stepStoppedWords('en', { type: 'charged', cost: { totalUsd: 0.25 } })).toBe('The image job was stopped before it finished.\nCharged $0.250: the request had reached the image service.');
    expect(stepStoppedWords('en', { type: 'pending', cost: { totalUsd: 0.05 } })).toBe(
      'The image job was stopped before it finished.\nMay be charged $0.0500: the request had reached the image service, and its charge is not settled yet.',
    );
  });

  it('tells a member whose forget’s Home tab is sent again (Slack did not take it yet, or an older view of it may still land after it) that it may still show their prompts, and when it no longer will', () => {
    expect(say('en', 'slack.home.forgetPending')).toBe(
      'Your Home tab may still show your prompts while it is being updated: Pictor sends it again shortly, and it is shown without them the next time you open your Home tab.',
    );
    // Not sent again (the bot stopping, or stopped): only their next open of it.
    expect(say('en', 'slack.home.forgetNextOpen')).toBe(
      'Your Home tab still shows your prompts: Slack did not take its new version, and Pictor does not send it again. It is shown without them the next time you open your Home tab.',
    );
  });

  it('names a workflow step’s bad input by its title in Workflow Builder, and what it takes', () => {
    expect(say('en', 'slack.step.bad_input', { input: 'count', given: '11', allowed: allowedFor('n', 'en') })).toBe('The step’s Images input cannot be “11”: it takes an integer from 1 to 10.');
    expect(say('en', 'slack.step.bad_input', { input: 'size', given: '999x1', allowed: '1024x1024' })).toBe('The step’s Size input cannot be “999x1”: it takes 1024x1024.');
  });

  it('says in its help, in every language, that the images come in the channel after the job’s message, with Reroll, Edit and Delete, and the previews in its thread', () => {
    expect(say('en', 'slack.help.progress', {}, { bold: (text) => `*${text}*` })).toBe(
      'Progress shows in the message I post, with previews in its thread; the final images are shared in the channel right after it (in the thread, when you asked in one), followed by *Reroll*, *Edit* and *Delete* buttons.',
    );
    for (const locale of LOCALES) {
      const help = usageText({ imagine: '/imagine', edit: '/imagine-edit' }, locale);
      for (const button of ['button.reroll', 'button.edit', 'button.delete'] as const) expect(help, locale).toContain(`*${say(locale, button)}*`);
    }
  });

  it('tells another member who may delete a job’s message', () => {
    expect(say('en', 'slack.button.only_requester_delete', { user: '<@U0ALICE>' })).toBe('Only <@U0ALICE> or an admin can delete this message.');
  });

  it('tells whoever presses a button of a job no longer running that it is not', () => {
    expect(say('en', 'slack.button.not_running')).toBe('That job is no longer running.');
  });

  it('tells a member whose job is private that it is drawn in their direct messages', () => {
    expect(say('en', 'slack.job.private_in_dm')).toBe(':lock: Only you will see this job: I’m drawing it in our direct messages.');
  });

  it('says on a finished job’s message whether its images are being posted, are posted and where, with their buttons, or could not be posted', () => {
    const summary = '1024x1024 · low · png · $0.0064 · 1.2 s';
    expect(say('en', 'slack.job.posting', { summary, images: 1 })).toBe(`:outbox_tray: Made (${summary}); posting the image…`);
    expect(say('en', 'slack.job.not_posted', { summary, images: 1 })).toBe(`:warning: The image was made (${summary}) but could not be posted to Slack; press Reroll to try again.`);
    expect(say('en', 'slack.job.done', { summary, images: 1, where: 'channel', actionsBeside: 'yes' })).toBe(`:white_check_mark: Done · ${summary} · the image is posted below, with Reroll, Edit and Delete`);
    expect(say('en', 'slack.job.done', { summary, images: 2, where: 'dm', actionsBeside: 'yes' })).toBe(`:white_check_mark: Done · ${summary} · 2 images are in your direct messages with me, with Reroll, Edit and Delete`);
    expect(say('en', 'slack.job.actions_text', { prompt: '“a red kite”' })).toBe('Reroll, Edit or Delete: “a red kite”');
    expect(say('en', 'slack.job.text', { status: say('en', 'slack.job.plain_status', { stage: 'cancelled' }) })).toBe('Pictor: cancelled');
  });

  it('says in its help how an admin sends every job and refusal to an audit channel, and stops it', () => {
    expect(say('en', 'slack.help.audit', { command: '`/imagine admin audit #channel`', off: '`/imagine admin audit off`' }, { bold: (text) => `*${text}*` })).toBe(
      '*Audit channel (admins):* `/imagine admin audit #channel` posts every job and every refusal by a rule or a budget there; `/imagine admin audit off` stops it.',
    );
  });

  it('tells whoever presses Cancel on a finished job where its images and their buttons are', () => {
    const link = 'https://team.slack.com/archives/C1/p1';
    expect(say('en', 'slack.job.finished_where', { where: 'link', link })).toBe(`That job is done: its images and their Reroll, Edit and Delete buttons are <${link}|here>.`);
    expect(say('en', 'slack.job.finished_where', { where: 'below', link: '' })).toBe('That job is done: its images are posted after its message, with their Reroll, Edit and Delete buttons.');
    expect(say('en', 'slack.job.finished_where', { where: 'posting', link: '' })).toBe('That job is done: its images are being posted, with Reroll, Edit and Delete right after them.');
    expect(say('en', 'slack.job.finished_where', { where: 'dm', link: '' })).toBe(
      'That job is done: its images and their Reroll, Edit and Delete buttons were sent to the direct messages of the person who asked for it.',
    );
  });
});
