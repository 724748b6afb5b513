import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { JobRecord } from '../../../bots/discord/JobRecordStore.js';
import { makeImage } from '../../helpers/images.js';
import { snowflake } from '../../fakes/discord/snowflake.js';
import { editBeingFetched, requester } from '../../helpers/runner-harness.js';
import type { FakeInteraction, FakeMessage } from '../../fakes/discord/FakeDiscord.js';
import { buttonId, DiscordHarness, drawingReply, privateNoteOf } from './harness.js';
import type { APIUser } from 'discord.js';

/**
 * What `/edit` did not start is one line in the operator's log, by the one rule: the runner's for what its intake
 * refused or could not start (with the job's id), the bot's for the images it refused itself before asking the
 * runner — never both. (Every entry point's refusal by a rule or a budget: intake.test.ts.)
 */
describe('an edit that did not start, in the operator’s log', () => {
  let h: DiscordHarness;
  beforeAll(async () => {
    h = await DiscordHarness.start({ partialImages: 0, maxQueuedInputBytes: 100_000 });
  });
  afterAll(async () => {
    await h.close();
  });

  /** The lines with `code`, once the member was told privately why their edit did not start. */
  async function linesOnceTold(ix: FakeInteraction, code: string) {
    await privateNoteOf(h, ix);
    return h.logger.entries.filter((e) => (e.obj as { code?: string }).code === code);
  }

  it('refused by a full queue: one warn line, with its id', async () => {
    // Another edit's images hold 90 KB of the queue's 100 KB while they download.
    const other = editBeingFetched(h.runner, requester(), 90_000);
    expect(await other.admitted).toBeUndefined();
    const image = h.discord.hostFile({ filename: 'cat.png', bytes: await makeImage('png', 8, 8) });
    const lines = await linesOnceTold(h.discord.slashCommand('edit', { prompt: 'brighter', image1: { ...image, size: 20_000 } }), 'queue_full');
    other.giveUp();
    await other.handle;
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', obj: expect.objectContaining({ jobId: expect.any(String), limit: 100_000 }) })]);
  });

  it('with an image the bot refused itself (not on Discord’s CDN): one info line, the member’s, naming who asked', async () => {
    const elsewhere = 'http://127.0.0.1:9/attachments/1/2/cat.png';
    const image1 = { id: '1', filename: 'cat.png', size: 100, url: elsewhere, proxy_url: elsewhere, content_type: 'image/png' };
    const lines = await linesOnceTold(h.discord.slashCommand('edit', { prompt: 'brighter', image1 }), 'host_not_allowed');
    expect(lines).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'discord', scopeId: h.discord.guildId, userId: h.discord.user.id }) })]);
  });

  it('admitted, then its image turned out not to be one: one info line, with the job’s id', async () => {
    const image1 = h.discord.hostFile({ filename: 'photo.png', bytes: Buffer.from('GIF89a not really a png'), contentType: 'image/png' });
    const lines = await linesOnceTold(h.discord.slashCommand('edit', { prompt: 'brighter', image1 }), 'not_an_image');
    expect(lines).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ jobId: expect.any(String), userId: h.discord.user.id }) })]);
  });
});

/**
 * What a member asked that the bot refused itself before asking the runner (the images a job needs, gone or not
 * there; a press of a job that cannot run again, whose record is gone or is another server's) is told to them privately and is one line in the operator's log, by the runner's one rule: the member's,
 * info, with its own code, naming who asked as the runner's lines do.
 */
describe('a request the bot refused itself before asking the runner, in the operator’s log', () => {
  let h: DiscordHarness;
  beforeAll(async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
  });
  afterAll(async () => {
    await h.close();
  });

  /** A finished edit, and its record in the bots' state. */
  async function finishedEdit() {
    const image1 = h.discord.hostFile({ filename: 'dog.png', bytes: await makeImage('png', 20, 20) });
    const result = await h.finalReply(h.discord.slashCommand('edit', { prompt: 'give the dog a scarf', image1 }));
    const key = buttonId(result, 'Reroll').split(':')[2]!;
    const records = h.state.store.space<JobRecord>(h.state.spaces.discordJobs);
    return { result, key, records, record: (await records.get(key))! };
  }

  /** A finished job from `/imagine`, and its record in the bots' state. */
  async function finishedImagine() {
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a red kite' }));
    const key = buttonId(result, 'Reroll').split(':')[2]!;
    const records = h.state.store.space<JobRecord>(h.state.spaces.discordJobs);
    return { result, key, records, record: (await records.get(key))! };
  }

  const ENTRY_POINTS: [name: string, code: string, prepare: () => Promise<() => FakeInteraction>][] = [
    [
      'the Reroll of a job whose prompt its member erased',
      'prompt_erased',
      async () => {
        const { result, key, records, record } = await finishedImagine();
        await records.put(key, { ...record, prompt: '' });
        return () => h.discord.clickButton(result, buttonId(result, 'Reroll'));
      },
    ],
    [
      'the Reroll of an edit whose record keeps no input image',
      'no_images',
      async () => {
        const { result, key, records, record } = await finishedEdit();
        await records.put(key, { ...record, inputs: [] });
        return () => h.discord.clickButton(result, buttonId(result, 'Reroll'));
      },
    ],
    [
      'a button whose job’s record is gone',
      'job_gone',
      async () => {
        const { result, key, records } = await finishedImagine();
        await records.delete(key);
        return () => h.discord.clickButton(result, buttonId(result, 'Reroll'));
      },
    ],
    [
      'a button whose custom_id carries another server’s job',
      'job_other_scope',
      async () => {
        const { result, key, records, record } = await finishedEdit();
        await records.put(key, { ...record, requester: { ...record.requester, scopeId: snowflake() } });
        return () => h.discord.clickButton(result, buttonId(result, 'Edit'));
      },
    ],
    [
      'the Reroll of an edit whose kept images are gone',
      'no_images',
      async () => {
        const { result, record } = await finishedEdit();
        // Its input images lapsed (past their day, or pushed out by newer ones); its record still names them.
        const images = h.state.store.space<Buffer>(h.state.spaces.discordImages);
        for (const img of record.inputs) await images.delete(img.file);
        return () => h.discord.clickButton(result, buttonId(result, 'Reroll'));
      },
    ],
    [
      'the Edit button of a result whose image is not kept',
      'no_images',
      async () => {
        const { result, key, records, record } = await finishedEdit();
        await records.put(key, { ...record, outputs: [] });
        return () => h.discord.clickButton(result, buttonId(result, 'Edit'));
      },
    ],
    [
      '“Edit image” on a message with no image',
      'no_images',
      async () => {
        const source: FakeMessage = h.discord.postUserMessage({ content: 'no picture here' });
        return () => h.discord.messageCommand('Edit image', source);
      },
    ],
    [
      '“Edit image” on a message with more images than an edit takes',
      'too_many_images',
      async () => {
        const png = await makeImage('png', 8, 8);
        const source = h.discord.postUserMessage({ content: 'many', files: Array.from({ length: 17 }, (_, i) => ({ filename: `p${i}.png`, bytes: png })) });
        return () => h.discord.messageCommand('Edit image', source);
      },
    ],
  ];

  it.each(ENTRY_POINTS)('%s: told privately, and one info line, the member’s, with its code (%s) and who asked', async (_name, code, prepare) => {
    const use = await prepare();
    const [lines, sent] = [h.logger.entries.length, h.emulator.requests.length];
    const ix = use();
    await privateNoteOf(h, ix);
    expect(h.logger.entries.slice(lines).filter((e) => (e.obj as { code?: string }).code === code)).toEqual([
      expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'discord', scopeId: h.discord.guildId, userId: h.discord.user.id }) }),
    ]);
    expect(ix.modal).toBeUndefined();
    expect(h.emulator.requests).toHaveLength(sent);
  });
});

/**
 * A Cancel or Delete the bot refused — pressed by a member who did not ask for the job and is no admin, or a Cancel of
 * a job that has already finished — is told to the presser privately and is one line in the operator's log, by the
 * runner's one rule: the presser's, info, with its code, naming who pressed where.
 */
describe('a Cancel or Delete refused, in the operator’s log', () => {
  let h: DiscordHarness;
  beforeAll(async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
  });
  afterAll(async () => {
    await h.close();
  });

  /** A job of `/imagine` still drawing (the service slow until it ends), with its message; `end` cancels it as its member. */
  async function drawing() {
    h.emulator.configure({ latencyMs: 20_000 });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a slow fresco' });
    const message = await drawingReply(h, ix);
    return {
      message,
      end: async () => {
        h.discord.clickButton(message, buttonId(message, 'Cancel'));
        await h.finalReply(ix, (m) => m.content.includes('Cancelled'));
        h.emulator.configure({ latencyMs: 0 });
      },
    };
  }

  const PRESSES: [name: string, code: string, press: (as: { user: APIUser }) => Promise<{ ix: FakeInteraction; end?: () => Promise<void> }>][] = [
    [
      'a Cancel of someone else’s job',
      'not_requester',
      async (as) => {
        const { message, end } = await drawing();
        return { ix: h.discord.clickButton(message, buttonId(message, 'Cancel'), as), end };
      },
    ],
    [
      'a Delete of someone else’s result',
      'not_requester',
      async (as) => {
        const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a red kite' }));
        return { ix: h.discord.clickButton(result, buttonId(result, 'Delete'), as) };
      },
    ],
    [
      'a Cancel of a job that has already finished',
      'job_finished',
      async () => {
        const { message, end } = await drawing();
        await end();
        // Its Cancel still shown somewhere (a client that did not refresh), pressed again.
        return { ix: h.discord.clickButton(message, buttonId(message, 'Cancel')) };
      },
    ],
  ];

  it.each(PRESSES)('%s: told privately, and one info line, the presser’s, with its code (%s)', async (_name, code, press) => {
    const stranger = h.discord.newUser('mallory');
    const lines = h.logger.entries.length;
    const { ix, end } = await press({ user: stranger });
    await privateNoteOf(h, ix);
    const refused = h.logger.entries.slice(lines).filter((e) => (e.obj as { code?: string }).code === code);
    await end?.();
    expect(refused).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'discord', scopeId: h.discord.guildId, userId: ix.user.id }) })]);
  });
});

/**
 * An edit form sent for what is no longer there or not the sender's — its job's record gone, another server's, or an
 * "Edit image" draft another member opened — is told to the sender privately ("form expired") and is one line in the
 * operator's log, by the runner's one rule: the sender's, info, with its code, naming who sent it where.
 */
describe('an edit form refused as it is sent, in the operator’s log', () => {
  let h: DiscordHarness;
  beforeAll(async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
  });
  afterAll(async () => {
    await h.close();
  });

  const records = () => h.state.store.space<JobRecord>(h.state.spaces.discordJobs);

  /** The form of a finished job's Edit button, shown, with its record's key. */
  async function resultForm() {
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a red kite' }));
    const click = h.discord.clickButton(result, buttonId(result, 'Edit'));
    await h.discord.waitFor(() => click.modal, 'the edit form');
    return { click, key: buttonId(result, 'Reroll').split(':')[2]! };
  }

  /** The form of "Edit image" on a message with an image, shown, with its draft's key. */
  async function draftForm() {
    const source = h.discord.postUserMessage({ content: 'mine', files: [{ filename: 'a.png', bytes: await makeImage('png', 20, 20) }] });
    const menu = h.discord.messageCommand('Edit image', source);
    const modal = await h.discord.waitFor(() => menu.modal, 'the edit form');
    const key = modal.custom_id.split(':')[2]!;
    // The bot saves the draft once the form is shown.
    await vi.waitFor(async () => expect(await records().get(key)).toBeDefined(), { timeout: 15_000 });
    return { menu, key };
  }

  const FORMS: [name: string, code: string, prepare: () => Promise<() => FakeInteraction>][] = [
    [
      'the form of a result whose record is gone',
      'job_gone',
      async () => {
        const { click, key } = await resultForm();
        await records().delete(key);
        return () => h.discord.submitModal(click, { prompt: 'add a storm' });
      },
    ],
    [
      'the form of a result whose record is another server’s',
      'job_other_scope',
      async () => {
        const { click, key } = await resultForm();
        const record = (await records().get(key))!;
        await records().put(key, { ...record, requester: { ...record.requester, scopeId: snowflake() } });
        return () => h.discord.submitModal(click, { prompt: 'add a storm' });
      },
    ],
    [
      'the form of an “Edit image” draft that is gone',
      'job_gone',
      async () => {
        const { menu, key } = await draftForm();
        await records().delete(key);
        return () => h.discord.submitModal(menu, { prompt: 'add a hat' });
      },
    ],
    [
      'the form of an “Edit image” draft another member opened',
      'not_requester',
      async () => {
        const { menu } = await draftForm();
        return () => h.discord.submitModal(menu, { prompt: 'not yours' }, { user: h.discord.newUser('mallory') });
      },
    ],
  ];

  it.each(FORMS)('%s: told privately, and one info line, the sender’s, with its code (%s)', async (_name, code, prepare) => {
    const send = await prepare();
    const [lines, sent] = [h.logger.entries.length, h.emulator.requests.length];
    const ix = send();
    await privateNoteOf(h, ix);
    expect(h.logger.entries.slice(lines).filter((e) => (e.obj as { code?: string }).code === code)).toEqual([
      expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'discord', scopeId: h.discord.guildId, userId: ix.user.id }) }),
    ]);
    expect(h.emulator.requests).toHaveLength(sent);
  });
});

/**
 * A press refused for who pressed it (a private server job's member, pressing its message in their DM, who is no
 * longer in that server) or for a button that does nothing any more (one from an older version of the bot, whose
 * custom_id it no longer reads, or that names no action a button has) is told to the presser privately and is one line
 * in the operator's log, by the runner's one rule: the presser's, info, with its code.
 */
describe('a press refused for who pressed it or for a button that does nothing any more, in the operator’s log', () => {
  let h: DiscordHarness;
  beforeAll(async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 1500 } });
  });
  afterAll(async () => {
    await h.close();
  });

  /** The lines since `from` with `code`. */
  const linesWith = (from: number, code: string) => h.logger.entries.slice(from).filter((e) => (e.obj as { code?: string }).code === code);

  /** `result` as an older version of the bot left it: one button, `customId`. */
  const withButton = (result: FakeMessage, customId: string): FakeMessage => ({ ...result, components: [{ type: 1, components: [{ type: 2, style: 2, label: 'Zoom', custom_id: customId }] }] });

  it('the Reroll of a private server job, pressed in its member’s DM once they left that server: one info line (not_member), naming the server it counts in', async () => {
    const ada = h.discord.newUser('ada');
    const job = h.discord.slashCommand('imagine', { prompt: 'a private fox', quality: 'low', private: true }, { user: ada });
    await h.discord.waitFor(() => (h.discord.original(job)?.content.includes('Drawing') ? true : undefined), 'the job drawing');
    h.discord.expireToken(job.token);
    const posted = await h.discord.waitFor(() => h.discord.channelMessages(h.discord.dmChannelOf(ada.id)).find((m) => m.attachments.length > 0), 'its result in the DM', 20_000);
    // Kicked, banned or gone: Discord answers 10007 Unknown Member.
    h.discord.guildMembers.delete(ada.id);
    const [lines, sent] = [h.logger.entries.length, h.emulator.requests.length];

    const ix = h.discord.clickButton(posted, buttonId(posted, 'Reroll'), { user: ada, place: 'dm' });
    await privateNoteOf(h, ix);
    expect(linesWith(lines, 'not_member')).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'discord', scopeId: h.discord.guildId, userId: ada.id }) })]);
    expect(h.logger.entries.slice(lines).filter((e) => e.level !== 'info' && e.level !== 'debug')).toEqual([]);
    expect(h.emulator.requests).toHaveLength(sent);
  });

  it.each([
    ['whose custom_id this version no longer reads', (key: string) => `pictor:zoom:${key}`],
    ['whose custom_id names its job’s edit form, not a button', (key: string) => `pictor:edit-result:${key}:0`],
  ])('a button %s: told privately, and one info line, the presser’s (unknown_button)', async (_name, idOf) => {
    const made = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a red kite' }));
    const customId = idOf(buttonId(made, 'Reroll').split(':')[2]!);
    const result = withButton(made, customId);
    const [lines, sent] = [h.logger.entries.length, h.emulator.requests.length];
    const ix = h.discord.clickButton(result, customId);
    await privateNoteOf(h, ix);
    expect(linesWith(lines, 'unknown_button')).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'discord', scopeId: h.discord.guildId, userId: ix.user.id }) })]);
    expect(h.logger.entries.slice(lines).filter((e) => e.level !== 'info' && e.level !== 'debug')).toEqual([]);
    expect(h.emulator.requests).toHaveLength(sent);
  });
});
