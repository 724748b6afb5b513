import { describe, expect, it } from 'vitest';
import { KEPT_IMAGES_MS, whyNotRunAgain } from '../../../bots/discord/job-rules.js';

describe('why a job cannot run again (whyNotRunAgain, the one rule its Retry, Reroll and sweep read)', () => {
  const record = { prompt: 'a fox', kind: 'edit' as const, inputs: [{ file: 'in-0' }], createdAt: 1_000 };

  it('says nothing against a job that can run again', () => {
    expect(whyNotRunAgain(record, 2_000)).toBeUndefined();
    expect(whyNotRunAgain({ ...record, kind: 'generate', inputs: [] }, 1_000 + KEPT_IMAGES_MS + 1)).toBeUndefined();
  });

  it('names its code with its words: a prompt erased first (`prompt_erased`), even for an edit whose images are gone too', () => {
    expect(whyNotRunAgain({ ...record, prompt: '' })?.code).toBe('prompt_erased');
    expect(whyNotRunAgain({ ...record, prompt: '', inputs: [] })?.code).toBe('prompt_erased');
    expect(whyNotRunAgain({ ...record, prompt: '', kind: 'generate', inputs: [] })?.words).toBeDefined();
  });

  it('an edit with no kept inputs, or asked with `now` past the images’ life, is `no_images`', () => {
    expect(whyNotRunAgain({ ...record, inputs: [] })?.code).toBe('no_images');
    expect(whyNotRunAgain(record, 1_000 + KEPT_IMAGES_MS + 1)?.code).toBe('no_images');
    expect(whyNotRunAgain(record)?.code).toBeUndefined();
  });
});
