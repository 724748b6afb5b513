import { describe, expect, it } from 'vitest';
import { formatUsd } from '../../../src/index.js';
import { describeReset } from '../../../src/internal.js';
import { refusalFromPolicy, refusalFromReservation } from '../../../bots/runner/describe-refusal.js';
import { nested, say, sayWords } from '../../../bots/runner/index.js';
import { describeQueueFull } from '../../../bots/runner/queue-bound.js';

describe('refusalFromPolicy', () => {
  it('tells a member of a server the operator has not allowed that the bot is off here and whom to ask', () => {
    expect(refusalFromPolicy('scope_not_allowed', { platform: 'discord' }).message).toBe(
      'This bot is not enabled for this server: its operator has not allowed it here, so it makes no images. Ask the bot’s operator to add this server.',
    );
    expect(refusalFromPolicy('scope_not_allowed', { platform: 'slack' }).message).toContain('enabled for this workspace');
  });

  it('tells someone in a DM or a user install that the operator keeps the bot to its servers', () => {
    expect(refusalFromPolicy('dms_not_enabled', { platform: 'discord' }).message).toBe(
      'This bot makes images only in the servers it was added to: its operator has not turned on DMs and user installs. Use it in one of those servers.',
    );
  });

  it('says who decided and what to do for who-and-where refusals', () => {
    expect(refusalFromPolicy('member_blocked', { platform: 'discord' }).message).toBe(
      'An admin of this server has blocked you from making images here; ask one of them if you think this is a mistake.',
    );
    expect(refusalFromPolicy('member_not_allowed', { platform: 'slack' }).message).toBe(
      'The admins of this workspace have chosen who may make images, and you are not among them; ask one of them for access.',
    );
    expect(refusalFromPolicy('channel_not_allowed', { platform: 'discord', channels: ['1', '2'] }).message).toBe('Images can’t be made in this channel; use <#1>, <#2>.');
  });

  it('names the blocked word, the limit, or what is allowed for what-refusals', () => {
    expect(refusalFromPolicy('blocked_word', { platform: 'discord', word: 'kraken' }).message).toBe('Your prompt contains “kraken”, which is blocked here; rephrase it and try again.');
    expect(refusalFromPolicy('too_many_images', { platform: 'discord', limit: 2, used: 4 }).message).toBe('At most 2 images per job can be made here; ask for fewer.');
    expect(refusalFromPolicy('too_many_images', { platform: 'discord', limit: 1, used: 2 }).message).toBe('At most 1 image per job can be made here; ask for fewer.');
    expect(refusalFromPolicy('quality_not_allowed', { platform: 'slack', allowed: ['low', 'medium'] }).message).toBe('That quality is not allowed here; choose one of low or medium.');
    expect(refusalFromPolicy('high_quality_not_allowed', { platform: 'discord' }).message).toBe(
      'Quality high is kept for some members of this server; choose another quality or ask an admin.',
    );
    expect(refusalFromPolicy('size_not_allowed', { platform: 'slack', allowed: ['1024x1024'] }).message).toBe('That size is not allowed here; choose one of 1024x1024.');
    expect(refusalFromPolicy('moderation_not_allowed', { platform: 'discord' }).message).toBe(
      'Moderation low is not allowed here; leave moderation unset to use this server’s level.',
    );
  });

  it('refuses a form’s private job, before the form opens or as it is submitted, with advice the form can follow: it names no private option, which the form lacks', () => {
    expect(refusalFromPolicy('private_not_allowed', { platform: 'slack', inForm: true }).message).toBe(
      'This workspace does not allow private results, and the edit of a private result would be private too: edit an image everyone can see instead.',
    );
    expect(refusalFromPolicy('private_not_allowed', { platform: 'discord', inForm: true, fromDefault: true }).message).toBe(
      'This server does not allow private results, and your default asks for them: turn your default off with /imagine-settings private: False, then edit again.',
    );
    const slack = sayWords('en', refusalFromPolicy('private_not_allowed', { platform: 'slack', inForm: true, fromDefault: true }).words);
    expect(slack).toMatch(/turn your default off with \S+ settings --private off, then edit again\.$/);
    expect(slack).not.toMatch(/--public|ask again without/);
  });

  it('refuses a private job its button runs again (Reroll, Retry) with advice a button can follow: ask again with the command, without private', () => {
    expect(refusalFromPolicy('private_not_allowed', { platform: 'discord', again: true }).message).toBe(
      'This server does not allow private results, and a private job run again by its button would be private too: ask again with /imagine, without private.',
    );
    const slack = refusalFromPolicy('private_not_allowed', { platform: 'slack', again: true });
    expect(slack.message).toBe('This workspace does not allow private results, and a private job run again by its button would be private too: ask again with /imagine, without --private.');
    // The Slack app says it with its own configured command; Discord's as the member's Discord shows it.
    expect(sayWords('en', { ...slack.words, values: { ...slack.words.values, command: '/draw' } })).toContain('ask again with /draw, without --private.');
    expect(sayWords('de', refusalFromPolicy('private_not_allowed', { platform: 'discord', again: true }).words)).toContain(`/${say('de', 'discord.command.imagine.name')}, ohne private`);
  });

  it('refuses a job a button runs again that the presser’s private default would make private with advice a button can follow: their default off, then the button again', () => {
    expect(refusalFromPolicy('private_not_allowed', { platform: 'discord', again: true, fromDefault: true }).message).toBe(
      'This server does not allow private results, and your default asks for them: turn your default off with /imagine-settings private: False, then press the button again.',
    );
    const slack = refusalFromPolicy('private_not_allowed', { platform: 'slack', again: true, fromDefault: true });
    expect(slack.message).toBe('This workspace does not allow private results, and your default asks for them: turn your default off with /imagine settings --private off, then press the button again.');
    expect(sayWords('en', { ...slack.words, values: { ...slack.words.values, command: '/draw' } })).toContain('/draw settings --private off');
    expect(sayWords('de', refusalFromPolicy('private_not_allowed', { platform: 'discord', again: true, fromDefault: true }).words)).toContain(`/${say('de', 'discord.command.settings.name')} private: False`);
  });

  it('names the rules that cannot be read, tells members to ask an admin and admins the commands that clear them all or set them again', () => {
    expect(refusalFromPolicy('settings_unreadable', { platform: 'discord', settings: ['blocked', 'allowed'] }).message).toBe(
      'Some rules of this server cannot be read (damaged in the bot’s storage): blocked, who. No images are made here until an admin sets each again or clears them: ask an admin; admins: /imagine-admin repair clears what cannot be read, or /imagine-admin set, with a value or clear.',
    );
    const slack = refusalFromPolicy('settings_unreadable', { platform: 'slack', settings: ['maxImages'] });
    expect(slack.message).toBe(
      'A rule of this workspace cannot be read (damaged in the bot’s storage): max-images. No images are made here until an admin sets it again or clears it: ask an admin; admins: /imagine admin repair clears what cannot be read, or /imagine admin set SETTING VALUE, or /imagine admin set SETTING clear.',
    );
    // The Slack app says it with its own configured command.
    expect(sayWords('en', { ...slack.words, values: { ...slack.words.values, command: '/draw' } })).toContain('/draw admin repair clears what cannot be read, or /draw admin set SETTING VALUE, or /draw admin set SETTING clear');
    expect(sayWords('de', slack.words)).toBe(
      'Eine Regel dieses Workspaces lässt sich nicht lesen (im Speicher des Bots beschädigt): max-images. Hier werden keine Bilder erstellt, bis ein Admin sie neu festlegt oder zurücksetzt: frag einen Admin; Admins: /imagine admin repair setzt alles Unlesbare zurück, oder /imagine admin set SETTING VALUE oder /imagine admin set SETTING clear.',
    );
  });
});

describe('refusalFromPolicy: the admin command on Discord', () => {
  it('names /imagine-admin to whom cannot use the server for an unreadable rule as their Discord shows it, in every language (/bild-admin)', () => {
    const refusal = refusalFromPolicy('settings_unreadable', { platform: 'discord', settings: ['blocked'] });
    expect(sayWords('de', refusal.words)).toContain('Admins: /bild-admin repair setzt alles Unlesbare zurück, oder /bild-admin set, mit einem Wert oder clear.');
    for (const locale of ['de', 'fr', 'es', 'pt-BR', 'ja'] as const) {
      const said = sayWords(locale, refusal.words);
      expect(said).toContain(`/${say(locale, 'discord.command.admin.name')} repair`);
      expect(said).not.toContain('/imagine-admin');
    }
  });
});

describe('refusalFromPolicy: the settings command on Discord', () => {
  it('names /imagine-settings to whom asks for a private result by default where none is allowed as their Discord shows it, in every language', () => {
    for (const inForm of [false, true]) {
      const refusal = refusalFromPolicy('private_not_allowed', { platform: 'discord', fromDefault: true, inForm });
      for (const locale of ['en', 'de', 'fr', 'es', 'pt-BR', 'ja'] as const) {
        expect(sayWords(locale, refusal.words), `${locale}${inForm ? ' in a form' : ''}`).toContain(`/${say(locale, 'discord.command.settings.name')} private: False`);
      }
    }
    // Slack's sentence names the app's own command.
    const slack = refusalFromPolicy('private_not_allowed', { platform: 'slack', fromDefault: true });
    expect(sayWords('de', { ...slack.words, values: { ...slack.words.values, command: '/draw' } })).toContain('/draw settings --private off');
  });
});

describe('refusalFromReservation', () => {
  it('names the user’s own DM budget, not a server’s, for a job in a DM or a user install', () => {
    const now = Date.parse('2026-03-01T12:00:00Z');
    const spent = { ok: false as const, code: 'budget_scope_daily' as const, limit: 0.5, used: 0.5, resetsAt: Date.parse('2026-03-02T00:00:00Z') };
    expect(refusalFromReservation(spent, { estimateUsd: 0.1, platform: 'discord', now, scopeId: 'dm:42' }).message).toBe(
      'Your use of the bot outside servers has reached its daily budget of $0.500 (spent $0.500, $0.00 left); it resets at 00:00 UTC (in 12 h).',
    );
    expect(refusalFromReservation(spent, { estimateUsd: 0.1, platform: 'discord', now, scopeId: '42' }).message).toMatch(/^This server has reached its daily budget/);
  });

  it('says what is left as the ledger counts it, without the noise of a float subtraction', () => {
    // $1 a day with $0.90 spent: $0.10 left, where a float subtraction says 0.09999999999999998 (shown as $0.1000).
    const now = Date.parse('2026-03-01T12:00:00Z');
    const refusal = { ok: false as const, code: 'budget_user_daily' as const, limit: 1, used: 0.9, resetsAt: Date.parse('2026-03-02T00:00:00Z') };
    expect(refusalFromReservation(refusal, { estimateUsd: 0.2, platform: 'discord', now }).message).toContain(` ${formatUsd(0.1)} left `);
  });

  it('never tells a member to try again in 0 ms: a cooldown that ran out while the refusal was worded is the smallest wait said', () => {
    const now = Date.parse('2026-03-01T12:00:00Z');
    const over = { ok: false as const, code: 'user_cooldown' as const, limit: 30, used: 30, resetsAt: now - 250 };
    expect(refusalFromReservation(over, { estimateUsd: 0, platform: 'discord', now }).message).toBe('You can start one job every 30 s; try again in 1 ms.');
  });

  it('never says a budget resets in 0 ms: a reset that came while the refusal was worded is the smallest wait said', () => {
    const now = Date.parse('2026-03-02T00:00:00.250Z');
    const spent = { ok: false as const, code: 'budget_user_daily' as const, limit: 1, used: 1, resetsAt: Date.parse('2026-03-02T00:00:00Z') };
    expect(refusalFromReservation(spent, { estimateUsd: 0.2, platform: 'discord', now }).message).toContain('(in 1 ms)');
  });

  it('says when a budget resets as the CLI and n8n do, each side of the core’s lines: under a second, a day, two days, midnight UTC', () => {
    const DAY = 24 * 60 * 60_000;
    for (const now of [Date.parse('2026-03-01T23:59:59.500Z'), Date.parse('2026-03-01T12:00:00Z')]) {
      for (const wait of [-250, 0, 0.4, 250, 999, 1_000, 1_001, DAY - 1, DAY, DAY + 1, 2 * DAY, 2 * DAY + 1, 30 * DAY]) {
        const spent = { ok: false as const, code: 'budget_user_daily' as const, limit: 1, used: 1, resetsAt: now + wait };
        expect(refusalFromReservation(spent, { estimateUsd: 0.2, platform: 'discord', now }).message).toContain(`it resets at ${describeReset(now + wait, now)}.`);
      }
    }
  });
});

describe('a house style asked for outside servers', () => {
  it('says styles belong to a server, not that an admin could define one there', () => {
    expect(say('en', 'refusal.style_outside_servers', { style: 'neon' })).toBe('House styles belong to a server, and none apply outside one, so “neon” can’t be used here; leave the style out.');
  });
});

describe('a house style whose option is not allowed here', () => {
  it('names the style, the option and its value, and what the member can do', () => {
    expect(say('en', 'refusal.style_option_not_allowed', { style: 'hq', option: 'quality', value: 'high' })).toBe(
      'The house style “hq” asks for quality high, which is not allowed here; choose quality yourself, pick another style, or ask an admin to change it.',
    );
  });
});

describe('a house style whose option does not go with the member’s', () => {
  it('names the style, its option and value, what the rule asks, and what the member can do', () => {
    const detail = nested('failure.validation_transparent_format', { option: '--format', background: '--background', formats: 'png or webp', given: 'jpeg' });
    expect(say('en', 'refusal.style_option_conflict', { style: 'tr', option: '--background', value: 'transparent', detail })).toBe(
      'The house style “tr” asks for --background transparent, and --format must be png or webp when --background is transparent (jpeg has no transparency); choose your options to go with it, pick another style, or ask an admin to change it.',
    );
  });
});

describe('describeQueueFull', () => {
  it('names the jobs waiting and the bound, that the job costs nothing, and the wait at the present pace', () => {
    expect(sayWords('en', describeQueueFull({ queued: 6, maxQueued: 6, waitMs: 120_000 }))).toBe(
      'The bot is busy: 6 jobs are waiting, the most it queues at once (6), so this one was not started and costs nothing; at the present pace a new job would wait about 2 min, so try again then.',
    );
  });

  it('says to try again in a few minutes when none was sent in the last minute', () => {
    expect(sayWords('en', describeQueueFull({ queued: 2, maxQueued: 2, waitMs: undefined }))).toBe(
      'The bot is busy: 2 jobs are waiting, the most it queues at once (2), so this one was not started and costs nothing; none has been sent in the last minute, so try again in a few minutes.',
    );
  });

  it('names the megabytes of images waiting, the edit’s own and the bound, then the wait, for an edit refused for its images', () => {
    const MB = 1024 * 1024;
    expect(sayWords('en', describeQueueFull({ queued: 12, maxQueued: 200, waitMs: 120_000, input: { heldBytes: 500 * MB, jobBytes: 40 * MB, maxBytes: 512 * MB } }))).toBe(
      'The bot is busy: the edits waiting hold 500 MB of images, and this one’s 40 MB would pass the most it keeps at once (512 MB), so it was not started and costs nothing; at the present pace a new job would wait about 2 min, so try again then.',
    );
    expect(sayWords('en', describeQueueFull({ queued: 3, maxQueued: 200, waitMs: undefined, input: { heldBytes: 20_000, jobBytes: 1, maxBytes: 1 * MB } }))).toBe(
      'The bot is busy: the edits waiting hold 1 MB of images, and this one’s 1 MB would pass the most it keeps at once (1 MB), so it was not started and costs nothing; none has been sent in the last minute, so try again in a few minutes.',
    );
  });
});
