import { describe, expect, it } from 'vitest';
import {
  AuditChannelError,
  auditGreeting,
  auditLinesOf,
  auditSkippedNote,
  auditSummary,
  changeAuditChannel,
  describeForgotten,
  describeSettings,
  type AuditEntry,
  type AuditPoster,
} from '../../../bots/runner/index.js';
import { requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();

const base = { userId: 'U1', channelId: 'C1', kind: 'generate', n: 2, size: '1024x1024', quality: 'high', at: 0 } as const;

describe('an audit entry in words', () => {
  it('says a finished job: what happened, who, where, the job, its cost and its link', () => {
    const entry: AuditEntry = { ...base, type: 'job', prompt: 'a red fox', status: 'completed', costUsd: 0.334, link: 'https://discord.com/channels/1/2/3' };
    expect(auditLinesOf(entry, 'en')).toEqual({
      head: '✅ Done · <@U1> in <#C1>',
      details: 'Image · 2 images · 1024x1024 · high',
      prompt: 'a red fox',
      erased: undefined,
      notes: ['cost $0.334', 'result: https://discord.com/channels/1/2/3'],
    });
    expect(auditLinesOf(entry, 'de').head).toBe('✅ Fertig · <@U1> in <#C1>');
  });

  it('says a failed job’s reason, a private job without a link, a refusal with its code and blocked word, and an erased prompt', () => {
    const failed = auditLinesOf({ ...base, type: 'job', prompt: 'x', status: 'failed:rate_limited' }, 'en');
    expect([failed.head, failed.notes]).toEqual(['⚠️ Failed · <@U1> in <#C1>', ['reason: rate_limited']]);
    const secret = auditLinesOf({ ...base, type: 'job', prompt: 'a secret', status: 'completed', costUsd: 0.01, private: true }, 'en');
    expect(secret.notes).toEqual(['cost $0.0100', 'private: shown only to the member, no link']);
    const refused = auditLinesOf({ ...base, kind: 'edit', n: 1, type: 'refusal', prompt: 'gory', status: 'blocked_word', word: 'gory' }, 'en');
    expect([refused.head, refused.details, refused.notes]).toEqual(['✋ Refused (blocked_word) · <@U1> in <#C1>', 'Edit · 1 image · 1024x1024 · high', ['blocked word: gory']]);
    const erased = auditLinesOf({ ...base, type: 'job', prompt: '', erased: true, status: 'cancelled' }, 'en');
    expect([erased.head, erased.prompt, erased.erased]).toEqual(['⏹️ Cancelled · <@U1> in <#C1>', undefined, '(erased at the member’s request)']);
  });

  it('says what a cancelled or failed job the ledger charged cost, beside how it ended', () => {
    const cancelled = auditLinesOf({ ...base, type: 'job', prompt: 'x', status: 'cancelled', costUsd: 0.00636 }, 'en');
    expect([cancelled.head, cancelled.notes]).toEqual(['⏹️ Cancelled · <@U1> in <#C1>', ['cost $0.0064']]);
    const failed = auditLinesOf({ ...base, type: 'job', prompt: 'x', status: 'failed:upstream_error', costUsd: 0.00636 }, 'en');
    expect([failed.head, failed.notes]).toEqual(['⚠️ Failed · <@U1> in <#C1>', ['cost $0.0064', 'reason: upstream_error']]);
  });

  it('says at most what a job a stop cut off may cost when its charge was not settled as its end was recorded', () => {
    const stopped = auditLinesOf({ ...base, type: 'job', prompt: 'x', status: 'failed:interrupted', mayCostUsd: 0.00636 }, 'en');
    expect(stopped.notes).toEqual(['cost ≤ $0.0064', 'reason: interrupted']);
  });

  it('says the greeting, the skipped entries, a post’s summary and forget’s answer', () => {
    expect(auditGreeting('discord', 'en')).toBe(
      'Audit entries for this server will be posted here: every job (who, where, prompt, options, cost, link) and every refusal by a rule or a budget.',
    );
    expect(auditGreeting('slack', 'en')).toContain('this workspace');
    expect(auditSkippedNote(0, 'en')).toBeUndefined();
    expect(auditSkippedNote(3, 'en')).toBe('3 earlier entries were not posted: more came than this channel can take.');
    expect(auditSummary(1, 'en')).toBe('1 audit entry');
    expect(describeForgotten({ entries: 2, auditPosts: 0, auditPending: 0 }, 'en', '🧹')).toBe('🧹 Erased your history (2 jobs). Images already posted stay in their channels.');
    expect(describeForgotten({ entries: 2, auditPosts: 3, auditPending: 0 }, 'en', '🧹')).toBe('🧹 Erased your history (2 jobs). Images already posted stay in their channels. Your prompts in 3 audit posts were erased too.');
    expect(describeForgotten({ entries: 2, auditPosts: 0, auditPending: 1 }, 'en', '🧹')).toBe(
      '🧹 Erased your history (2 jobs). Images already posted stay in their channels. The audit channel still shows your prompt in 1 post that could not be edited yet: Pictor no longer keeps it and edits that post again shortly.',
    );
    expect(describeForgotten({ entries: 0, auditPosts: 1, auditPending: 2 }, 'en', '🧹')).toContain('Your prompts in 1 audit post were erased too. The audit channel still shows your prompt in 2 posts that could not be edited yet');
  });
});

describe('changeAuditChannel: an admin chooses the audit channel', () => {
  function poster(greet: AuditPoster['greet']): AuditPoster {
    return { maxEntries: 10, post: async () => ({ messageId: '1' }), edit: async () => undefined, greet };
  }

  it('greets the channel first, then keeps it; off turns it off; the settings view shows it', async () => {
    const { runner } = await kit.runner();
    const greeted: string[] = [];
    runner.audit.setPoster('discord', poster(async (where) => void greeted.push(where.channelId)));
    const admin = requester({ isAdmin: true, userId: '42', locale: 'en-US' });
    expect(await changeAuditChannel(runner, requester(), 'C-audit')).toEqual({ ok: false, code: 'not_admin', message: 'Only an admin of this server can choose its audit channel.' });
    expect(await changeAuditChannel(runner, admin, 'C-audit')).toEqual({
      ok: true,
      message: 'Audit entries of this server now go to <#C-audit>: every job and every refusal by a rule or a budget, a few at a time.',
    });
    expect(greeted).toEqual(['C-audit']);
    expect((await runner.policy.effective(admin)).auditChannel.value).toEqual({ channelId: 'C-audit', locale: 'en-US' });
    expect(describeSettings(await runner.policy.effective(admin), '`/imagine-admin set`')).toContain('• audit channel: <#C-audit> (admin: <@42>,');
    expect(await changeAuditChannel(runner, admin, undefined)).toEqual({ ok: true, message: 'Audit entries are no longer posted (they went to <#C-audit>).' });
    expect(await changeAuditChannel(runner, admin, undefined)).toEqual({ ok: true, message: 'No audit channel is set.' });
  });

  it('keeps nothing when the bot cannot post there, and says how to fix it', async () => {
    const { runner } = await kit.runner();
    const admin = requester({ isAdmin: true });
    runner.audit.setPoster('discord', poster(async () => Promise.reject(new AuditChannelError('no_permission', 50013))));
    expect(await changeAuditChannel(runner, admin, 'C-locked')).toEqual({
      ok: false,
      code: 'no_permission',
      message: 'I cannot post in <#C-locked>: give the bot View Channel, Send Messages and Embed Links there, then try again. Nothing changed.',
    });
    runner.audit.setPoster('discord', poster(async () => Promise.reject(new AuditChannelError('not_in_channel', 'not_in_channel'))));
    expect(await changeAuditChannel(runner, admin, 'C-away', '`/invite @Pictor`')).toMatchObject({
      code: 'not_in_channel',
      message: 'I am not a member of <#C-away>: invite me there with `/invite @Pictor`, then try again. Nothing changed.',
    });
    runner.audit.setPoster('discord', poster(async () => Promise.reject(new Error('socket hang up'))));
    expect(await changeAuditChannel(runner, admin, 'C-flaky')).toMatchObject({ code: 'failed', message: 'I could not post in <#C-flaky> (failed). Nothing changed; try again in a minute.' });
    expect((await runner.policy.effective(admin)).auditChannel.value).toBeUndefined();
  });

  it('tells the admins in the settings view when the audit posts keep failing', async () => {
    const { runner } = await kit.runner();
    const admin = requester({ isAdmin: true });
    await runner.policy.set(admin, 'auditChannel', { channelId: 'C-audit' });
    const text = describeSettings(await runner.policy.effective(admin), '`/imagine-admin set`', 'en', { channelId: 'C-audit', failures: 3, code: '50013', at: 0 });
    expect(text).toContain('⚠️ The last 3 audit posts to <#C-audit> failed (50013): check that the bot can still post there, or choose another channel.');
  });
});
