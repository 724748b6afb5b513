import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import { RecordingLogger } from '../discord/harness.js';
import { describeFailure, say, sayWords } from '../../../bots/runner/index.js';
import { refusalFromPolicy, refusalOfUnreadableDefaults } from '../../../bots/runner/describe-refusal.js';
import { stateKeyOf } from '../../../bots/state/index.js';
import { actionMessages, finishedActions, finishedJob, jobMessages, privately, type Harness, ADMIN, startWithAdmin } from './harness.js';
import { slackKeyOf } from '../../helpers/message-keys.js';

const start = startWithAdmin;

let h: Harness | undefined;

/** A started bot (ADMIN its admin) that keeps its log and its runner's: `refusals()` are the codes of the jobs refused, one line each. */
async function refusing() {
  const logger = new RecordingLogger();
  h = await start({ bot: { adminUserIds: [ADMIN] }, logger });
  // Each refusal's one line, the runner's: of a job, of a form, of an admitted job before it was sent.
  const REFUSED = ['job refused', 'form refused', 'admitted job refused before it was sent'];
  const refusals = () => logger.entries.filter((e) => REFUSED.includes(e.msg ?? '')).map((e) => (e.obj as { code?: string }).code);
  return { h, fake: h.fake, refusals };
}

/** As `refusing`, with a private job of Alice's (asked in #art) finished in her direct messages: `actions` its buttons' message. */
async function withAPrivateResult() {
  const started = await refusing();
  const { fake } = started;
  await privately(fake, 'a secret diary --quality low --private', 'U0ALICE', 'C0ART');
  const dm = fake.dmOf('U0ALICE');
  await finishedJob(fake, dm);
  return { ...started, dm, actions: await finishedActions(fake, dm) };
}
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Everything the bot posted in a channel that its members see (messages, shared files). */
const seenIn = (fake: FakeSlack, channel: string) => fake.botMessages(channel);

describe('private results on Slack', () => {
  it('draws a --private job in the member’s direct messages with the bot — message, previews, images, Reroll, Edit, Delete — and tells them so privately in the channel, where nothing is posted', async () => {
    // A second between the previews and the final image, so the previews are posted however loaded the machine (a
    // preview still waiting when the final comes is never posted).
    h = await start({ emulator: { latencyMs: 3000 } });
    const { fake } = h;
    const note = await privately(fake, 'a secret garden --quality low --private', 'U0ALICE', 'C0ART');
    expect(slackKeyOf(note)).toBe('slack.job.private_in_dm');
    const dm = fake.dmOf('U0ALICE');
    const job = await finishedJob(fake, dm);
    expect(job.text + JSON.stringify(job.blocks)).toContain('a secret garden');
    const actions = await finishedActions(fake, dm);
    expect(fake.messagesIn(dm).some((m) => (m.files ?? []).length > 0)).toBe(true);
    expect(fake.replies(dm, job.ts).some((m) => m.text.startsWith('Preview'))).toBe(true);
    expect(seenIn(fake, 'C0ART')).toEqual([]);
    expect(fake.ephemerals.filter((e) => e.channel === 'C0ART' && e.user !== 'U0ALICE')).toEqual([]);

    // Reroll: again in the direct messages, not in the channel.
    await fake.clickButton(actions, 'pictor_reroll');
    await finishedJob(fake, dm, 1);
    expect(seenIn(fake, 'C0ART')).toEqual([]);

    // Edit: the modal, then the edit in the direct messages too.
    const viewsBefore = fake.views.length;
    await fake.clickButton(actions, 'pictor_edit');
    const view = await fake.waitFor(() => fake.views[viewsBefore], 'the edit modal');
    await fake.submitView(view, { prompt: 'add a fountain', quality: 'low' });
    await finishedJob(fake, dm, 2);
    expect(h.emulator.requests.filter((r) => r.path === '/v1/images/edits')).toHaveLength(1);
    expect(seenIn(fake, 'C0ART')).toEqual([]);

    // Delete: the first job's message and its buttons go.
    await fake.clickButton(actions, 'pictor_delete');
    await fake.waitFor(() => !fake.messages.includes(job), 'the private job to be deleted');
    expect(actionMessages(fake, dm)).not.toContain(actions);
  });

  it('refuses the Edit of a private result where private results were turned off since, before its form opens, privately, and sends and charges nothing', async () => {
    const { fake, actions, refusals } = await withAPrivateResult();
    await privately(fake, 'admin set private-results off', ADMIN, 'C0ADMIN');
    const [views, responses, requests] = [fake.views.length, fake.responses.length, h!.emulator.requests.length];
    await fake.clickButton(actions, 'pictor_edit', 'U0ALICE');
    await fake.waitFor(() => fake.responses[responses], 'the private refusal');
    // The sentence is describe-refusal's to check (one the form can follow); here, its code, and that no form opened.
    expect(refusals()).toEqual(['private_not_allowed']);
    expect(fake.views.length).toBe(views);
    expect(h!.emulator.requests.length).toBe(requests);
  });

  it('refuses the edit form of a private result submitted after private results were turned off, privately, with advice the form can follow, and sends nothing', async () => {
    const { fake, actions, refusals } = await withAPrivateResult();
    const views = fake.views.length;
    await fake.clickButton(actions, 'pictor_edit', 'U0ALICE');
    const form = await fake.waitFor(() => fake.views[views], 'the edit modal');
    // Turned off while the form is open: the submission is refused, in words the form can follow (it has no --public).
    await privately(fake, 'admin set private-results off', ADMIN, 'C0ADMIN');
    const [responses, requests] = [fake.responses.length, h!.emulator.requests.length];
    const advice = describeFailure(refusalFromPolicy('private_not_allowed', { platform: 'slack', inForm: true }), 'en', '/imagine').message;

    await fake.submitView(form, { prompt: 'add a fountain', quality: 'low' }, 'U0ALICE');
    const told = await fake.waitFor(() => fake.responses[responses], 'the private refusal of the submitted form');
    expect(told.body.text).toBe(advice);
    expect(refusals()).toEqual(['private_not_allowed']);
    expect(h!.emulator.requests.length).toBe(requests);
    expect(seenIn(fake, 'C0ART')).toEqual([]);
  });

  it('refuses the Reroll of a private result (its button in the direct messages, the Home tab’s) where private results were turned off since, privately, with advice a button can follow, and sends nothing', async () => {
    const { fake, actions, refusals } = await withAPrivateResult();
    await privately(fake, 'admin set private-results off', ADMIN, 'C0ADMIN');
    const [responses, requests] = [fake.responses.length, h!.emulator.requests.length];
    // The sentence is describe-refusal's to check: here, that it is the one a button can follow (no option to leave out).
    const advice = describeFailure(refusalFromPolicy('private_not_allowed', { platform: 'slack', again: true }), 'en', '/imagine').message;

    await fake.clickButton(actions, 'pictor_reroll', 'U0ALICE');
    const told = await fake.waitFor(() => fake.responses[responses], 'the private refusal of the Reroll');
    expect(told.body.text).toBe(advice);

    // The Home tab lists the job once its end is recorded in the member's history.
    const requester = { platform: 'slack' as const, userId: 'U0ALICE', channelId: 'C0ART', scopeId: fake.teamId };
    await vi.waitFor(async () => expect(await h!.runner.history!.mine(requester)).toHaveLength(1));
    await fake.openHome('U0ALICE');
    const home = await fake.waitFor(() => fake.homes.get(`${fake.teamId}:U0ALICE`), 'the Home tab');
    const reroll = ((home.view.blocks ?? []) as { elements?: { action_id?: string; value?: string }[] }[]).flatMap((b) => b.elements ?? []).find((e) => e.action_id === 'pictor_reroll')?.value;
    await fake.clickHomeButton('U0ALICE', 'pictor_reroll', reroll!);
    // From the Home tab (no response URL): told in a direct message, posted to the member's id (Slack's name for it).
    await fake.waitFor(() => fake.messagesIn('U0ALICE').find((m) => m.text === advice), 'the Home tab Reroll’s refusal in the direct messages');
    expect(refusals()).toEqual(['private_not_allowed', 'private_not_allowed']);
    expect(h!.emulator.requests.length).toBe(requests);
    expect(seenIn(fake, 'C0ART')).toEqual([]);
  });

  it('refuses another member’s Reroll of a public job that their private default would make private, privately, with advice a button can follow, and sends nothing', async () => {
    const { fake, refusals } = await refusing();
    await fake.command({ command: '/imagine', text: 'a public kite --quality low', user: 'U0ALICE', channel: 'C0ART' });
    await finishedJob(fake, 'C0ART');
    const actions = await finishedActions(fake, 'C0ART');
    await privately(fake, 'settings --private on', 'U0BOB', 'C0ART');
    await privately(fake, 'admin set private-results off', ADMIN, 'C0ADMIN');
    const [responses, requests] = [fake.responses.length, h!.emulator.requests.length];
    // The sentence is describe-refusal's to check: here, that it is the one a button can follow (no --public to add).
    const advice = describeFailure(refusalFromPolicy('private_not_allowed', { platform: 'slack', again: true, fromDefault: true }), 'en', '/imagine').message;

    await fake.clickButton(actions, 'pictor_reroll', 'U0BOB');
    const told = await fake.waitFor(() => fake.responses[responses], 'the private refusal of the Reroll');
    expect(told.body.text).toBe(advice);
    expect(refusals()).toEqual(['private_not_allowed']);
    expect(h!.emulator.requests.length).toBe(requests);
  });

  it('keeps private jobs out of the workspace’s history', async () => {
    h = await start();
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a public kite --quality low', channel: 'C0ART' });
    await finishedJob(fake, 'C0ART');
    await privately(fake, 'a private diary --quality low --private', 'U0ALICE', 'C0ART');
    await finishedJob(fake, fake.dmOf('U0ALICE'));
    await h.runner.shutdown({ graceMs: 2000 });
    const requester = { platform: 'slack' as const, userId: ADMIN, channelId: 'C0ART', scopeId: fake.teamId, isAdmin: true };
    const all = (await h.runner.history!.ofScope(requester))!.map((e) => e.prompt);
    expect(all).toEqual(['a public kite']);
    const mine = (await h.runner.history!.mine({ ...requester, userId: 'U0ALICE' })).map((e) => e.prompt);
    expect(mine).toEqual(['a private diary', 'a public kite']);
  });

  it('refuses --private privately where the workspace forbids private results, and posts, sends and charges nothing', async () => {
    h = await start();
    const { fake } = h;
    const set = await privately(fake, 'admin set private-results off', ADMIN, 'C0ART');
    expect(slackKeyOf(set)).toBe('settings.changed');
    expect(set).toContain('private-results');
    const refused = await privately(fake, 'a hidden thing --private', 'U0ALICE', 'C0ART');
    expect(slackKeyOf(refused)).toBe('refusal.private_not_allowed');
    expect(h!.emulator.requests).toHaveLength(0);
    expect(seenIn(fake, 'C0ART')).toEqual([]);
    expect(fake.messagesIn(fake.dmOf('U0ALICE'))).toEqual([]);
  });
});

describe('/imagine settings: a member’s own defaults on Slack', () => {
  it('refuses a job privately, nothing posted or sent, while the member’s own private default cannot be read (never public against their wish); settings clear recovers', async () => {
    h = await start();
    const { fake } = h;
    await privately(fake, 'settings --size 1536x1024 --private on', 'U0ALICE', 'C0ART');
    // The stored private default damaged (a hand edit): not a value this version reads.
    await h.state.store.space<Record<string, unknown>>(h.state.spaces.memberDefaults).update(stateKeyOf('slack:U0ALICE'), (stored) => ({ ...stored, private: 'true' }));
    expect(await privately(fake, 'a sea --quality low', 'U0ALICE', 'C0ART')).toBe(sayWords('en', refusalOfUnreadableDefaults('slack', ['private']).words));
    expect(seenIn(fake, 'C0ART')).toEqual([]);
    expect(fake.messagesIn(fake.dmOf('U0ALICE'))).toEqual([]);
    expect(h.emulator.requests).toHaveLength(0);
    expect(await privately(fake, 'settings clear', 'U0ALICE', 'C0ART')).toContain(say('en', 'member.none', { scope: 'workspace' }));
    await fake.command({ command: '/imagine', text: 'a sea --quality low', channel: 'C0ART', user: 'U0ALICE' });
    await finishedJob(fake, 'C0ART');
  });

  it('sets, shows and applies a member’s defaults within the workspace’s rules, naming one they do not allow, and --public over a private default', async () => {
    h = await start();
    const { fake } = h;
    const saved = await privately(fake, 'settings --size 1536x1024 --quality high --format webp --n 2 --private on --previews off', 'U0ALICE', 'C0ART');
    const lines = saved.split('\n');
    expect(lines.map(slackKeyOf)).toEqual(['member.saved', 'member.title', ...Array<string>(6).fill('member.line'), 'member.scope', 'member.how']);
    const values: [string, string][] = [['size', '1536x1024'], ['quality', 'high'], ['format', 'webp'], ['count', '2'], ['private', 'on'], ['previews', 'off']];
    expect(lines.slice(2, 8)).toEqual(values.map(([name, value]) => say('en', 'member.line', { name, value, ignored: 'no' })));
    const wrong = await privately(fake, 'settings --private maybe', 'U0ALICE', 'C0ART');
    expect(slackKeyOf(wrong)).toBe('slack.settings.on_off');
    expect(wrong).toContain('`--private`');

    await privately(fake, 'admin set qualities low medium', ADMIN, 'C0ART');
    // Private by default: in the direct messages; the quality it does not allow is named, the workspace's applies.
    const note = await privately(fake, 'a harbour', 'U0ALICE', 'C0ART');
    expect(note.split('\n').map(slackKeyOf)).toEqual(['slack.job.private_in_dm', 'member.ignored']);
    expect(note).toContain('your default quality high');
    await finishedJob(fake, fake.dmOf('U0ALICE'));
    const sent = h.emulator.requests.at(-1)!.fields!;
    expect(sent).toMatchObject({ size: '1536x1024', quality: 'low', output_format: 'webp', n: 2 });
    expect(sent.partial_images).toBeUndefined();

    // --public: in the channel, with the same defaults.
    await fake.command({ command: '/imagine', text: 'a harbour for all --public', channel: 'C0ART' });
    await finishedJob(fake, 'C0ART');
    expect(jobMessages(fake, 'C0ART')).toHaveLength(1);

    expect(await privately(fake, 'settings clear all', 'U0ALICE', 'C0ART')).toContain(say('en', 'member.none', { scope: 'workspace' }));
    // “settings” followed by words is a prompt.
    await fake.command({ command: '/imagine', text: 'settings of a castle --quality low', channel: 'C0ART' });
    await finishedJob(fake, 'C0ART', 1);
  });

  it('keeps a job a member with a private default asks in her own direct messages with the app private — drawn there, with no note that it moves there, out of the workspace’s history and in her own — while --public asked there is listed', async () => {
    h = await start();
    const { fake } = h;
    await privately(fake, 'settings --private on', 'U0ALICE', 'C0ART');
    const dm = fake.dmOf('U0ALICE');
    await fake.userMessage({ channel: dm, channelType: 'im', user: 'U0ALICE', text: 'a dm owl --quality low' });
    const job = await finishedJob(fake, dm);
    expect(job.text + JSON.stringify(job.blocks)).toContain('a dm owl');
    await fake.userMessage({ channel: dm, channelType: 'im', user: 'U0ALICE', text: 'a dm kite --quality low --public' });
    await finishedJob(fake, dm, 1);
    // Neither is told it moved to the direct messages it was asked in.
    expect(fake.ephemerals.filter((e) => e.channel === dm)).toEqual([]);
    await h.runner.shutdown({ graceMs: 2000 });
    const admin = { platform: 'slack' as const, userId: ADMIN, channelId: 'C0ADMIN', scopeId: fake.teamId, isAdmin: true };
    expect((await h.runner.history!.ofScope(admin))!.map((e) => e.prompt)).toEqual(['a dm kite']);
    expect((await h.runner.history!.mine({ ...admin, userId: 'U0ALICE' })).map((e) => e.prompt)).toEqual(['a dm kite', 'a dm owl']);
  });

  it('sends a member’s own Reroll again as the job was sent — no note of a default not used, and not their defaults changed since — while another member’s Reroll takes their defaults where it chose nothing', async () => {
    h = await start();
    const { fake } = h;
    await privately(fake, 'admin set max-images 1', ADMIN, 'C0ART');
    await privately(fake, 'settings --n 3 --quality low', 'U0ALICE', 'C0ART');
    expect(await privately(fake, 'a fox', 'U0ALICE', 'C0ART')).toBe(':information_source: Not used here, as this workspace’s rules do not allow it: your default count 3.');
    await finishedJob(fake, 'C0ART');
    const actions = await finishedActions(fake, 'C0ART');
    const asSent = h.emulator.requests.at(-1)!.fields!;
    expect(asSent).toMatchObject({ prompt: 'a fox', n: 1, quality: 'low' });
    const notesTo = (click: { responseUrl: string }) => fake.responses.filter((r) => click.responseUrl.endsWith(r.id));

    const reroll = await fake.clickButton(actions, 'pictor_reroll', 'U0ALICE');
    await finishedJob(fake, 'C0ART', 1);
    expect(notesTo(reroll)).toEqual([]);
    expect(h.emulator.requests.at(-1)!.fields).toEqual(asSent);

    await privately(fake, 'settings --size 1536x1024 --quality medium --format webp --private on', 'U0ALICE', 'C0ART');
    const later = await fake.clickButton(actions, 'pictor_reroll', 'U0ALICE');
    await finishedJob(fake, 'C0ART', 2);
    expect(notesTo(later)).toEqual([]);
    expect(h.emulator.requests.at(-1)!.fields).toEqual(asSent);

    await privately(fake, 'settings --size 1024x1536 --quality high', 'U0BOB', 'C0ART');
    await fake.clickButton(actions, 'pictor_reroll', 'U0BOB');
    await finishedJob(fake, 'C0ART', 3);
    expect(h.emulator.requests.at(-1)!.fields).toEqual({ ...asSent, size: '1024x1536' });
  });
});
