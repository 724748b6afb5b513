import { afterEach, describe, expect, it, vi } from 'vitest';
import { HomeTabs } from '../../../bots/slack/home-tab.js';
import { formatUsd, QUALITIES, SIZES } from '../../../src/index.js';
import type { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import { checkView } from '../../fakes/slack/check-blocks.js';
import { finishedJob, privately, settledCosts as ledger, startHarness, type Harness } from './harness.js';
import { anyOf, describeFailure, say, unreadableRulesRefusal, usd, type MessageKey, type Requester } from '../../../bots/runner/index.js';
import { INTAKE_REFUSALS } from '../../helpers/intake-cases.js';
import { spyOnInstance } from '../../helpers/instance-spy.js';
import { slackKeyOf } from '../../helpers/message-keys.js';

/** A rule of the workspace kept but unreadable (as the intake tables damage it). */
const unreadableRule = () => INTAKE_REFUSALS.find((r) => r.code === 'settings_unreadable')!;

const ADMIN = 'U0ADMIN';

let h: Harness | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

type Block = { type: string; block_id?: string; text?: { text: string }; accessory?: { type: string; slack_file?: { id: string }; alt_text?: string }; elements?: { action_id?: string; value?: string; text?: { text: string } }[] };

function homeOf(fake: FakeSlack, user: string, count = 1): Promise<Block[]> {
  return fake.waitFor(() => {
    const home = fake.homes.get(`${fake.teamId}:${user}`);
    return home && home.count >= count ? (home.view.blocks as Block[]) : undefined;
  }, `the Home tab of ${user} published ${count} time(s)`);
}

const texts = (blocks: Block[]) => blocks.map((b) => b.text?.text ?? '').join('\n');

/** The answer to a forget that erased one job (before any note of the Home tab after it). */
const ERASED_ONE = say('en', 'history.erased', { icon: ':broom:', count: 1 });
const erasedOne = (said: string) => said.slice(0, ERASED_ONE.length);

/** Which catalog message (English) says each line the Home tab shows: its words are checked where they are written. */
function keysOf(blocks: Block[] | string): { key: string; line: string }[] {
  const text = typeof blocks === 'string' ? blocks : texts(blocks);
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        return { key: slackKeyOf(line), line };
      } catch {
        return { key: 'ambiguous', line };
      }
    });
}

/** The line of the Home tab that message `key` says, for a test of its values (throws naming the keys it shows when none). */
function lineOf(blocks: Block[] | string, key: MessageKey): string {
  const said = keysOf(blocks);
  const line = said.find((l) => l.key === key)?.line;
  if (line === undefined) throw new Error(`the Home tab says no ${key}: it says ${said.map((l) => l.key).join(', ')}`);
  return line;
}

/**
 * The Home tabs of the bot of `harness`, caught when a member opens theirs (`opened`, on the client that talks to its
 * fake Slack): a test asks them for a change, and lets every change through (`flush`).
 */
const opened = HomeTabs.prototype.opened;
function homeTabsOf(harness: Harness): Promise<HomeTabs> {
  return new Promise((resolve) => {
    spyOnInstance(HomeTabs.prototype, 'opened', (_tabs, client) => client.slackApiUrl.startsWith(harness.fake.url)).mockImplementation(function (this: HomeTabs, ...args) {
      resolve(this);
      return opened.apply(this, args);
    });
  });
}

async function draw(harness: Harness, user: string, channel: string, index: number): Promise<void> {
  await harness.fake.command({ command: '/imagine', text: `a lighthouse number ${index} --quality low`, user, channel });
  await finishedJob(harness.fake, channel, index);
}


describe('the Slack Home tab', () => {
  it('is published when a member opens it: their spend equal to the ledger’s, their budgets, their recent images with a thumbnail and Reroll, and the defaults', async () => {
    h = await startHarness({ limits: { userDailyUsd: 1 }, bot: { adminUserIds: [ADMIN] } });
    await draw(h, 'U0ALICE', 'C0ART', 0);
    await draw(h, 'U0ALICE', 'C0ART', 1);

    await h.fake.openHome('U0ALICE');
    const blocks = await homeOf(h.fake, 'U0ALICE');
    expect(checkView({ type: 'home', blocks })).toBeNull();
    const spent = (await ledger(h)).get('slack:U0ALICE')!;
    expect(spent).toBeGreaterThan(0);
    expect(lineOf(blocks, 'usage.your_spend')).toBe(say('en', 'usage.your_spend', { today: formatUsd(spent), month: formatUsd(spent) }, { bold: (t) => `*${t}*` }));
    // Under the budgets' title, the daily one: what is left of the limit, and what was spent (its line is said alike by the
    // user's and a role's budget, so it is asserted by its values).
    const said = keysOf(blocks);
    const daily = said[said.findIndex((l) => l.key === 'usage.budgets') + 1]!.line;
    for (const value of [formatUsd(1 - spent), '$1.00', formatUsd(spent)]) expect(daily).toContain(value);

    // Newest first, each with its first image as a thumbnail (a file in Slack) and a Reroll of its saved request.
    const jobs = blocks.filter((b) => b.block_id?.match(/^job\.\d+$/));
    expect(jobs.map((b) => b.text!.text)).toEqual([expect.stringContaining('a lighthouse number 1'), expect.stringContaining('a lighthouse number 0')]);
    for (const job of jobs) {
      expect(job.accessory).toMatchObject({ type: 'image', slack_file: { id: expect.stringMatching(/^F/) as unknown }, alt_text: expect.stringContaining('a lighthouse') as unknown });
      expect(h.fake.files.has(job.accessory!.slack_file!.id)).toBe(true);
    }
    const rerolls = blocks.filter((b) => b.block_id?.endsWith('.actions')).map((b) => b.elements![0]!);
    expect(rerolls.map((r) => r.action_id)).toEqual(['pictor_reroll', 'pictor_reroll']);
    expect(lineOf(blocks, 'slack.home.defaults')).toBe(
      say('en', 'slack.home.defaults', { size: '1024x1024', quality: 'auto', previews: 2, maxImages: 10, qualities: anyOf(QUALITIES), sizes: anyOf(SIZES) }),
    );
    // A member who is no admin sees no workspace totals or settings.
    expect(keysOf(blocks).map((l) => l.key)).not.toContain('slack.home.admin_header');
    expect(keysOf(blocks).map((l) => l.key)).not.toContain('usage.scope_spend');
  });

  it('shows an admin the workspace’s totals and top users, equal to the ledger’s, and its settings', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    await draw(h, 'U0ALICE', 'C0ART', 0);
    await draw(h, 'U0BOB', 'C0ART', 1);
    await h.fake.openHome(ADMIN);
    const text = texts(await homeOf(h.fake, ADMIN));
    const costs = await ledger(h);
    const total = [...costs.values()].reduce((a, b) => a + b, 0);
    expect(lineOf(text, 'usage.scope_spend')).toBe(say('en', 'usage.scope_spend', { scope: 'workspace', today: formatUsd(total), month: formatUsd(total) }, { bold: (t) => `*${t}*` }));
    expect(keysOf(text).filter((l) => l.key === 'usage.top_user').map((l) => l.line)).toContainEqual(expect.stringContaining(`<@U0ALICE> ${formatUsd(costs.get('slack:U0ALICE')!)} (1 job)`));
    expect(keysOf(text).map((l) => l.key)).toContain('settings.title');
  });

  it('is published again when one of the member’s jobs ends and when an admin changes a setting, in the member’s language', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    h.fake.setLocale('U0HANS', 'de-DE');
    await h.fake.openHome('U0HANS');
    const first = await homeOf(h.fake, 'U0HANS');
    expect(texts(first)).toContain(say('de', 'slack.home.history_empty', { command: '`/imagine`', where: 'any' }));

    await h.fake.command({ command: '/imagine', text: 'ein Leuchtturm --quality low', user: 'U0HANS', channel: 'C0DE' });
    const second = await homeOf(h.fake, 'U0HANS', 2);
    expect(second.filter((b) => b.block_id?.match(/^job\.\d+$/))).toHaveLength(1);
    const spent = (await ledger(h)).get('slack:U0HANS')!;
    expect(texts(second)).toContain(say('de', 'usage.your_spend', { today: usd(spent), month: usd(spent) }, { bold: (t) => `*${t}*` }));

    await h.fake.command({ command: '/imagine', text: 'admin set default-quality low', user: ADMIN });
    const third = await homeOf(h.fake, 'U0HANS', 3);
    expect(texts(third)).toContain(say('de', 'slack.home.defaults', { size: '1024x1024', quality: 'low', previews: 2, maxImages: 10, qualities: anyOf(QUALITIES), sizes: anyOf(SIZES) }));
  });

  it('shows the member’s own defaults beside the workspace’s, marks one the rules do not allow, and is published again when they change them', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    await h.fake.openHome('U0ALICE');
    const first = texts(await homeOf(h.fake, 'U0ALICE'));
    expect(keysOf(first).map((l) => l.key)).toEqual(expect.arrayContaining(['member.title', 'member.none']));
    expect(lineOf(first, 'member.none')).toBe(say('en', 'member.none', { scope: 'workspace' }));
    expect(lineOf(first, 'slack.home.defaults')).toContain('Size 1024x1024, quality auto');

    await h.fake.command({ command: '/imagine', text: 'admin set qualities low medium', user: ADMIN });
    await h.fake.command({ command: '/imagine', text: 'settings --size 1536x1024 --quality high', user: 'U0ALICE', channel: 'C0ART' });
    const changed = await h.fake.waitFor(() => {
      const home = texts((h!.fake.homes.get(`${h!.fake.teamId}:U0ALICE`)?.view.blocks ?? []) as Block[]);
      return home.includes('• size: 1536x1024') ? home : undefined;
    }, 'the Home tab with the member’s new defaults');
    expect(keysOf(changed)).toContainEqual({ key: 'member.line', line: say('en', 'member.line', { name: 'quality', value: 'high', ignored: 'yes' }) });
    expect(keysOf(changed).map((l) => l.key)).not.toContain('member.none');
  });

  it('says the quality a member gets and the ones they may use as the rules decide them: `high` only to those the high-quality list names', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    await h.fake.command({ command: '/imagine', text: 'admin set high-quality <@U0KIM>', user: ADMIN });
    await h.fake.command({ command: '/imagine', text: 'admin set default-quality high', user: ADMIN });
    const workspaceDefaults = (blocks: Block[]) => texts(blocks).split('\n').find((line) => line.startsWith('Size 1024x1024'))!;

    await h.fake.openHome('U0ALICE');
    const unlisted = workspaceDefaults(await homeOf(h.fake, 'U0ALICE'));
    expect(unlisted).toContain('quality auto,');
    expect(unlisted).not.toContain('high');
    await h.fake.openHome('U0KIM');
    const listed = workspaceDefaults(await homeOf(h.fake, 'U0KIM'));
    expect(listed).toContain('quality high,');
    expect(listed).toMatch(/in quality [^.]*high/);
  });

  it('shows a member, while a rule of the workspace cannot be read, that every job is refused, naming the app’s own command — not the limits that would apply otherwise; an admin once', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN], commands: { imagine: '/draw' } } });
    const admin: Requester = { platform: 'slack', scopeId: h.fake.teamId, userId: ADMIN, channelId: 'C0ART', isAdmin: true };
    await unreadableRule().apply(h.runner, admin, 'C0ELSEWHERE', h.state);
    const refusal = describeFailure(unreadableRulesRefusal({ platform: 'slack', unreadable: ['blocked'] }), 'en', '/draw').message;
    expect(refusal).toContain('/draw admin set SETTING VALUE');
    await h.fake.openHome('U0ALICE');
    const home = texts(await homeOf(h.fake, 'U0ALICE'));
    expect(home).toContain(refusal);
    expect(home).not.toContain('/imagine');
    expect(keysOf(home).map((l) => l.key)).not.toContain('slack.home.defaults');

    // An admin's section says it above the rules that cannot be read: the defaults' section does not say it again.
    await h.fake.openHome(ADMIN);
    const adminHome = texts(await homeOf(h.fake, ADMIN));
    const warning = say('en', 'settings.unreadable_rules', { count: 1, scope: 'workspace', platform: 'slack', command: '/draw' });
    expect(adminHome).toContain(warning);
    expect(adminHome).not.toContain(refusal);
    expect(adminHome).not.toContain('/imagine');
    expect(keysOf(adminHome).map((l) => l.key)).not.toContain('slack.home.defaults');

    // `/draw admin settings` warns the same way, naming `/draw admin repair`.
    const shown = await h.fake.command({ command: '/draw', text: 'admin settings', user: ADMIN, channel: 'C0ART' });
    const settings = await h.fake.waitFor(() => h!.fake.responses.find((r) => shown.responseUrl.endsWith(r.id)), 'the answer to /draw admin settings');
    expect(String(settings.body.text)).toContain(warning);
    expect(String(settings.body.text)).not.toContain('/imagine');

    // A member's `/draw settings` says the refusal as their Home tab does.
    const ack = await h.fake.command({ command: '/draw', text: 'settings', user: 'U0ALICE', channel: 'C0ART' });
    const answer = await h.fake.waitFor(() => h!.fake.responses.find((r) => ack.responseUrl.endsWith(r.id)), 'the answer to /draw settings');
    expect(String(answer.body.text)).toContain(refusal);
    expect(String(answer.body.text)).not.toContain('/imagine');
  });

  it('tells a blocked member why they cannot make images, and a member of a workspace limited to some channels which ones, never “in any channel”', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    await privately(h.fake, 'admin set channels <#C0ART>', ADMIN);
    await privately(h.fake, 'admin set blocked <@U0MALLORY>', ADMIN);
    const everything = (blocks: Block[]) => JSON.stringify(blocks);
    const context = (blocks: Block[]) => blocks.filter((b) => b.type === 'context').map((b) => (b.elements as unknown as { text: string }[])[0]!.text).join('\n');
    const anyChannel = say('en', 'slack.home.how', { command: '`/imagine`', where: 'any' });

    await h.fake.openHome('U0ALICE');
    const alice = await homeOf(h.fake, 'U0ALICE');
    expect(texts(alice)).toContain(say('en', 'slack.home.history_empty', { command: '`/imagine`', where: 'some', channels: '<#C0ART>' }));
    expect(context(alice)).toBe(say('en', 'slack.home.how', { command: '`/imagine`', where: 'some', channels: '<#C0ART>' }));
    expect(context(alice)).not.toBe(anyChannel);

    await h.fake.openHome('U0MALLORY');
    const mallory = await homeOf(h.fake, 'U0MALLORY');
    const blocked = describeFailure((await h.runner.policy.whoWhereRefusal({ platform: 'slack', scopeId: h.fake.teamId, userId: 'U0MALLORY', channelId: 'C0ART', isAdmin: false } as Requester))!, 'en', '/imagine').message;
    expect(slackKeyOf(blocked)).toBe('refusal.member_blocked');
    expect(texts(mallory)).toContain(say('en', 'slack.home.history_none'));
    expect(context(mallory)).toBe(`${blocked} ${say('en', 'slack.home.only_you')}`);
    expect(keysOf(mallory).map((l) => l.key)).not.toContain('slack.home.history_empty');
    expect(everything(mallory)).not.toContain(anyChannel);
  });

  it('is published again after a repair that cleared a setting, and not after one that found nothing to clear', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    const admin: Requester = { platform: 'slack', scopeId: h.fake.teamId, userId: ADMIN, channelId: 'C0ART', isAdmin: true };
    const homes = homeTabsOf(h);
    await h.fake.openHome('U0ALICE');
    await homeOf(h.fake, 'U0ALICE');
    const refreshes = vi.spyOn(await homes, 'changedFor');
    const repair = async () => {
      const ack = await h!.fake.command({ command: '/imagine', text: 'admin repair', user: ADMIN, channel: 'C0ART' });
      return String((await h!.fake.waitFor(() => h!.fake.responses.find((r) => ack.responseUrl.endsWith(r.id)), 'the answer to admin repair')).body.text);
    };
    try {
      expect(await repair()).toBe(`:white_check_mark: ${say('en', 'settings.repaired', { count: 0, scope: 'workspace' })}`);
      expect(refreshes).not.toHaveBeenCalled();

      await unreadableRule().apply(h.runner, admin, 'C0ELSEWHERE', h.state);
      const cleared = `:white_check_mark: ${say('en', 'settings.repaired', { count: 1, settings: 'blocked' })}`;
      expect((await repair()).slice(0, cleared.length)).toBe(cleared);
      expect(refreshes).toHaveBeenCalledTimes(1);
      expect(keysOf(await homeOf(h.fake, 'U0ALICE', 2)).map((l) => l.key)).toContain('slack.home.defaults');
    } finally {
      refreshes.mockRestore();
    }
  });

  it('is published again without their prompts after a member’s forget, whether or not they opened it lately here', async () => {
    h = await startHarness();
    await draw(h, 'U0ALICE', 'C0ART', 0);
    await draw(h, 'U0BOB', 'C0ART', 1);
    const view = (user: string) => JSON.stringify(h!.fake.homes.get(`${h!.fake.teamId}:${user}`)?.view ?? {});
    const homes = homeTabsOf(h);
    await h.fake.openHome('U0ALICE');
    await homeOf(h.fake, 'U0ALICE');
    expect(view('U0ALICE')).toContain('lighthouse');
    await h.runner.history!.settled();

    // A change of her Home asked for just before the forget (as one of her jobs ending asks): coalesced, it runs after
    // the forget. Every change asked for is let through: no publish after the forget's shows her prompts.
    (await homes).changed(h.fake.teamId, 'U0ALICE');
    expect(erasedOne(await privately(h.fake, 'forget', 'U0ALICE'))).toBe(ERASED_ONE);
    await (await homes).flush();
    const empty = say('en', 'slack.home.history_empty', { command: '`/imagine`', where: 'any' });
    expect(view('U0ALICE')).toContain(JSON.stringify(empty).slice(1, -1));
    expect(view('U0ALICE')).not.toContain('lighthouse');

    // Bob never opened his Home here (another replica, or this one before a restart, may have published it): published.
    expect(h.fake.homes.has(`${h.fake.teamId}:U0BOB`)).toBe(false);
    expect(erasedOne(await privately(h.fake, 'forget', 'U0BOB'))).toBe(ERASED_ONE);
    await homeOf(h.fake, 'U0BOB');
    expect(view('U0BOB')).not.toContain('lighthouse');
  });

  it('answers a forget only once Slack took its Home’s publish: the answer comes when their Home no longer shows their prompts', async () => {
    h = await startHarness();
    await draw(h, 'U0BOB', 'C0ART', 0);
    await h.runner.history!.settled();
    expect(erasedOne(await privately(h.fake, 'forget', 'U0BOB'))).toBe(ERASED_ONE);
    const home = h.fake.homes.get(`${h.fake.teamId}:U0BOB`);
    expect(home?.count).toBe(1);
    expect(JSON.stringify(home?.view ?? {})).not.toContain('lighthouse');
  });

  it('is published again later when Slack does not take it after a member’s forget, and the forget’s answer says their Home still shows their prompts until then', async () => {
    h = await startHarness();
    await draw(h, 'U0ALICE', 'C0ART', 0);
    const view = () => JSON.stringify(h!.fake.homes.get(`${h!.fake.teamId}:U0ALICE`)?.view ?? {});
    const homes = homeTabsOf(h);
    await h.fake.openHome('U0ALICE');
    await homeOf(h.fake, 'U0ALICE');
    expect(view()).toContain('lighthouse');
    await h.runner.history!.settled();
    // The change her job's end asked for is through first: Slack's failure is the forget's publish's, not that one's.
    await (await homes).flush();
    const published = h.fake.homes.get(`${h.fake.teamId}:U0ALICE`)!.count;

    h.fake.failNext('views.publish', { status: 200, error: 'internal_error', count: 1 });
    const said = await privately(h.fake, 'forget', 'U0ALICE');
    expect(erasedOne(said)).toBe(ERASED_ONE);
    expect(said.endsWith(` ${say('en', 'slack.home.forgetPending')}`)).toBe(true);
    expect(view()).toContain('lighthouse');

    // Its retry (tried at once here, not after its wait) publishes it without her prompts.
    await (await homes).flush();
    expect(view()).not.toContain('lighthouse');
    expect(h.fake.homes.get(`${h.fake.teamId}:U0ALICE`)!.count).toBe(published + 1);
  });

  it('is not published after a forget asked once the Home tabs stopped, and the forget’s answer says only the member’s next open of it shows it without their prompts', async () => {
    h = await startHarness();
    await draw(h, 'U0ALICE', 'C0ART', 0);
    const homes = homeTabsOf(h);
    await h.fake.openHome('U0ALICE');
    await homeOf(h.fake, 'U0ALICE');
    await h.runner.history!.settled();

    await (await homes).stop();
    const published = h.fake.homes.get(`${h.fake.teamId}:U0ALICE`)!.count;
    const said = await privately(h.fake, 'forget', 'U0ALICE');
    expect(erasedOne(said)).toBe(ERASED_ONE);
    expect(said.endsWith(` ${say('en', 'slack.home.forgetNextOpen')}`)).toBe(true);
    expect(h.fake.homes.get(`${h.fake.teamId}:U0ALICE`)!.count).toBe(published);
  });

  it('is published again after a restart when one of the member’s jobs ends or an admin changes a setting, for members who opened it before; forget erases who opened it', async () => {
    const before = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    const { fake, dataDir } = before;
    await fake.openHome('U0ALICE');
    await homeOf(fake, 'U0ALICE');
    await before.close({ fake: true, dataDir: true });

    h = await startHarness({ fake, dataDir, bot: { adminUserIds: [ADMIN] } });
    await draw(h, 'U0ALICE', 'C0ART', 0);
    expect(texts(await homeOf(fake, 'U0ALICE', 2))).toContain('a lighthouse number 0');
    await h.fake.command({ command: '/imagine', text: 'admin set default-quality low', user: ADMIN });
    expect(lineOf(await homeOf(fake, 'U0ALICE', 3), 'slack.home.defaults')).toContain('Size 1024x1024, quality low');

    const viewers = h.state.store.space<Record<string, unknown>>(h.state.spaces.slackHomeViewers);
    const key = `slack-${fake.teamId}`;
    expect(Object.keys((await viewers.get(key)) ?? {})).toEqual(['U0ALICE']);
    await h.runner.history!.settled();
    await privately(fake, 'forget', 'U0ALICE');
    expect(Object.keys((await viewers.get(key)) ?? {})).toEqual([]);
  });

  it('is published again after a forget that failed partway, with what is left: the history it erased is gone from it', async () => {
    h = await startHarness();
    await draw(h, 'U0ALICE', 'C0ART', 0);
    const homes = homeTabsOf(h);
    await h.fake.openHome('U0ALICE');
    expect(JSON.stringify((await homeOf(h.fake, 'U0ALICE')) ?? [])).toContain('lighthouse');
    await h.runner.history!.settled();
    const history = h.runner.history!;
    const forget = history.forgetEverywhere.bind(history);
    // The history is erased, then the rest of the forget fails.
    const failing = vi.spyOn(history, 'forgetEverywhere').mockImplementation(async (requester) => {
      await forget(requester);
      throw new Error('the state failed after the history was erased');
    });
    try {
      // A change of her Home asked for just before the forget (as her job ending asks): coalesced, it runs after it.
      (await homes).changed(h.fake.teamId, 'U0ALICE');
      expect(await privately(h.fake, 'forget', 'U0ALICE')).toBe(`:warning: ${say('en', 'error.on_my_side')}`);
      // Every change asked for is let through: the last view Slack keeps has an empty history.
      await (await homes).flush();
      const empty = say('en', 'slack.home.history_empty', { command: '`/imagine`', where: 'any' });
      const blocks = h.fake.homes.get(`${h.fake.teamId}:U0ALICE`)!.view.blocks as Block[];
      expect(texts(blocks)).toContain(empty);
      expect(JSON.stringify(blocks)).not.toContain('lighthouse');
    } finally {
      failing.mockRestore();
    }
  });

  it('says a job the member asked in their direct messages with the app was asked in a direct message, with the link to its message — never `<#D…>` — as their /imagine history does', async () => {
    h = await startHarness();
    const dm = h.fake.dmOf('U0ALICE');
    await h.fake.userMessage({ channel: dm, channelType: 'im', user: 'U0ALICE', text: 'a lighthouse in my diary --quality low' });
    await finishedJob(h.fake, dm);
    await draw(h, 'U0ALICE', 'C0ART', 0);
    const alice = { platform: 'slack' as const, userId: 'U0ALICE', channelId: dm, scopeId: h.fake.teamId };
    await vi.waitFor(async () => expect(await h!.runner.history!.mine(alice)).toHaveLength(2), { timeout: 15_000 });

    await h.fake.openHome('U0ALICE');
    const lines = (await homeOf(h.fake, 'U0ALICE')).filter((b) => b.block_id?.match(/^job\.\d+$/)).map((b) => b.text!.text);
    const history = await privately(h.fake, 'history', 'U0ALICE', 'C0ART');
    for (const shown of [lines.join('\n'), history]) {
      const [inChannel, inDm] = shown.split('\n').filter((line) => line.includes('lighthouse'));
      expect(inChannel).toContain('<#C0ART>');
      expect(slackKeyOf(inDm!)).toBe('slack.history.line');
      // Asked in a direct message, naming no conversation: its id only in the link to the job's message.
      expect(inDm!.replace(/<https:[^>]*>/g, '')).not.toContain(dm);
      expect(inDm).toContain(`/archives/${dm}/p`);
      expect(inDm).not.toContain('<#');
    }
  });

  it('runs a job again from its Reroll, in the job’s channel, counted against whoever clicks; a refusal goes to their direct messages', async () => {
    h = await startHarness({ limits: { userDailyUsd: 0.01 } });
    await draw(h, 'U0ALICE', 'C0ART', 0);
    await h.fake.openHome('U0ALICE');
    const blocks = await homeOf(h.fake, 'U0ALICE');
    const requestId = blocks.find((b) => b.block_id === 'job.0.actions')!.elements![0]!.value!;
    await h.fake.clickHomeButton('U0ALICE', 'pictor_reroll', requestId);
    // The first job spent most of the budget: the second is refused, privately, in the app's Messages tab.
    const note = await h.fake.waitFor(() => h!.fake.messagesIn('U0ALICE')[0], 'a direct message');
    expect(slackKeyOf(note.text)).toBe('refusal.budget_would_pass');
    expect(h.fake.topLevel('C0ART').filter((m) => m.user === h!.fake.botUserId && !(m.files ?? []).length)).toHaveLength(2);
  });
});
