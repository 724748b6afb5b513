import { Client, Events, type BaseInteraction } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { hookInteractionAction } from '../../../bots/discord/interaction-action.js';
import { requesterOf } from '../../../bots/discord/requester.js';
import { chatInputPayload, type InteractionContext } from '../../fakes/discord/interaction-payloads.js';

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.destroy();
});

/** A client as the bot makes it: no gateway intents, so no channel is cached. */
function newClient(): Client {
  const client = new Client({ intents: [] });
  clients.push(client);
  return client;
}

type Action = { handle: (data: unknown) => unknown };
const actionOf = (client: Client) => (client as unknown as { actions: { InteractionCreate?: Action } }).actions;

function context(threadParentId: string | undefined): InteractionContext {
  return {
    place: 'guild',
    applicationId: '100000000000000001',
    guildId: '200000000000000001',
    channelId: '300000000000000002',
    user: { id: '400000000000000001', username: 'alice', discriminator: '0', global_name: 'Alice', avatar: null },
    roles: [],
    permissions: '0',
    attachmentSizeLimit: 10 * 1024 * 1024,
    locale: 'en-US',
    guildLocale: 'en-US',
    threadParentId,
  };
}

let serial = 0;
/** `/imagine` as Discord sends it, in a thread of `threadParentId` (undefined: in a text channel). */
function imagine(threadParentId: string | undefined): unknown {
  serial++;
  return chatInputPayload({ id: `5000000000000000${10 + serial}`, token: `token-${serial}`, commandId: '600000000000000001' }, 'imagine', { prompt: 'a cat' }, context(threadParentId));
}

/** The interactions `client` emits while `build` makes them from Discord's data. */
function interactionsOf(client: Client, build: (data: unknown) => unknown, payloads: unknown[]): BaseInteraction[] {
  const seen: BaseInteraction[] = [];
  client.on(Events.InteractionCreate, (interaction) => seen.push(interaction));
  for (const payload of payloads) build(payload);
  return seen;
}

describe('the client’s interaction hook (hookInteractionAction)', () => {
  it('keeps the channel a thread is in for an interaction made there, which discord.js alone does not', () => {
    const client = newClient();
    hookInteractionAction(client);
    const action = actionOf(client).InteractionCreate!;
    const [inThread, inChannel] = interactionsOf(client, (data) => action.handle(data), [imagine('300000000000000001'), imagine(undefined)]);
    expect(inThread!.channel).toBeNull();
    expect(requesterOf(inThread!, []).parentChannelId).toBe('300000000000000001');
    expect(requesterOf(inChannel!, []).parentChannelId).toBeUndefined();
  });

  it('does not stop the bot when discord.js has no InteractionCreate action: it warns once, at the first interaction, and threads are read without their channel', () => {
    const warnings: string[] = [];
    const built: BaseInteraction[] = [];
    for (let i = 0; i < 2; i++) {
      const client = newClient();
      // A later discord.js, as the bot would meet it: the internal action renamed (the test keeps it to make interactions).
      const action = actionOf(client).InteractionCreate!;
      actionOf(client).InteractionCreate = undefined;
      expect(() => hookInteractionAction(client)).not.toThrow();
      client.on(Events.Warn, (message) => warnings.push(message));
      built.push(...interactionsOf(client, (data) => action.handle(data), [imagine('300000000000000001'), imagine('300000000000000001')]));
    }
    expect(built).toHaveLength(4);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/no InteractionCreate action/);
    expect(built.map((interaction) => requesterOf(interaction, []).parentChannelId)).toEqual([undefined, undefined, undefined, undefined]);
    expect(built.map((interaction) => requesterOf(interaction, []).channelId)).toEqual(Array.from({ length: 4 }, () => '300000000000000002'));
  });
});
