import { describe, expect, it } from 'vitest';
import { say } from '../../../bots/runner/index.js';

describe('what a job its process left says', () => {
  it('says a stopped job cannot run again, and where to start a new one, when it offers no Retry', () => {
    expect(say('en', 'discord.job.interrupted_no_retry')).toBe('🔌 This job stopped when the bot restarted, and it cannot run again: start a new one with /imagine or /edit.');
  });

  it('tells the member who pressed Cancel that the job’s message is being updated when a sweep is showing its end', () => {
    expect(say('en', 'discord.button.being_shown')).toBe('This job’s message is being updated with how it ended.');
  });

  it('tells the member who pressed Cancel to press it again when the job’s message could not be updated', () => {
    expect(say('en', 'discord.button.not_updated')).toBe('This job’s message could not be updated just now; press Cancel again in a moment.');
  });
});
