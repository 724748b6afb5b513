import { afterEach, describe, expect, it, vi } from 'vitest';
import { say } from '../../../bots/runner/index.js';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { finishedActions, startHarness, type Harness } from './harness.js';
import { requestStoreOf, spyOnInstance } from '../../helpers/instance-spy.js';

let h: Harness | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

/** A finished job of U0ALICE's in C0KITES, and its buttons. */
async function finishedKite(harness: Harness) {
  await harness.fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0KITES', user: 'U0ALICE' });
  return finishedActions(harness.fake, 'C0KITES');
}

describe('a Reroll answered at once never ends in silence for whoever pressed it', () => {
  it('its job’s message answered by nothing (the answer lost) and the press’s response URL out of reach: the member is told in their direct messages that it may show up; nothing reaches the service', async () => {
    h = await startHarness();
    const { fake } = h;
    const actions = await finishedKite(h);
    // The response URLs given from now on point where nothing listens: the note is refused before anything is sent.
    await fake.unreachableResponseUrls();
    fake.cutNext('chat.postMessage', 'after', { count: 1, match: (args) => args.channel === 'C0KITES' });
    const click = await fake.clickButton(actions, 'pictor_reroll', 'U0BOB');
    expect(click.status).toBe(200);
    const note = await fake.waitFor(() => fake.messages.find((m) => m.channel === 'U0BOB' || m.channel === fake.dmOf('U0BOB')), 'the private note in their direct messages');
    expect(note.text).toBe(say('en', 'slack.job.maybe_posted'));
    expect(h.emulator.requests).toHaveLength(1);
  });

  it('its request not saved anew (the data folder failing): the member is told privately that something went wrong on our side; nothing reaches the service', async () => {
    h = await startHarness();
    const { fake } = h;
    const actions = await finishedKite(h);
    spyOnInstance(RequestStore.prototype, 'create', requestStoreOf(h!)).mockRejectedValueOnce(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    const click = await fake.clickButton(actions, 'pictor_reroll', 'U0BOB');
    expect(click.status).toBe(200);
    const note = await fake.waitFor(() => fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private answer');
    expect(note.body).toMatchObject({ response_type: 'ephemeral', text: `:warning: ${say('en', 'error.on_my_side')}` });
    expect(h.emulator.requests).toHaveLength(1);
    expect(h.runner.activeJobs()).toEqual([]);
  });
});

describe('a private answer whose response URL cannot be reached goes to the member’s direct messages with the app', () => {
  it('another member’s press of a job’s Delete: they are told there that only its member or an admin may delete it', async () => {
    h = await startHarness();
    const { fake } = h;
    const actions = await finishedKite(h);
    // The response URLs given from now on point where nothing listens: the note is refused before anything is sent.
    await fake.unreachableResponseUrls();
    const click = await fake.clickButton(actions, 'pictor_delete', 'U0BOB');
    expect(click.status).toBe(200);
    const note = await fake.waitFor(() => fake.messages.find((m) => m.channel === 'U0BOB' || m.channel === fake.dmOf('U0BOB')), 'the private note in their direct messages');
    expect(note.text).toBe(say('en', 'slack.button.only_requester_delete', { user: '<@U0ALICE>' }));
    expect(fake.responses).toEqual([]);
  });

  it('the Edit image shortcut on a message without images: the member is told there why no form opens', async () => {
    h = await startHarness();
    const { fake } = h;
    const post = await fake.userMessage({ channel: 'C0PHOTOS', text: 'no pictures here' });
    // The response URLs given from now on point where nothing listens: the note is refused before anything is sent.
    await fake.unreachableResponseUrls();
    const shortcut = await fake.messageShortcut(post, 'pictor_edit_image', 'U0ALICE');
    expect(shortcut.status).toBe(200);
    const note = await fake.waitFor(() => fake.messages.find((m) => m.channel === 'U0ALICE' || m.channel === fake.dmOf('U0ALICE')), 'the private note in their direct messages');
    expect(note.text).toContain('no PNG, JPEG or WebP image');
    expect(fake.views).toEqual([]);
    expect(fake.responses).toEqual([]);
  });
});
