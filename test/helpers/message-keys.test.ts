import { describe, expect, it } from 'vitest';
import { say } from '../../bots/runner/index.js';
import { keyOf, slackKeyOf } from './message-keys.js';

describe('keyOf: which catalog message a line is', () => {
  it('names the message that says more of the line in its own words, not the longer pattern', () => {
    const style = say('en', 'styles.line', { name: 'neon', text: 'neon {prompt}', hasOptions: 'no' });
    expect(keyOf(style)).toBe('styles.line');
    expect(slackKeyOf(style)).toBe('styles.line');
    expect(keyOf(say('en', 'member.line', { name: 'size', value: '1024x1024', ignored: 'no' }))).toBe('member.line');
  });

  it('refuses a line two messages say in as many words of their own, naming both, rather than pick one by catalog order', () => {
    expect(() => keyOf(say('en', 'settings.audit_off'))).toThrow(/ambiguous: "off" .* by member\.on_off, settings\.audit_off/);
    expect(() => slackKeyOf(say('en', 'slack.home.history_none'))).toThrow(/ambiguous: "Nothing yet\." .* by history\.empty, slack\.home\.history_none/);
  });

  it('names a line by the messages of the surface that wrote it: Slack’s own for Slack, none of them for Discord', () => {
    const line = say('en', 'slack.button.only_requester_delete', { user: '<@U0ALICE>' });
    expect(slackKeyOf(line)).toBe('slack.button.only_requester_delete');
    expect(keyOf(say('en', 'discord.button.only_requester', { user: '<@1>', action: 'delete' }))).toBe('discord.button.only_requester');
  });

  it('names a line no message says as unknown', () => {
    expect(keyOf('zq xv wk')).toBe('unknown: zq xv wk');
  });
});
