import { afterEach, describe, expect, it, vi } from 'vitest';
import { settingsCommandOf } from '../../../bots/slack/listeners/settings-commands.js';
import { finishedActions, finishedJob, imageShares, png, type Harness, privately, ADMIN, startWithAdmin } from './harness.js';
import { INTAKE_REFUSALS } from '../../helpers/intake-cases.js';
import type { FakeMessage } from '../../fakes/slack/slack-objects.js';
import { say, type Requester } from '../../../bots/runner/index.js';
import { stateKeyOf } from '../../../bots/state/index.js';
import { slackKeyOf } from '../../helpers/message-keys.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const start = startWithAdmin;

/**
 * The line of the workspace's history (`slack.history.line`, asserted by key) that lists `prompt` as asked in the direct
 * messages `dm` of `user`: it names the member and the prompt, and not the conversation (no `<#…>`, nor its id outside a
 * link to the job's message).
 */
function directMessageLine(history: string, user: string, dm: string, prompt: string): string {
  const line = history.split('\n').find((l) => l.includes(`“${prompt}”`));
  expect(line).toBeDefined();
  expect(slackKeyOf(line!)).toBe('slack.history.line');
  expect(line).toContain(`<@${user}>`);
  expect(line).not.toContain('<#');
  expect(line!.replace(/<https:[^>]*>/g, '')).not.toContain(dm);
  return line!;
}

/** What the workspace's rules say of a job of this member now (the code of their refusal, or undefined when they let it through). */
async function ruleFor(harness: Harness, userId: string, channelId: string, prompt = 'a lighthouse'): Promise<string | undefined> {
  try {
    await harness.runner.policy.admit({ kind: 'generate', prompt, options: {}, requester: { platform: 'slack', userId, channelId, scopeId: harness.fake.teamId } });
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

describe('the rules of a workspace, on Slack', () => {
  it('refuses every job in a workspace the operator has not allowed, privately, and sends nothing', async () => {
    h = await start({ controls: { allowedScopes: ['T0SOMEWHERE'] } });
    await privately(h.fake, 'a lighthouse --quality low', 'U0ALICE', 'C0ONE');
    expect(await ruleFor(h, 'U0ALICE', 'C0ONE')).toBe('scope_not_allowed');
    expect(h.emulator.requests).toHaveLength(0);
    expect(h.fake.botMessages('C0ONE')).toEqual([]);
  });

  it('lets an admin choose the channels and block a member; refusals are private and send nothing, other jobs run', async () => {
    h = await start();
    expect(await privately(h.fake, 'admin set channels <#C0ART|art>', ADMIN)).toMatch(/^:white_check_mark:/);
    expect(await privately(h.fake, 'admin set blocked <@U0MALLORY|mallory>', ADMIN)).toMatch(/^:white_check_mark:/);

    await privately(h.fake, 'a lighthouse --quality low', 'U0ALICE', 'C0GENERAL');
    expect(await ruleFor(h, 'U0ALICE', 'C0GENERAL')).toBe('channel_not_allowed');
    await privately(h.fake, 'a lighthouse --quality low', 'U0MALLORY', 'C0ART');
    expect(await ruleFor(h, 'U0MALLORY', 'C0ART')).toBe('member_blocked');
    expect(h.emulator.requests).toHaveLength(0);

    await h.fake.command({ command: '/imagine', text: 'a lighthouse --quality low', channel: 'C0ART', user: 'U0ALICE' });
    await finishedJob(h.fake, 'C0ART');
    expect(h.emulator.requests).toHaveLength(1);
  });

  it('refuses an edit by the workspace’s rules before its images are downloaded: the edit modal and the command that opens it, a mention, a Reroll', async () => {
    h = await start();
    const { fake } = h;
    await fake.command({ command: '/imagine-edit', text: '', channel: 'C0EDIT', user: 'U0ALICE' });
    const view = await fake.waitFor(() => fake.views[0], 'the edit modal');
    const aliceEdit = await fake.submitView(view, { files: [fake.addFile({ name: 'cat.png', bytes: await png() })], prompt: 'add a hat', quality: 'low' });
    expect(aliceEdit.status).toBe(200);
    await finishedJob(fake, 'C0EDIT');
    const job = await finishedActions(fake, 'C0EDIT');
    // Mallory opened a form before she was blocked.
    await fake.command({ command: '/imagine-edit', text: '', channel: 'C0EDIT', user: 'U0MALLORY' });
    const mallorysView = await fake.waitFor(() => fake.views[1], 'Mallory’s edit modal');
    const downloadsBefore = fake.downloads.length;
    expect(await privately(fake, 'admin set blocked <@U0MALLORY|mallory>', ADMIN)).toMatch(/^:white_check_mark:/);
    expect(await ruleFor(h, 'U0MALLORY', 'C0EDIT')).toBe('member_blocked');
    const answered = () => fake.responses.length + fake.ephemerals.length;

    let before = answered();
    await fake.submitView(mallorysView, { files: [fake.addFile({ name: 'dog.png', bytes: await png() })], prompt: 'add a hat' }, 'U0MALLORY');
    await fake.waitFor(() => answered() > before || undefined, 'the refusal of the modal');

    before = answered();
    await fake.command({ command: '/imagine-edit', text: '', channel: 'C0EDIT', user: 'U0MALLORY' });
    await fake.waitFor(() => answered() > before || undefined, 'the refusal of the command that opens the form');
    expect(fake.views).toHaveLength(2);

    before = answered();
    await fake.userMessage({ channel: 'C0EDIT', user: 'U0MALLORY', text: `<@${fake.botUserId}> add a hat`, files: [fake.addFile({ name: 'owl.png', bytes: await png() })] });
    await fake.waitFor(() => answered() > before || undefined, 'the refusal of the mention');

    before = answered();
    await fake.clickButton(job, 'pictor_reroll', 'U0MALLORY');
    await fake.waitFor(() => answered() > before || undefined, 'the refusal of the Reroll');

    expect(fake.downloads).toHaveLength(downloadsBefore);
    expect(h.emulator.requests).toHaveLength(1);
  });

  it('keeps the workspace’s settings across a restart', async () => {
    h = await start();
    await privately(h.fake, 'admin set blocked-words kraken', ADMIN);
    const { fake, dataDir } = h;
    await h.close({ fake: true, dataDir: true });
    h = await start({ fake, dataDir });
    expect(await ruleFor(h, 'U0ALICE', 'C0ONE', 'a kraken')).toBe('blocked_word');
  });

  it('shows an admin every setting and where it comes from; anyone else is told only admins may', async () => {
    h = await start({ controls: { blockedWords: ['gore'] } });
    await privately(h.fake, 'admin set max-images 2', ADMIN);
    const shown = await privately(h.fake, 'admin settings', ADMIN);
    const lines = shown.split('\n');
    const maxImages = lines.find((line) => line.startsWith('• max-images:'))!;
    expect(slackKeyOf(maxImages)).toBe('settings.line');
    expect(maxImages).toMatch(/^• max-images: 2 \(.*<@U0ADMIN>/);
    expect(lines).toContain(say('en', 'settings.operator_words', { words: 'gore' }));
    expect(slackKeyOf(await privately(h.fake, 'admin settings', 'U0ALICE'))).toBe('slack.settings.not_admin');
    expect(slackKeyOf(await privately(h.fake, 'admin set max-images 20', ADMIN))).toBe('settings.takes');
    expect((await h.runner.policy.effective({ platform: 'slack', scopeId: h.fake.teamId })).maxImages.value).toBe(2);
  });

  it('clears, on admin repair, only the settings that cannot be read, privately: a member is refused, the workspace’s jobs are taken again', async () => {
    h = await start();
    await privately(h.fake, 'admin set max-images 2', ADMIN);
    const admin: Requester = { platform: 'slack', userId: ADMIN, channelId: 'C0GENERAL', scopeId: h.fake.teamId, isAdmin: true };
    await INTAKE_REFUSALS.find((r) => r.code === 'settings_unreadable')!.apply(h.runner, admin, 'C0ELSEWHERE', h.state);
    expect(await ruleFor(h, 'U0ALICE', 'C0GENERAL')).toBe('settings_unreadable');

    expect(slackKeyOf(await privately(h.fake, 'admin repair', 'U0ALICE'))).toBe('slack.settings.not_admin');
    expect(await ruleFor(h, 'U0ALICE', 'C0GENERAL')).toBe('settings_unreadable');
    const repaired = await privately(h.fake, 'admin repair', ADMIN);
    const cleared = `:white_check_mark: ${say('en', 'settings.repaired', { count: 1, settings: 'blocked' })}`;
    expect(repaired.slice(0, cleared.length)).toBe(cleared);
    expect(await ruleFor(h, 'U0ALICE', 'C0GENERAL')).toBeUndefined();
    expect((await h.runner.policy.effective(admin)).maxImages).toMatchObject({ value: 2, source: 'admin' });
  });

  it('keeps a prompt that merely starts with “admin set” a prompt', () => {
    expect(settingsCommandOf('admin set of flat icons')).toBeUndefined();
    expect(settingsCommandOf('admin settings')).toEqual({ kind: 'show' });
    expect(settingsCommandOf('admin repair')).toEqual({ kind: 'repair' });
    expect(settingsCommandOf('admin repair everything')).toEqual({ kind: 'usage', of: 'settings' });
    expect(settingsCommandOf('admin repiar')).toEqual({ kind: 'usage', of: 'settings' });
    expect(settingsCommandOf('admin set channels &lt;#C1|art&gt;')).toEqual({ kind: 'set', setting: 'channels', value: '<#C1|art>' });
  });
});

describe('/imagine history and /imagine forget, on Slack', () => {
  it('show a member their own jobs privately, admins the workspace’s, and erase a member’s on request', async () => {
    h = await start();
    await h.fake.command({ command: '/imagine', text: 'a lighthouse at dusk --quality low', channel: 'C0ART', user: 'U0ALICE' });
    const job = await finishedJob(h.fake, 'C0ART');
    const actions = await finishedActions(h.fake, 'C0ART');
    const alice = { platform: 'slack' as const, userId: 'U0ALICE', channelId: 'C0ART', scopeId: h.fake.teamId };
    await vi.waitFor(async () => expect(await h!.runner.history!.mine(alice)).not.toHaveLength(0), { timeout: 15_000 });
    await h.runner.history!.settled();

    const mine = await privately(h.fake, 'history', 'U0ALICE');
    const line = mine.split('\n').find((l) => l.includes('a lighthouse at dusk'))!;
    expect(slackKeyOf(line)).toBe('slack.history.line');
    for (const value of ['<#C0ART>', '“a lighthouse at dusk”', '1 × 1024x1024, low', `<https://slack.com/archives/C0ART/p${job.ts.replace('.', '')}|`]) expect(line).toContain(value);
    // Each job has a Reroll button, the same as the one beside its images.
    const blocks = h.fake.responses.at(-1)!.body.blocks as { accessory?: { action_id: string; value: string } }[];
    const jobReroll = (actions.blocks as { elements?: { action_id?: string; value?: string }[] }[]).flatMap((b) => b.elements ?? []).find((e) => e.action_id === 'pictor_reroll')?.value;
    expect(jobReroll).toBeTruthy();
    expect(blocks.flatMap((b) => (b.accessory ? [b.accessory] : []))).toEqual([{ type: 'button', action_id: 'pictor_reroll', text: { type: 'plain_text', text: say('en', 'button.reroll') }, value: jobReroll }]);
    expect(await privately(h.fake, 'history', 'U0BOB')).toContain(say('en', 'history.empty'));
    expect(slackKeyOf(await privately(h.fake, 'history workspace', 'U0BOB'))).toBe('history.not_admin');
    expect(await privately(h.fake, 'history workspace', ADMIN)).toContain('<@U0ALICE> in <#C0ART> “a lighthouse at dusk”');

    expect(slackKeyOf(await privately(h.fake, 'forget', 'U0ALICE'))).toBe('history.erased');
    expect(await privately(h.fake, 'history', 'U0ALICE')).toContain(say('en', 'history.empty'));
    expect(h.emulator.requests).toHaveLength(1);
  });

  it('tells the member privately that a job whose prompt they erased while it ran cannot run again, on its Reroll, and sends nothing to the service', async () => {
    h = await start({ emulator: { latencyMs: 600 } });
    await h.fake.command({ command: '/imagine', text: 'a lantern forgotten while drawn --quality low', channel: 'C0ART', user: 'U0ALICE' });
    await h.fake.waitFor(() => h!.runner.activeJobs().length > 0, 'the job to start');
    expect(slackKeyOf(await privately(h.fake, 'forget', 'U0ALICE'))).toBe('history.erased');
    await finishedJob(h.fake, 'C0ART');
    const actions = await finishedActions(h.fake, 'C0ART');

    const click = await h.fake.clickButton(actions, 'pictor_reroll', 'U0ALICE');
    const note = await h.fake.waitFor(() => h!.fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private note');
    expect(note.body.response_type).toBe('ephemeral');
    expect(note.body.text).toBe(say('en', 'job.prompt_erased'));
    expect(h.emulator.requests).toHaveLength(1);
    expect(h.runner.activeJobs()).toHaveLength(0);
  });
});

describe('a job asked in a member’s direct messages, in the workspace’s history, on Slack', () => {
  it('is listed for an admin with neither that conversation nor a link, and an admin’s Reroll or Edit of it runs in the admin’s own direct messages, never in the member’s', async () => {
    h = await start();
    const bobDm = h.fake.dmOf('U0BOB');
    await h.fake.userMessage({ channel: bobDm, channelType: 'im', user: 'U0BOB', text: 'my diary page --quality low' });
    await finishedJob(h.fake, bobDm);
    const bob = { platform: 'slack' as const, userId: 'U0BOB', channelId: bobDm, scopeId: h.fake.teamId };
    await vi.waitFor(async () => expect(await h!.runner.history!.mine(bob)).not.toHaveLength(0), { timeout: 15_000 });
    await h.runner.history!.settled();

    // Bob's own history links his direct message (saying it was asked in one); the admins' view of the workspace does not.
    expect(await privately(h.fake, 'history', 'U0BOB')).toContain(`/archives/${bobDm}/p`);
    const workspace = await privately(h.fake, 'history workspace', ADMIN, 'C0ADM');
    expect(workspace).toContain('<@U0BOB>');
    expect(workspace).toContain('my diary page');
    expect(workspace).not.toContain(bobDm);
    expect(workspace).not.toContain('/archives/');
    expect(workspace).toBe(workspace.replace(/<#[^>]*>/g, ''));

    // The line's Reroll, pressed by the admin where they read it.
    const listing = h.fake.responses.at(-1)!.body;
    const shown: FakeMessage = { channel: 'C0ADM', ts: '1700000000.000100', text: String(listing.text), blocks: listing.blocks as unknown[], postedAt: Date.now(), edits: [] };
    const bobsMessages = h.fake.botMessages(bobDm).length;
    await h.fake.clickButton(shown, 'pictor_reroll', ADMIN);
    await finishedJob(h.fake, h.fake.dmOf(ADMIN));
    expect(h.emulator.requests).toHaveLength(2);
    expect(h.emulator.requests[1]!.parsed?.prompt).toBe('my diary page');
    expect(h.fake.botMessages(bobDm)).toHaveLength(bobsMessages);
    expect(h.fake.botMessages('C0ADM')).toHaveLength(0);
    // Counted against the admin, and in the admin's own history as asked in their direct messages.
    const admin = { platform: 'slack' as const, userId: ADMIN, channelId: h.fake.dmOf(ADMIN), scopeId: h.fake.teamId, isAdmin: true };
    await vi.waitFor(async () => expect((await h!.runner.history!.mine(admin)).map((e) => e.channelId)).toEqual([h!.fake.dmOf(ADMIN)]), { timeout: 15_000 });

    // An admin's Edit of Bob's images opens a form whose edit goes to the admin's own direct messages, outside Bob's thread.
    await h.fake.clickButton(await finishedActions(h.fake, bobDm), 'pictor_edit', ADMIN);
    const form = await h.fake.waitFor(() => h!.fake.views[0], 'the edit form');
    const where = JSON.parse(String(form.view.private_metadata)) as { c: string; t?: string };
    expect(where.c).not.toBe(bobDm);
    expect(where.t).toBeUndefined();
    await h.fake.submitView(form, { prompt: 'add a margin' }, ADMIN);
    await finishedJob(h.fake, h.fake.dmOf(ADMIN), 1);
    expect(h.fake.botMessages(bobDm)).toHaveLength(bobsMessages);
  });
});

describe('a job in a direct message with the app, in the workspace’s history, as its entry recorded it when it ended', () => {
  it('keeps the link of an admin’s own job asked in their direct messages, which they can open, in the workspace’s view', async () => {
    h = await start({ bot: { adminUserIds: [ADMIN, 'U0ADMIN2'] } });
    const adminDm = h.fake.dmOf(ADMIN);
    await h.fake.userMessage({ channel: adminDm, channelType: 'im', user: ADMIN, text: 'my own sketch --quality low' });
    await finishedJob(h.fake, adminDm);
    const admin = { platform: 'slack' as const, userId: ADMIN, channelId: adminDm, scopeId: h.fake.teamId, isAdmin: true };
    await vi.waitFor(async () => expect(await h!.runner.history!.mine(admin)).not.toHaveLength(0), { timeout: 15_000 });
    await h.runner.history!.settled();

    const workspace = await privately(h.fake, 'history workspace', ADMIN, 'C0ADM');
    expect(directMessageLine(workspace, ADMIN, adminDm, 'my own sketch')).toContain(`/archives/${adminDm}/p`);
    // Another admin reads it without that link.
    const other = await privately(h.fake, 'history workspace', 'U0ADMIN2', 'C0ADM');
    directMessageLine(other, ADMIN, adminDm, 'my own sketch');
    expect(other).not.toContain('/archives/');
  });

  it('lists a job asked in a member’s direct messages whose link was not known as it ended as asked in a direct message, naming no conversation', async () => {
    h = await start();
    const bobDm = h.fake.dmOf('U0BOB');
    const bob: Requester = { platform: 'slack', userId: 'U0BOB', channelId: bobDm, scopeId: h.fake.teamId };
    await h.runner.recordEnded(bob, { key: 'no-link', kind: 'generate', prompt: 'a page with no link', options: {}, private: false, seenBy: 'member', acceptedAt: Date.now() }, { type: 'completed' });
    const workspace = await privately(h.fake, 'history workspace', ADMIN, 'C0ADM');
    directMessageLine(workspace, 'U0BOB', bobDm, 'a page with no link');
    expect(workspace).not.toContain(bobDm);
  });

  it('lists as asked in a direct message, naming no conversation, an entry written before its history kept that only its member could open it', async () => {
    h = await start();
    const bobDm = h.fake.dmOf('U0BOB');
    const bob: Requester = { platform: 'slack', userId: 'U0BOB', channelId: bobDm, scopeId: h.fake.teamId };
    await h.runner.recordEnded(bob, { key: 'older', kind: 'generate', prompt: 'an older page', options: {}, private: false, seenBy: 'member', acceptedAt: Date.now() }, { type: 'completed' });
    // As an older version wrote it: no `memberLink` on an entry without a link.
    await h.state.store.space<Record<string, unknown>[]>(h.state.spaces.history).update(stateKeyOf('slack:U0BOB'), (entries = []) => entries.map(({ memberLink: _, ...entry }) => entry));
    const workspace = await privately(h.fake, 'history workspace', ADMIN, 'C0ADM');
    directMessageLine(workspace, 'U0BOB', bobDm, 'an older page');
    expect(workspace).not.toContain(bobDm);
  });
});

describe('the Delete button of a result, on Slack', () => {
  it('deletes the message, its final images with their caption, their buttons and the previews in its thread, for whoever asked or an admin, and tells anyone else privately who may', async () => {
    // A second between the previews and the final image: a preview still waiting when the final comes is never posted,
    // and this test needs some posted (150 ms apart, a loaded machine skipped them all).
    h = await start({ emulator: { latencyMs: 3000 } });
    await h.fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0ART', user: 'U0ALICE' });
    const job = await finishedJob(h.fake, 'C0ART');
    const actions = await finishedActions(h.fake, 'C0ART');
    const images = [...h.fake.files.values()].filter((f) => !f.name.includes('-preview-')).map((f) => f.id);
    const previews = [...h.fake.files.values()].filter((f) => f.name.includes('-preview-')).map((f) => f.id);
    expect(images.length).toBeGreaterThan(0);
    expect(previews.length).toBeGreaterThan(0);
    const result = imageShares(h.fake, 'C0ART').find((m) => images.includes(m.files?.[0]?.id ?? ''))!;
    expect(slackKeyOf(result.text)).toBe('slack.job.caption');
    expect(result.text).toContain('“a kite”');

    const stranger = await h.fake.clickButton(actions, 'pictor_delete', 'U0BOB');
    const told = await h.fake.waitFor(() => h!.fake.responses.find((r) => stranger.responseUrl.endsWith(r.id)), 'the answer to the stranger');
    expect(told.body).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining('<@U0ALICE>') as unknown });
    expect(slackKeyOf(String(told.body.text))).toBe('slack.button.only_requester_delete');
    expect(h.fake.messages).toContain(job);

    await h.fake.clickButton(actions, 'pictor_delete', ADMIN);
    await h.fake.waitFor(() => !h!.fake.messages.includes(job), 'the message to be deleted');
    expect(images.filter((id) => h!.fake.files.has(id))).toEqual([]);
    expect(previews.filter((id) => h!.fake.files.has(id))).toEqual([]);
    // With their caption and their buttons: nothing of the result is left in the channel.
    expect(h.fake.messages).not.toContain(result);
    expect(h.fake.messages).not.toContain(actions);
    expect(h.fake.topLevel('C0ART').filter((m) => m.user === h!.fake.botUserId)).toEqual([]);
  });
});
