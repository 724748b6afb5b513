import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT_PLACEHOLDER, say, settingHint } from '../../../bots/runner/index.js';
import type { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import { RecordingLogger } from '../discord/harness.js';
import { finishedJob, type Harness, ADMIN, startWithAdmin } from './harness.js';

const start = startWithAdmin;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/**
 * A person types `command typed` in Slack; Slack sends it as the app's command asks (`escape`: the manifest's
 * `should_escape`). Resolves with the private answer (in the acknowledgement or through the response URL); throws when
 * the answer is not ephemeral.
 */
async function typed(fake: FakeSlack, text: string, options: { escape: boolean; user?: string; command?: string; channel?: string }): Promise<string> {
  const channel = options.channel ?? 'C0ADMIN';
  const ack = await fake.command({ command: options.command ?? '/imagine', text: fake.commandText(text, { escape: options.escape }), user: options.user ?? ADMIN, channel });
  const inAck = (ack.body as { text?: string; response_type?: string } | undefined) ?? {};
  if (inAck.text) return privateText(text, inAck.response_type, inAck.text);
  // The answer through the response URL; or the job's message in the channel, when the text became a job.
  const answer = await fake.waitFor(() => fake.responses.find((r) => ack.responseUrl.endsWith(r.id)) ?? fake.botMessages(channel)[0], `the answer to ${text}`);
  if (!('body' in answer)) throw new Error(`${text} became a job: ${answer.text}`);
  return privateText(text, answer.body.response_type, String(answer.body.text));
}

function privateText(typedText: string, type: unknown, text: string): string {
  if (type !== 'ephemeral') throw new Error(`the answer to ${typedText} is not private: ${String(type)}`);
  return text;
}

/** The answer to a channel or member that reached the bot as plain text, naming `field` (the words are the catalog's). */
const plainMention = (field: string, what: string, command = '/imagine', kind = what.startsWith('#') ? 'channel' : 'member') =>
  `:raised_hand: ${say('en', 'slack.admin.plain_mention', { field: `\`${field}\``, typed: `\`${what}\``, kind, id: kind === 'channel' ? '`C0123ABCD`' : '`U0123ABCD`', command: `\`${command}\`` })}`;

const settingsUsage = () =>
  say('en', 'slack.settings.usage', {
    how: '`/imagine admin set SETTING VALUE`',
    names: 'channels, who, blocked, blocked-words, max-images, qualities, sizes, high-quality, moderation, default-size, default-quality, default-previews, private-results',
    show: '`/imagine admin settings`',
    repair: '`/imagine admin repair`',
  });
const auditUsage = () => `:receipt: ${say('en', 'slack.audit.usage', { set: '`/imagine admin audit #channel`', off: '`/imagine admin audit off`' })}`;
const styleUsage = () => say('en', 'slack.styles.usage', { how: '`/imagine admin style NAME TEXT`', placeholder: PROMPT_PLACEHOLDER, clear: '`clear`' });
const budgetUsage = () =>
  [say('en', 'slack.budget.usage', { how: '`/imagine admin budget CAP USD`' }), say('en', 'slack.budget.group_usage', { how: '`/imagine admin budget @group user-daily 5`' })].join('\n');

describe('admin commands on Slack never become a paid image', () => {
  it('asks for members, never roles (Slack has none), when who or high-quality gets a value it cannot read, such as a user group', async () => {
    h = await start();
    const { fake } = h;
    for (const [word, name] of [['who', 'allowed'], ['high-quality', 'highQualityFor']] as const) {
      const answer = await typed(fake, `admin set ${word} <!subteam^S0DESIGN|@designers>`, { escape: false });
      expect(answer).toContain(settingHint(name, 'en', 'slack'));
      expect(answer).not.toMatch(/role/i);
    }
    expect((await h.runner.policy.effective({ platform: 'slack', scopeId: fake.teamId })).allowed.value).toEqual([]);
  });

  it('refuses a channel or member typed as plain text (an app whose command does not escape them), naming the field, and changes and sends nothing', async () => {
    h = await start();
    const { fake } = h;
    const before = await h.runner.policy.effective({ platform: 'slack', scopeId: fake.teamId });

    expect(await typed(fake, 'admin audit #art-audit', { escape: false })).toBe(plainMention('audit', '#art-audit'));
    expect(await typed(fake, 'admin set channels #art #memes', { escape: false })).toBe(plainMention('channels', '#art'));
    expect(await typed(fake, 'admin set who @sam', { escape: false })).toBe(plainMention('who', '@sam'));
    expect(await typed(fake, 'admin set blocked add @mallory', { escape: false })).toBe(plainMention('blocked', '@mallory'));
    expect(await typed(fake, 'admin set high-quality @sam, @kim', { escape: false })).toBe(plainMention('high-quality', '@sam'));

    expect(h.emulator.requests).toHaveLength(0);
    expect(fake.messages).toEqual([]);
    expect(await h.runner.policy.effective({ platform: 'slack', scopeId: fake.teamId })).toEqual(before);
  });

  it('refuses a bare name where a channel or member is needed (it would be kept as an id that matches no one), and takes a bare id', async () => {
    h = await start();
    const { fake } = h;
    fake.setName('U0SAM', 'sam');
    const before = await h.runner.policy.effective({ platform: 'slack', scopeId: fake.teamId });
    for (const escape of [false, true]) {
      expect(await typed(fake, 'admin set blocked add mallory', { escape })).toBe(plainMention('blocked', 'mallory'));
      expect(await typed(fake, 'admin set blocked mallory', { escape })).toBe(plainMention('blocked', 'mallory'));
      expect(await typed(fake, 'admin set who @sam, kim', { escape })).toBe(escape ? plainMention('who', 'kim') : plainMention('who', '@sam'));
      expect(await typed(fake, 'admin set high-quality remove kim', { escape })).toBe(plainMention('high-quality', 'kim'));
      expect(await typed(fake, 'admin set channels art', { escape })).toBe(plainMention('channels', 'art', '/imagine', 'channel'));
      // A member's id is no channel's.
      expect(await typed(fake, 'admin set channels U0MALLORY1', { escape })).toBe(plainMention('channels', 'U0MALLORY1', '/imagine', 'channel'));
    }
    expect(await h.runner.policy.effective({ platform: 'slack', scopeId: fake.teamId })).toEqual(before);

    expect(await typed(fake, 'admin set blocked add U0MALLORY1', { escape: true })).toMatch(/^:white_check_mark: /);
    expect(await typed(fake, 'admin set channels C0ART0001, G0SECRET01', { escape: true })).toMatch(/^:white_check_mark: /);
    expect(await typed(fake, 'admin set who add user:W0KIM00001', { escape: true })).toMatch(/^:white_check_mark: /);
    expect(await typed(fake, 'admin set high-quality clear', { escape: true })).toMatch(/^:white_check_mark: /);
    const settings = await h.runner.policy.effective({ platform: 'slack', scopeId: fake.teamId });
    expect(settings.blocked.value).toEqual(['U0MALLORY1']);
    expect(settings.channels.value).toEqual(['C0ART0001', 'G0SECRET01']);
    expect(settings.allowed.value).toEqual(['user:W0KIM00001']);
    expect(h.emulator.requests).toHaveLength(0);
    expect(fake.messages).toEqual([]);
  });

  it('reads the same commands when Slack escapes what was typed (the manifest’s should_escape), and refuses a name Slack does not know', async () => {
    h = await start();
    const { fake } = h;
    fake.setName('C0AUDIT', 'art-audit');
    fake.setName('C0ART', 'art');
    fake.setName('U0SAM', 'sam');
    fake.setUserGroup({ id: 'S0DESIGN', handle: 'designers', users: ['U0SAM'] });

    expect(await typed(fake, 'admin audit #art-audit', { escape: true })).toBe(`:white_check_mark: ${say('en', 'audit.set', { scope: 'workspace', channel: '<#C0AUDIT>' })}`);
    expect(await typed(fake, 'admin set channels #art', { escape: true })).toMatch(/^:white_check_mark: /);
    expect(await typed(fake, 'admin set who @sam', { escape: true })).toMatch(/^:white_check_mark: /);
    expect(await typed(fake, 'admin budget @designers user-daily 5', { escape: true })).toMatch(/^:white_check_mark: /);
    const settings = await h.runner.policy.effective({ platform: 'slack', scopeId: fake.teamId });
    expect(settings.auditChannel.value?.channelId).toBe('C0AUDIT');
    expect(settings.channels.value).toEqual(['C0ART']);
    expect(settings.allowed.value).toEqual(['user:U0SAM']);

    // A channel Slack does not know stays plain text, escaping or not.
    expect(await typed(fake, 'admin audit #art-audt', { escape: true })).toBe(plainMention('audit', '#art-audt'));
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('reads a setting of words as typed when Slack escapes the links and & in it: a blocked link is refused in a prompt, privately', async () => {
    h = await start();
    const { fake } = h;
    expect(await typed(fake, 'admin set blocked-words https://spam.example, fish & chips', { escape: true })).toMatch(/^:white_check_mark: /);
    expect((await h.runner.policy.effective({ platform: 'slack', scopeId: fake.teamId })).blockedWords.value).toEqual(['https://spam.example', 'fish & chips']);
    expect(await typed(fake, 'a flyer for https://spam.example --quality low', { escape: true, user: 'U0ALICE', channel: 'C0ART' })).toBe(
      say('en', 'refusal.blocked_word', { word: 'https://spam.example' }),
    );
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('answers an admin sub-command that does not parse with its usage, privately, and sends nothing', async () => {
    h = await start();
    const { fake } = h;
    for (const escape of [false, true]) {
      expect(await typed(fake, 'admin audit of the books', { escape })).toBe(auditUsage());
      expect(await typed(fake, 'admin audit C0AUDIT now', { escape })).toBe(auditUsage());
      expect(await typed(fake, 'admin settings for the art channel', { escape })).toBe(settingsUsage());
      expect(await typed(fake, 'admin repair the art channel', { escape })).toBe(settingsUsage());
      expect(await typed(fake, 'admin budget meeting, flat icons', { escape })).toBe(budgetUsage());
      expect(await typed(fake, 'admin budget user-daily 5 please', { escape })).toBe(budgetUsage());
      expect(await typed(fake, 'admin budget @designers daily 5', { escape })).toBe(budgetUsage());
      expect(await typed(fake, 'admin budget #designers user-daily 5', { escape })).toBe(budgetUsage());
      // A near miss of a setting's name is the command with a wrong name: the answer lists the names.
      expect(await typed(fake, 'admin set max-image 2', { escape })).toBe(`:raised_hand: ${say('en', 'settings.unknown', { names: 'channels, who, blocked, blocked-words, max-images, qualities, sizes, high-quality, moderation, default-size, default-quality, default-previews, private-results' })}`);
    }
    expect(h.emulator.requests).toHaveLength(0);
    expect(fake.messages).toEqual([]);
  });

  it('answers a misspelt admin sub-command with that sub-command’s usage, privately, and sends nothing', async () => {
    h = await start();
    const { fake } = h;
    fake.setUserGroup({ id: 'S0DESIGN', handle: 'designers', users: ['U0SAM'] });
    for (const escape of [false, true]) {
      expect(await typed(fake, 'admin budegt user-daily 5', { escape })).toBe(budgetUsage());
      expect(await typed(fake, 'admin budgets user-daily 5', { escape })).toBe(budgetUsage());
      expect(await typed(fake, 'admin budgte @designers user-daily 5', { escape })).toBe(budgetUsage());
      expect(await typed(fake, 'admin setting', { escape })).toBe(settingsUsage());
      expect(await typed(fake, 'admin sets channels #art', { escape })).toBe(settingsUsage());
      expect(await typed(fake, 'admin ste max-images 2', { escape })).toBe(settingsUsage());
      expect(await typed(fake, 'admin repiar', { escape })).toBe(settingsUsage());
      expect(await typed(fake, 'admin audti off', { escape })).toBe(auditUsage());
      expect(await typed(fake, 'admin styel neon a neon glow around {prompt}', { escape })).toBe(styleUsage());
    }
    expect(await typed(fake, 'admin budegt user-daily 5', { escape: true, user: 'U0ALICE' })).toBe(say('en', 'budget.not_admin', { scope: 'workspace' }));
    expect(await typed(fake, 'admin sets channels #art', { escape: true, user: 'U0ALICE' })).toBe(say('en', 'slack.settings.not_admin'));
    expect(h.emulator.requests).toHaveLength(0);
    expect(fake.messages).toEqual([]);
  });

  it('tells a member who is not an admin so, whatever follows the sub-command, and sends nothing', async () => {
    h = await start();
    const { fake } = h;
    const notAdmin = say('en', 'slack.settings.not_admin');
    expect(await typed(fake, 'admin audit #art-audit', { escape: false, user: 'U0ALICE' })).toBe(notAdmin);
    expect(await typed(fake, 'admin set channels #art', { escape: false, user: 'U0ALICE' })).toBe(notAdmin);
    expect(await typed(fake, 'admin settings of the castle', { escape: false, user: 'U0ALICE' })).toBe(notAdmin);
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('keeps a prompt whose words after “admin” are no sub-command a prompt, a near miss of one too when what follows does not fit it', async () => {
    h = await start();
    const { fake } = h;
    const prompts = ['admin set of flat icons', 'admin panel, flat design', 'admin sea of flat icons', 'admin budgets dashboard, flat design', 'admin audio mixer panel'];
    for (const [i, prompt] of prompts.entries()) {
      await fake.command({ command: '/imagine', text: fake.commandText(`${prompt} --quality low`, { escape: true }), user: 'U0ALICE', channel: 'C0ART' });
      await finishedJob(fake, 'C0ART', i);
    }
    expect(h.emulator.requests.map((r) => r.fields?.prompt)).toEqual(prompts);
  });
});

describe('a command’s text in a mention or a direct message, on Slack', () => {
  it('makes no image: the member is told privately to use the app’s own command, and nothing reaches the image service', async () => {
    h = await start({ bot: { adminUserIds: [ADMIN], commands: { imagine: '/pictor' } } });
    const { fake } = h;
    const useCommand = say('en', 'slack.mention.use_command', { command: '`/pictor …`' });
    // As Slack sends the message's text: mentions in angle brackets, & < > escaped.
    const texts = [
      'admin budget user-daily 5',
      'admin budegt user-daily 5',
      'admin set channels <#C0ART|art>',
      'admin set blocked add mallory',
      'admin repair',
      'admin style neon neon-lit {prompt} &amp; more',
      'admin',
      'settings --private on',
      'history',
      'usage',
      'styles',
    ];
    for (const [i, text] of texts.entries()) {
      for (const user of [ADMIN, 'U0ALICE']) {
        await fake.userMessage({ channel: 'C0ART', user, text: `<@${fake.botUserId}> ${text}` });
        // A job's message, should the text become one, fails the test at once.
        const note = await fake.waitFor(() => fake.ephemerals[i * 2 + (user === ADMIN ? 0 : 1)] ?? fake.botMessages('C0ART')[0], `the private note to ${user} on “${text}”`);
        expect(note).toMatchObject({ channel: 'C0ART', user, text: useCommand });
      }
    }
    await fake.userMessage({ channel: 'D0ADMIN', user: ADMIN, channelType: 'im', text: 'admin set channels <#C0ART|art>' });
    expect(await fake.waitFor(() => fake.ephemerals[texts.length * 2], 'the private note in a direct message')).toMatchObject({ channel: 'D0ADMIN', user: ADMIN, text: useCommand });

    expect(h.emulator.requests).toHaveLength(0);
    expect(fake.botMessages('C0ART')).toEqual([]);
    expect(fake.botMessages('D0ADMIN')).toEqual([]);
    expect((await h.runner.policy.effective({ platform: 'slack', scopeId: fake.teamId })).channels.value).toEqual([]);
  });

  it('keeps a prompt that starts like a command a prompt (admin panel, settings of a castle)', async () => {
    h = await start();
    const { fake } = h;
    await fake.userMessage({ channel: 'C0ART', text: `<@${fake.botUserId}> admin panel, flat design --quality low` });
    await finishedJob(fake, 'C0ART');
    await fake.userMessage({ channel: 'C0ART', text: `<@${fake.botUserId}> settings of a castle --quality low` });
    await finishedJob(fake, 'C0ART', 1);
    expect(h.emulator.requests.map((r) => r.fields?.prompt)).toEqual(['admin panel, flat design', 'settings of a castle']);
    expect(fake.ephemerals).toEqual([]);
  });
});

describe('a refusal that names the command, on Slack', () => {
  it('names the app’s own command (private_not_allowed: how to turn a private default off)', async () => {
    const logger = new RecordingLogger();
    h = await start({ bot: { adminUserIds: [ADMIN], commands: { imagine: '/pictor' } }, logger });
    const { fake } = h;
    expect(await typed(fake, 'settings --private on', { escape: true, user: 'U0ALICE', command: '/pictor' })).toMatch(/^:white_check_mark:/);
    expect(await typed(fake, 'admin set private-results off', { escape: true, command: '/pictor' })).toMatch(/^:white_check_mark:/);
    const refused = await typed(fake, 'a hidden thing', { escape: true, user: 'U0ALICE', command: '/pictor', channel: 'C0ART' });
    // The sentence is describe-failure's to check; here, the refusal's code and the command it names.
    // Logged once, by the runner that refused it (the member's: info).
    expect(logger.entries.filter((e) => (e.obj as { code?: string }).code === 'private_not_allowed').map((e) => e.level)).toEqual(['info']);
    expect(refused).toContain('/pictor settings --private off');
    expect(refused).not.toContain('/imagine');
    expect(h.emulator.requests).toHaveLength(0);
  });
});
