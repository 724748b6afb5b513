import { afterEach, describe, expect, it, vi } from 'vitest';
import { auditGreeting, describeAuditTrouble, say } from '../../../bots/runner/index.js';
import { settingsCommandOf } from '../../../bots/slack/listeners/settings-commands.js';
import type { FakeMessage } from '../../fakes/slack/slack-objects.js';
import { finishedJob, privately, startHarness, type Harness } from './harness.js';

const ADMIN = 'U0ADMIN';
const AUDIT = 'C0AUDIT';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const start = () => startHarness({ bot: { adminUserIds: [ADMIN] } });

/** The section texts of a message's blocks: one per audit entry. */
const sections = (message: FakeMessage): string[] =>
  ((message.blocks ?? []) as { type: string; text?: { text: string } }[]).filter((b) => b.type === 'section').map((b) => b.text!.text);

/** Waits for an audit post in the audit channel with an entry containing `text`. */
function auditEntry(harness: Harness, text: string): Promise<string> {
  return harness.fake.waitFor(() => harness.fake.botMessages(AUDIT).flatMap(sections).find((t) => t.includes(text)), `an audit entry with “${text}”`);
}

describe('the audit channel on Slack', () => {
  it('reads admin audit #channel, admin audit off and admin audit; anything else after `admin audit` is answered with its usage', () => {
    expect(settingsCommandOf('admin audit &lt;#C0AUDIT|audit&gt;')).toEqual({ kind: 'audit', channel: 'C0AUDIT', off: false });
    expect(settingsCommandOf('admin audit off')).toEqual({ kind: 'audit', channel: undefined, off: true });
    expect(settingsCommandOf('admin audit')).toEqual({ kind: 'audit', channel: undefined, off: false });
    expect(settingsCommandOf('admin audit of the books')).toEqual({ kind: 'usage', of: 'audit' });
    expect(settingsCommandOf('admin audit #audit')).toEqual({ kind: 'plain_mention', field: 'audit', typed: '#audit', of: 'channel' });
  });

  it('posts a public job (with its link), a private one (no link) and a refusal (sent nowhere else)', async () => {
    h = await start();
    const { fake } = h;
    expect(await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN, 'C0ADMIN')).toBe(`:white_check_mark: ${say('en', 'audit.set', { scope: 'workspace', channel: `<#${AUDIT}>` })}`);
    expect(fake.botMessages(AUDIT).map((m) => m.text)).toEqual([`:receipt: ${auditGreeting('slack', 'en')}`]);

    await fake.command({ command: '/imagine', text: 'a public lighthouse --quality low', channel: 'C0ART', user: 'U0ALICE' });
    const job = await finishedJob(fake, 'C0ART');
    const entry = await auditEntry(h, 'a public lighthouse');
    // Who, where, the job and its link (the words are describe-audit's).
    expect(entry).toContain('<@U0ALICE>');
    expect(entry).toContain('<#C0ART>');
    expect(entry).toContain('1024x1024 · low');
    expect(entry).toMatch(/\$0\.0\d+/);
    expect(entry).toContain(`https://slack.com/archives/C0ART/p${job.ts.replace('.', '')}`);

    await privately(fake, 'a private diary --quality low --private', 'U0ALICE', 'C0ART');
    await finishedJob(fake, fake.dmOf('U0ALICE'));
    const privateEntry = await auditEntry(h, 'a private diary');
    expect(privateEntry).toContain(say('en', 'audit.private'));
    expect(privateEntry).not.toContain('https://');

    await privately(fake, 'admin set blocked-words kraken', ADMIN);
    const sentBefore = h.emulator.requests.length;
    const refused = await privately(fake, 'a kraken attack', 'U0ALICE', 'C0ART');
    expect(refused).toContain('kraken');
    const refusal = await auditEntry(h, 'a kraken attack');
    expect(refusal).toContain('(blocked_word)');
    expect(refusal).toContain(say('en', 'audit.blocked_word', { word: 'kraken' }));
    expect(h.emulator.requests).toHaveLength(sentBefore);
    // Nothing of the refusal in the channel where it was asked: only the public job's messages.
    expect(fake.botMessages('C0ART').some((m) => m.text.includes('kraken'))).toBe(false);
  });

  it('links a job asked in a direct message with the bot from the member’s own history only, not from the audit channel nor the workspace’s history: only the member can open that message', async () => {
    h = await start();
    const { fake } = h;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN, 'C0ADMIN');
    await fake.userMessage({ channel: 'D0ALICE', channelType: 'im', user: 'U0ALICE', text: 'a lighthouse asked in a DM --quality low' });
    await finishedJob(fake, 'D0ALICE');
    const entry = await auditEntry(h, 'a lighthouse asked in a DM');
    expect(entry).toContain('<@U0ALICE>');
    expect(entry).not.toContain('https://');
    const alice = { platform: 'slack' as const, userId: 'U0ALICE', channelId: '', scopeId: 'T0PICTOR' };
    await vi.waitFor(async () => expect(await h!.runner.history!.mine(alice)).toHaveLength(1), { timeout: 15_000 });
    // The member's entry is written before the workspace's list of members: both, once the keep has settled.
    await h.runner.history!.settled();
    const [kept] = await h.runner.history!.mine(alice);
    expect(kept).toMatchObject({ prompt: 'a lighthouse asked in a DM', status: 'completed' });
    expect(kept!.link).toMatch(/^https:\/\/slack\.com\/archives\/D0ALICE\//);
    const [seen] = (await h.runner.history!.ofScope({ ...alice, userId: ADMIN, isAdmin: true }))!;
    expect(seen).toMatchObject({ prompt: 'a lighthouse asked in a DM' });
    expect(seen!.link).toBeUndefined();
  });

  it('pings nobody: a mention in a prompt, or in the blocked word a refusal names, is shown as written', async () => {
    h = await start();
    const { fake } = h;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN, 'C0ADMIN');
    // Slack writes `@here` in a command's text as `<!here>`: an admin blocking it blocks `@here`, as typed.
    await privately(fake, 'admin set blocked-words <!here>', ADMIN);
    await privately(fake, 'a shout <!here> to <!channel>', 'U0ALICE', 'C0ART');
    const refusal = await auditEntry(h, '(blocked_word)');
    expect(refusal).not.toMatch(/<!(here|channel|everyone)/);
    expect(refusal).toContain('@here');
  });

  it('posts a prompt of the longest, all angle brackets (each escaped into 4 characters), within a section’s 3,000', async () => {
    h = await start();
    const { fake } = h;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN, 'C0ADMIN');
    await privately(fake, 'admin set blocked-words kraken', ADMIN);
    // Slack sends `<` in a command's text as `&lt;`.
    await privately(fake, `kraken ${'&lt;'.repeat(1200)}`, 'U0ALICE', 'C0ART');
    const refusal = await auditEntry(h, '(blocked_word)');
    expect(refusal.length).toBeLessThanOrEqual(3000);
    expect(refusal).toContain('&lt;&lt;&lt;');
  });

  it('says how to invite the bot into a channel it is not in, and keeps nothing', async () => {
    h = await start();
    h.fake.removeBotFrom(AUDIT);
    const answer = await privately(h.fake, `admin audit <#${AUDIT}|audit>`, ADMIN);
    expect(answer).toBe(`:raised_hand: ${say('en', 'audit.not_in_channel', { channel: `<#${AUDIT}>`, invite: `\`/invite <@${h.bot.botUserId}>\`` })}`);
    expect((await h.runner.policy.effective({ platform: 'slack', scopeId: h.fake.teamId })).auditChannel.value).toBeUndefined();
  });

  it('leaves the job’s answer intact when audit posts fail, posts the entry at the next try, and tells the admins in the settings view while they keep failing', async () => {
    h = await start();
    const { fake } = h;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN);
    const toAudit = (args: Record<string, unknown>) => args.channel === AUDIT;
    // An HTTP 500 with Slack's answer three times (each a refusal, tried again at the channel's next try), then Slack's errors.
    const faults = [{ status: 500, error: 'internal_error', count: 3 }, { error: 'not_in_channel' }, { error: 'channel_not_found' }, { error: 'internal_error' }];
    let failedCalls = 0;
    for (const [i, fault] of faults.entries()) {
      fake.failNext('chat.postMessage', { status: 200, count: 1, ...fault, match: toAudit });
      failedCalls += fault.count ?? 1;
      await fake.command({ command: '/imagine', text: `a sturdy kite ${i} --quality low`, channel: 'C0ART', user: 'U0ALICE' });
      const job = await finishedJob(fake, 'C0ART', i);
      expect(job.text + JSON.stringify(job.blocks)).toContain(`a sturdy kite ${i}`);
      expect(job.text + JSON.stringify(job.blocks)).not.toContain('audit');
      // Its audit post was refused, then tried again: the entry lands.
      await fake.waitFor(() => fake.callsOf('chat.postMessage').filter((c) => c.args.channel === AUDIT && !c.ok).length >= failedCalls || undefined, 'the audit post to fail');
      await auditEntry(h, `a sturdy kite ${i}`);
    }
    expect(fake.botMessages(AUDIT).flatMap(sections).filter((t) => t.includes('a sturdy kite'))).toHaveLength(4);
    expect(h.runner.audit.trouble({ platform: 'slack', scopeId: fake.teamId })).toBeUndefined();

    // Posts that keep failing: tried again and again; from the third failure in a row the settings view says so.
    fake.failNext('chat.postMessage', { status: 200, error: 'internal_error', count: 1000, match: toAudit });
    await fake.command({ command: '/imagine', text: 'a stubborn kite --quality low', channel: 'C0ART', user: 'U0ALICE' });
    await finishedJob(fake, 'C0ART', faults.length);
    await fake.waitFor(() => h!.runner.audit.trouble({ platform: 'slack', scopeId: fake.teamId }), 'three failures in a row to be counted');
    // The next try is held open (the count stays as it is) while the admin looks.
    const held = fake.holdOpen('chat.postMessage');
    await fake.waitFor(() => held.arrived() > 0 || undefined, 'the next try of the audit post');
    const trouble = h.runner.audit.trouble({ platform: 'slack', scopeId: fake.teamId })!;
    expect(trouble).toMatchObject({ channelId: AUDIT, code: 'internal_error' });
    expect(await privately(fake, 'admin settings', ADMIN)).toContain(describeAuditTrouble(trouble, 'en'));
    // Slack answers again: that try lands, and the trouble is gone.
    fake.failNext('chat.postMessage', { count: 0 });
    held.release();
    await auditEntry(h, 'a stubborn kite');
    // Slack's answer reaches the bot after the stand-in has shown the message.
    await fake.waitFor(() => h!.runner.audit.trouble({ platform: 'slack', scopeId: fake.teamId }) === undefined || undefined, 'the trouble to be cleared');
  });

  it('takes Slack’s 429 on an audit post as a refusal, not waited out by the client: the entry waits for the channel’s next try, and three in a row show in the settings view', async () => {
    h = await start();
    const { fake } = h;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN);
    const refused = () => fake.callsOf('chat.postMessage').filter((c) => c.args.channel === AUDIT && c.status === 429).length;
    fake.failNext('chat.postMessage', { status: 429, retryAfterSec: 1, count: 3, match: (args) => args.channel === AUDIT });
    await fake.command({ command: '/imagine', text: 'a patient heron --quality low', channel: 'C0ART', user: 'U0ALICE' });
    await finishedJob(fake, 'C0ART');
    await fake.waitFor(() => refused() >= 3 || undefined, 'the audit post to be refused three times');
    // The next try is held open while the admins look: each 429 was a failed post of the audit log, with Slack's code.
    const held = fake.holdOpen('chat.postMessage');
    await fake.waitFor(() => held.arrived() > 0 || undefined, 'the next try of the audit post');
    expect(h.runner.audit.trouble({ platform: 'slack', scopeId: fake.teamId })).toMatchObject({ channelId: AUDIT, failures: 3, code: 'slack_webapi_rate_limited_error' });
    held.release();
    await auditEntry(h, 'a patient heron');
    expect(refused()).toBe(3);
    await fake.waitFor(() => h!.runner.audit.trouble({ platform: 'slack', scopeId: fake.teamId }) === undefined || undefined, 'the trouble to be cleared');
  });

  it('greets the audit channel an admin picks through Slack’s 429: the greeting, which holds no prompt, waits out Retry-After', async () => {
    h = await start();
    const { fake } = h;
    fake.failNext('chat.postMessage', { status: 429, retryAfterSec: 1, count: 1, match: (args) => args.channel === AUDIT });
    expect(await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN, 'C0ADMIN')).toBe(`:white_check_mark: ${say('en', 'audit.set', { scope: 'workspace', channel: `<#${AUDIT}>` })}`);
    expect(fake.callsOf('chat.postMessage').filter((c) => c.args.channel === AUDIT && c.status === 429)).toHaveLength(1);
    expect(fake.botMessages(AUDIT).map((m) => m.text)).toEqual([`:receipt: ${auditGreeting('slack', 'en')}`]);
  });

  it('sends an audit post whose answer was lost once: Slack made its message, and a second try would make another that no forget edits', async () => {
    h = await start();
    const { fake } = h;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN);
    // Slack shows the message, then the connection is cut before its answer.
    fake.cutNext('chat.postMessage', 'after', { match: (args) => args.channel === AUDIT });
    await fake.command({ command: '/imagine', text: 'a vanishing reply --quality low', channel: 'C0ART', user: 'U0ALICE' });
    await finishedJob(fake, 'C0ART');
    await auditEntry(h, 'a vanishing reply');
    // The next entry is posted after it: by then the lost post was let go of, never sent again.
    await fake.command({ command: '/imagine', text: 'a later kite --quality low', channel: 'C0ART', user: 'U0ALICE' });
    await finishedJob(fake, 'C0ART', 1);
    await auditEntry(h, 'a later kite');
    expect(fake.botMessages(AUDIT).flatMap(sections).filter((t) => t.includes('a vanishing reply'))).toHaveLength(1);
    expect(fake.callsOf('chat.postMessage').filter((c) => c.args.channel === AUDIT && JSON.stringify(c.args).includes('a vanishing reply'))).toHaveLength(1);
  });

  it('on forget, writes the member’s audit entries again without their prompts', async () => {
    h = await start();
    const { fake } = h;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN);
    await fake.command({ command: '/imagine', text: 'a quokkaflute sunrise --quality low', channel: 'C0ART', user: 'U0ALICE' });
    await auditEntry(h, 'a quokkaflute sunrise');
    expect((await privately(fake, 'forget', 'U0ALICE')).endsWith(say('en', 'audit.forgotten', { count: 1 }))).toBe(true);
    const texts = fake.botMessages(AUDIT).flatMap(sections);
    expect(texts.join('\n')).not.toContain('quokkaflute');
    expect(texts.find((t) => t.includes('<@U0ALICE>'))).toContain(`_${say('en', 'audit.erased')}_`);
  });
});
