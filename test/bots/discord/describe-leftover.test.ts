import { describe, expect, it } from 'vitest';
import { say } from '../../../bots/runner/index.js';

describe('what a job its process left says', () => {
  it('says a stopped job cannot run again, and where to start a new one, when it offers no Retry', () => {
    expect(say('en', 'discord.job.interrupted_no_retry')).toBe('🔌 This job stopped when the bot restarted, and it cannot run again: start a new one with /imagine or /edit.');
  });

  it('tells the member who pressed Cancel that the job’s end is being shown, here or in a new message, when a sweep is showing it', () => {
    expect(say('en', 'discord.button.being_shown')).toBe('This job’s end is being shown now, here or in a new message.');
  });

  it('tells the member who pressed Cancel to press it again when the job’s message could not be updated', () => {
    expect(say('en', 'discord.button.not_updated')).toBe('This job’s message could not be updated just now; press Cancel again in a moment.');
  });
});
