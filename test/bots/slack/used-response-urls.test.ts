import { afterEach, describe, expect, it } from 'vitest';
import { say } from '../../../bots/runner/index.js';
import type { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import { warningsKept } from '../../helpers/warnings-kept.js';
import { finishedActions, startHarness, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The bot's message in the member's direct messages with the app whose text is `text`. */
function inDirectMessages(fake: FakeSlack, user: string, text: string) {
  return fake.waitFor(() => fake.messages.find((m) => (m.channel === user || m.channel === fake.dmOf(user)) && m.text === text), 'the private note in their direct messages');
}

describe('a private answer whose response URL is used up or expired reaches the member in their direct messages with the app', () => {
  for (const status of [404, 410, 200] as const) {
    it(`another member’s press of a job’s Delete, the press’s response URL answering ${status === 200 ? '200 with `ok: false` (expired_url)' : status}: they are told there that only its member or an admin may delete it`, async () => {
      h = await startHarness();
      const { fake } = h;
      await fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0KITES', user: 'U0ALICE' });
      const actions = await finishedActions(fake, 'C0KITES');
      fake.expireResponseUrls(status);
      expect((await fake.clickButton(actions, 'pictor_delete', 'U0BOB')).status).toBe(200);
      await inDirectMessages(fake, 'U0BOB', say('en', 'slack.button.only_requester_delete', { user: '<@U0ALICE>' }));
      expect(fake.refusedResponses).toBe(1);
      expect(fake.responses).toEqual([]);
    });
  }

  for (const status of [410, 200] as const) it(`/imagine --private whose response URL answers ${status === 200 ? '200 with `ok: false`' : status}: the note that the job is drawn in their direct messages is there`, async () => {
    h = await startHarness();
    const { fake } = h;
    fake.expireResponseUrls(status);
    expect((await fake.command({ command: '/imagine', text: 'a secret garden --quality low --private', channel: 'C0ART', user: 'U0ALICE' })).status).toBe(200);
    await inDirectMessages(fake, 'U0ALICE', say('en', 'slack.job.private_in_dm'));
    expect(fake.responses).toEqual([]);
  });

  it('a submitted edit form refused (a file that is not an image), the response URL of the command that opened it answering 404: the refusal is in their direct messages; nothing is spent', async () => {
    h = await startHarness();
    const { fake } = h;
    await fake.command({ command: '/imagine-edit', text: '', channel: 'C0EDIT', user: 'U0ALICE' });
    const view = await fake.waitFor(() => fake.views[0], 'the edit modal');
    fake.expireResponseUrls(404);
    const notes = fake.addFile({ name: 'notes.png', bytes: Buffer.from('these are my notes, not a picture'), mimetype: 'image/png' });
    await fake.submitView(view, { files: [notes], prompt: 'make it nicer' });
    const note = await fake.waitFor(() => fake.messages.find((m) => m.channel === 'U0ALICE' || m.channel === fake.dmOf('U0ALICE')), 'the private refusal in their direct messages');
    expect(note.text).toContain('*notes.png* is not a PNG, JPEG or WebP image (checked by its content)');
    expect(fake.responses).toEqual([]);
    expect(h.emulator.requests).toEqual([]);
  });
});

describe('a private answer whose response URL fails on Slack’s side (a 5xx) or is rate-limited (a 429) reaches the member in their direct messages with the app', () => {
  for (const status of [500, 503, 429] as const) {
    it(`another member’s press of a job’s Delete, the press’s response URL answering ${status}: they are told there that only its member or an admin may delete it`, async () => {
      h = await startHarness();
      const { fake } = h;
      await fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0KITES', user: 'U0ALICE' });
      const actions = await finishedActions(fake, 'C0KITES');
      fake.failResponseUrls(status);
      expect((await fake.clickButton(actions, 'pictor_delete', 'U0BOB')).status).toBe(200);
      await inDirectMessages(fake, 'U0BOB', say('en', 'slack.button.only_requester_delete', { user: '<@U0ALICE>' }));
      expect(fake.refusedResponses).toBe(1);
      expect(fake.responses).toEqual([]);
    });
  }
});

describe('a private answer through a response URL goes to the member’s direct messages only when it surely reached nobody', () => {
  it('a note Slack took whose answer is lost on its way back (the connection closed after it) is logged, not sent again to their direct messages', async () => {
    const { logger, warnings } = warningsKept();
    h = await startHarness({ bot: { logger } });
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0KITES', user: 'U0ALICE' });
    const actions = await finishedActions(fake, 'C0KITES');
    fake.loseResponseUrlAnswers();
    expect((await fake.clickButton(actions, 'pictor_delete', 'U0BOB')).status).toBe(200);
    await fake.waitFor(() => warnings.includes('a response_url did not answer a private note it may have taken: it is not sent again'), 'the lost answer logged');
    expect(fake.responses.map((r) => r.body.text)).toContain(say('en', 'slack.button.only_requester_delete', { user: '<@U0ALICE>' }));
    expect(fake.messages.filter((m) => m.channel === 'U0BOB' || m.channel === fake.dmOf('U0BOB'))).toEqual([]);
  });
});
