import { afterEach, describe, expect, it } from 'vitest';
import type { Requester } from '../../../bots/runner/index.js';
import { BLOCKED_WORD, intakeCases } from '../../helpers/intake-cases.js';
import type { FakeInteraction } from '../../fakes/discord/FakeDiscord.js';
import { snowflake } from '../../fakes/discord/snowflake.js';
import { makeImage } from '../../helpers/images.js';
import { buttonId, DiscordHarness, privateNoteOf, publicMessagesOf } from './harness.js';

/**
 * Every entry point of the Discord bot goes through the runner's one intake
 * before its first answer: whatever refuses a job — the member's budget, a
 * rule of the server — is that first answer, private (ephemeral), and nothing
 * reaches the image service or Discord's CDN. On main's code some answered in
 * public (the budget was decided after the public deferral), and some skipped
 * checks (the "Edit image" menu checked only the budget).
 */

interface EntryPoint {
  name: string;
  /** Interactions over HTTP (the bot's /interactions endpoint) instead of the gateway. */
  http?: boolean;
  /** Does the entry point carry a prompt (a blocked word can refuse it)? Forms get theirs when they are sent. */
  prompted: boolean;
  /** It opens a form (`requestForm`): no job yet, so its refusal's line names none. */
  opensForm?: true;
  /** What the entry point needs, made while nothing refuses (a job's message, a message with an image, an open form); answers how to use it. */
  prepare(h: DiscordHarness): Promise<() => FakeInteraction>;
}

const WORD = BLOCKED_WORD;

/** A finished job's message, with its buttons. */
async function jobMessage(h: DiscordHarness, options: { fail?: boolean } = {}) {
  if (options.fail) h.emulator.injectFault('server_error', { count: 1 });
  return h.finalReply(h.discord.slashCommand('imagine', { prompt: `a ${WORD} at sea`, quality: 'low' }));
}

/** A member's message with an image on Discord's CDN. */
async function imageMessage(h: DiscordHarness) {
  return h.discord.postUserMessage({ content: 'look', files: [{ filename: 'sea.png', bytes: await makeImage('png', 12, 12) }] });
}

const ENTRY_POINTS: EntryPoint[] = [
  { name: '/imagine', prompted: true, prepare: async (h) => () => h.discord.slashCommand('imagine', { prompt: `a ${WORD}`, quality: 'high' }) },
  {
    name: '/edit',
    prompted: true,
    prepare: async (h) => {
      const image1 = h.discord.hostFile({ filename: 'sea.png', bytes: await makeImage('png', 12, 12) });
      return () => h.discord.slashCommand('edit', { prompt: `add a ${WORD}`, image1 });
    },
  },
  {
    name: 'the Reroll button',
    prompted: true,
    prepare: async (h) => {
      const result = await jobMessage(h);
      return () => h.discord.clickButton(result, buttonId(result, 'Reroll'));
    },
  },
  {
    name: 'the Retry button',
    prompted: true,
    prepare: async (h) => {
      const failed = await jobMessage(h, { fail: true });
      return () => h.discord.clickButton(failed, buttonId(failed, 'Retry'));
    },
  },
  {
    name: 'the “Edit image” menu',
    prompted: false,
    opensForm: true,
    prepare: async (h) => {
      const source = await imageMessage(h);
      return () => h.discord.messageCommand('Edit image', source);
    },
  },
  {
    name: 'the form of the “Edit image” menu',
    prompted: true,
    prepare: async (h) => {
      const menu = h.discord.messageCommand('Edit image', await imageMessage(h));
      await h.discord.waitFor(() => menu.modal, 'the modal');
      return () => h.discord.submitModal(menu, { prompt: `add a ${WORD}` });
    },
  },
  {
    name: 'the Edit button',
    prompted: false,
    opensForm: true,
    prepare: async (h) => {
      const result = await jobMessage(h);
      return () => h.discord.clickButton(result, buttonId(result, 'Edit'));
    },
  },
  {
    name: 'the form of the Edit button',
    prompted: true,
    prepare: async (h) => {
      const result = await jobMessage(h);
      const click = h.discord.clickButton(result, buttonId(result, 'Edit'));
      await h.discord.waitFor(() => click.modal, 'the modal');
      return () => h.discord.submitModal(click, { prompt: `add a ${WORD}` });
    },
  },
  { name: '/imagine over HTTP', http: true, prompted: true, prepare: async (h) => () => h.discord.slashCommand('imagine', { prompt: `a ${WORD}`, quality: 'high' }) },
  {
    name: 'the Reroll button over HTTP',
    http: true,
    prompted: true,
    prepare: async (h) => {
      const result = await jobMessage(h);
      return () => h.discord.clickButton(result, buttonId(result, 'Reroll'));
    },
  },
];

describe('every entry point of the Discord bot refuses privately, before anything is sent', () => {
  let h: DiscordHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it.each(intakeCases(ENTRY_POINTS))('%s, refused with %s', async (_name, code, { entry, refusal }) => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 5 }, http: entry.http });
    const use = await entry.prepare(h);
    const admin: Requester = { platform: 'discord', userId: 'an-admin', channelId: h.discord.channelId, scopeId: h.discord.guildId, isAdmin: true };
    await refusal.apply(h.runner, admin, snowflake(), h.state, { platform: 'discord', userId: h.discord.user.id });
    const sent = h.emulator.requests.length;
    const downloads = h.discord.requests.filter((r) => r.route === 'cdn').length;

    const ix = use();
    const note = await privateNoteOf(h, ix);

    // The refusal is the interaction's first answer, and only the member sees it; no form opened.
    expect(h.discord.original(ix)).toBe(note);
    expect(note.content).toMatch(/^✋ /);
    expect(ix.modal).toBeUndefined();
    expect(publicMessagesOf(h, ix)).toEqual([]);
    // One line in the operator's log, the runner's: a job's with the id the intake gave it.
    expect(h.logger.entries.filter((e) => (e.obj as { code?: string }).code === code)).toEqual([
      expect.objectContaining({ obj: entry.opensForm ? expect.not.objectContaining({ jobId: expect.anything() }) : expect.objectContaining({ jobId: expect.any(String) }) }),
    ]);
    // Nothing reached the image service, and no image was downloaded for it.
    expect(h.emulator.requests).toHaveLength(sent);
    expect(h.discord.requests.filter((r) => r.route === 'cdn')).toHaveLength(downloads);
  });
});
