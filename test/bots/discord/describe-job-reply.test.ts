import { describe, expect, it } from 'vitest';
import { say } from '../../../bots/runner/index.js';

/** The sentences a job's reply and DM say when Discord did not take its end where it was sent (each checked once, here). */
describe('what a job’s reply says when Discord did not take its end', () => {
  it('says where the end went when Discord would not update the reply and the end was posted elsewhere', () => {
    expect(say('en', 'discord.job.end_posted_elsewhere', { where: 'channel' })).toBe('⬇️ Discord would not update this message, so this job’s result is posted below in this channel.');
    expect(say('en', 'discord.job.end_posted_elsewhere', { where: 'dm' })).toBe('📨 Discord would not update this message, so this job’s result was sent by direct message to the person who asked for it.');
  });

  it('says only that the end may be elsewhere when Discord did not confirm it there either', () => {
    expect(say('en', 'discord.job.end_may_be_posted_elsewhere', { where: 'channel' })).toBe('⬇️ Discord would not update this message, so this job’s result may be posted below in this channel: Discord did not confirm it.');
    expect(say('en', 'discord.job.end_may_be_posted_elsewhere', { where: 'dm' })).toBe(
      '📨 Discord would not update this message, so this job’s result may have been sent by direct message to the person who asked for it: Discord did not confirm it.',
    );
  });

  it('tells the member in their DM that the reply, its buttons and its images could not be delivered when Discord did not open the DM for it', () => {
    expect(say('en', 'discord.job.reply_not_delivered', { count: 0, files: '' })).toBe(
      'This job’s reply, with its buttons, could not be delivered: Discord failed to open this direct message when the bot tried to send it.',
    );
    expect(say('en', 'discord.job.reply_not_delivered', { count: 2, files: 'a.png, b.png' })).toBe(
      'This job’s reply, with its buttons and 2 images (a.png, b.png), could not be delivered: Discord failed to open this direct message when the bot tried to send it.',
    );
  });

  it('tells the member privately that the end could not be sent by direct message either, and says in the reply only that it was not delivered', () => {
    expect(say('en', 'discord.job.end_not_sent_by_dm')).toBe(
      '📭 This job’s result could not be shown: Discord would not update its message, and the direct message the bot tried to send it in did not go through.',
    );
    expect(say('en', 'discord.job.end_not_delivered')).toBe('📭 Discord would not update this message, and this job’s result could not be delivered elsewhere either.');
  });
});
