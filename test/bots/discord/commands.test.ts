import { PermissionFlagsBits } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKGROUNDS, LIMITS, OUTPUT_FORMATS, QUALITIES, SIZES } from '../../../src/index.js';
import { commandDefinitions, deployCommands } from '../../../bots/discord/index.js';
import { SETTING_WORDS } from '../../../bots/runner/index.js';
import { FakeDiscord } from '../../fakes/discord/FakeDiscord.js';

type Option = { name: string; type: number; required?: boolean; choices?: { value: string }[]; min_value?: number; max_value?: number; autocomplete?: boolean; max_length?: number };
const byName = (name: string) => commandDefinitions().find((c) => c.name === name) as unknown as { name: string; type?: number; options?: Option[]; contexts?: number[] };

describe('command definitions', () => {
  it('define /imagine with choices taken from the spec’s constants', () => {
    const options = byName('imagine').options!;
    expect(options.map((o) => o.name)).toEqual(['prompt', 'size', 'quality', 'background', 'format', 'count', 'style', 'private']);
    // A house style of the server, offered as the member types (autocomplete: no fixed choices).
    expect(options.find((o) => o.name === 'style')).toMatchObject({ type: 3, autocomplete: true, max_length: 32 });
    expect(options.find((o) => o.name === 'private')).toMatchObject({ type: 5 });
    const values = (name: string) => options.find((o) => o.name === name)!.choices!.map((c) => c.value);
    expect(values('size')).toEqual([...SIZES]);
    expect(values('quality')).toEqual([...QUALITIES]);
    expect(values('background')).toEqual([...BACKGROUNDS]);
    expect(values('format')).toEqual([...OUTPUT_FORMATS]);
    expect(options.find((o) => o.name === 'count')).toMatchObject({ type: 4, min_value: LIMITS.nMin, max_value: LIMITS.nMax });
    expect(options[0]).toMatchObject({ name: 'prompt', required: true });
  });

  it('define /edit with one required and fifteen optional image attachments, within Discord’s 25 options', () => {
    const options = byName('edit').options!;
    expect(options.length).toBeLessThanOrEqual(25);
    const images = options.filter((o) => o.type === 11);
    expect(images.map((o) => o.name)).toEqual(Array.from({ length: LIMITS.editImagesMax }, (_, i) => `image${i + 1}`));
    expect(images.map((o) => o.required === true)).toEqual([true, ...Array(LIMITS.editImagesMax - 1).fill(false)]);
    expect(options.map((o) => o.name).slice(-6)).toEqual(['size', 'quality', 'background', 'format', 'style', 'private']);
  });

  it('define /imagine-settings for every member: their defaults with the same choices as /imagine, and clear', () => {
    const settings = byName('imagine-settings') as { options: Option[]; default_member_permissions?: string | null };
    expect(settings.options.map((o) => [o.name, o.type])).toEqual([['size', 3], ['quality', 3], ['format', 3], ['count', 4], ['private', 5], ['previews', 5], ['clear', 3]]);
    expect(settings.options.every((o) => o.required !== true)).toBe(true);
    expect(settings.options.find((o) => o.name === 'size')!.choices!.map((c) => c.value)).toEqual([...SIZES]);
    expect(settings.options.find((o) => o.name === 'clear')!.choices!.map((c) => c.value)).toEqual(['size', 'quality', 'format', 'count', 'private', 'previews', 'all']);
    expect(settings.default_member_permissions ?? null).toBeNull();
  });

  it('define /imagine-usage without options, for every member', () => {
    const usage = byName('imagine-usage') as { options?: unknown[]; default_member_permissions?: string | null };
    expect(usage.options ?? []).toEqual([]);
    expect(usage.default_member_permissions ?? null).toBeNull();
  });

  it('define /imagine-admin budget with the four caps a server admin may change, shown by default to Manage Server only', () => {
    const admin = byName('imagine-admin') as unknown as { default_member_permissions: string; options: { name: string; type: number; options: Option[] }[] };
    expect(admin.default_member_permissions).toBe(String(PermissionFlagsBits.ManageGuild));
    expect(admin.options.map((o) => [o.name, o.type])).toEqual([
      ['budget', 1],
      ['settings', 1],
      ['set', 1],
      ['repair', 1],
      ['style', 1],
      ['styles', 1],
      ['audit', 1],
    ]);
    const [cap, usd] = admin.options[0]!.options;
    expect(cap).toMatchObject({ name: 'cap', required: true });
    expect(cap!.choices!.map((c) => c.value)).toEqual(['user-daily', 'user-monthly', 'server-daily', 'server-monthly']);
    expect(usd).toMatchObject({ name: 'usd', type: 3 });
    // Required: a command sent without an amount must not lift a cap.
    expect(usd!.required).toBe(true);
  });

  it('define /imagine-admin audit with a text channel to choose, or off', () => {
    const admin = byName('imagine-admin') as unknown as { options: { name: string; options?: (Option & { channel_types?: number[] })[] }[] };
    const audit = admin.options.find((o) => o.name === 'audit')!;
    expect(audit.options!.map((o) => [o.name, o.type, o.required ?? false])).toEqual([
      ['channel', 7, false],
      ['off', 5, false],
    ]);
    // Text and announcement channels: where a bot can post a message.
    expect(audit.options![0]!.channel_types).toEqual([0, 5]);
  });

  it('define /imagine-admin set with every setting an admin may change and a required value', () => {
    const admin = byName('imagine-admin') as unknown as { options: { name: string; options?: Option[] }[] };
    const [setting, value] = admin.options.find((o) => o.name === 'set')!.options!;
    expect(setting!.choices!.map((c) => c.value)).toEqual(Object.keys(SETTING_WORDS));
    expect(value).toMatchObject({ name: 'value', type: 3, required: true });
  });

  it('define the “Edit image” message menu command, in servers only', () => {
    expect(byName('Edit image')).toMatchObject({ type: 3 });
    for (const c of commandDefinitions()) expect((c as { contexts?: number[] }).contexts).toEqual([0]);
  });

  // What Discord is sent for servers, as it is sent (JSON, its keys in order, one a line so a change reads as a diff): a
  // change of how a command is built shows here. After a deliberate change of a command or of its words, write it again
  // with `npx vitest run test/bots/discord/commands.test.ts -u` and review the diff.
  it('are sent to Discord as the payload kept beside this test', async () => {
    await expect(`${JSON.stringify(commandDefinitions(), null, 1)}\n`).toMatchFileSnapshot('./commands.payload.json');
  });

  it('are sent with user installs as for servers but for where they may be used (contexts, integration types)', () => {
    const asSentBesidesPlaces = (commands: object[]) => commands.map((command) => {
      const { contexts: _contexts, integration_types: _types, ...rest } = command as { contexts?: unknown; integration_types?: unknown };
      return JSON.stringify(rest);
    });
    expect(asSentBesidesPlaces(commandDefinitions(undefined, { userInstalls: true }))).toEqual(asSentBesidesPlaces(commandDefinitions()));
  });
});

describe('the deploy script', () => {
  let discord: FakeDiscord;
  beforeAll(async () => {
    discord = await FakeDiscord.start();
  });
  afterAll(async () => {
    await discord.close();
  });

  it('registers the commands in one server, asking Discord for the application id', async () => {
    const result = await deployCommands({ token: discord.botToken, guildId: discord.guildId, apiBaseUrl: discord.apiBaseUrl });
    expect(result).toEqual({ scope: 'guild', applicationId: discord.applicationId, names: ['imagine', 'edit', 'Edit image', 'imagine-usage', 'imagine-admin', 'imagine-history', 'imagine-settings'] });
    expect(discord.commands.get(discord.guildId)!.map((c) => c.name)).toEqual(['imagine', 'edit', 'Edit image', 'imagine-usage', 'imagine-admin', 'imagine-history', 'imagine-settings']);
    expect(discord.requests.filter((r) => r.route === 'current-application')).toHaveLength(1);
  });

  it('registers them globally with the given application id', async () => {
    const result = await deployCommands({ token: discord.botToken, applicationId: discord.applicationId, apiBaseUrl: discord.apiBaseUrl });
    expect(result.scope).toBe('global');
    expect(discord.commands.get('global')).toHaveLength(7);
  });

  it('fails with Discord’s answer when the token is wrong', async () => {
    await expect(deployCommands({ token: 'not-the-token', applicationId: discord.applicationId, apiBaseUrl: discord.apiBaseUrl })).rejects.toMatchObject({ status: 401 });
  });
});
