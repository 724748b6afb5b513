import { describe, expect, it } from 'vitest';
import { settingHint } from '../../../bots/runner/setting-words.js';
import { LOCALES } from '../../../bots/runner/words.js';


describe('what a setting takes, in words', () => {
  it.each(['allowed', 'highQualityFor'] as const)('asks Slack for %s as members, never as roles Slack does not have, in every language', (name) => {
    for (const locale of LOCALES) {
      const slack = settingHint(name, locale, 'slack');
      expect(slack).not.toBe(settingHint(name, locale, 'discord'));
      expect(slack).not.toBe(settingHint(name, locale));
    }
    expect(settingHint(name, 'en', 'slack')).not.toMatch(/role/i);
    expect(settingHint(name, 'en', 'discord')).toMatch(/role mentions/);
  });

  it('words the other settings the same on both platforms', () => {
    for (const name of ['blocked', 'channels', 'maxImages', 'qualities'] as const) expect(settingHint(name, 'en', 'slack')).toBe(settingHint(name, 'en', 'discord'));
  });
});
