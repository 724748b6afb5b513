import { describe, expect, it } from 'vitest';
import { say } from '../../../bots/runner/index.js';

describe('what a press of a job’s Retry is told', () => {
  it('tells a press of a Retry another press already took that the job runs once, and that nothing was sent again', () => {
    expect(say('en', 'discord.button.already_retried')).toBe('Retry was already pressed for this job: it runs once, so nothing was sent again.');
  });

  it('tells a press of a Retry whose first press is still starting the job (the intake may yet refuse it) to press again in a moment if it does not run', () => {
    expect(say('en', 'discord.button.retry_starting')).toBe('Your first press of Retry is still starting this job: if it does not run, press Retry again in a moment.');
  });
});
