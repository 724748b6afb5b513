import { ChannelType, Events, type BaseInteraction, type Client } from 'discord.js';
import type { AnswerBudget } from '../runner/answer-budget.js';
import { answerBudgetOf } from './answer-budget.js';

/**
 * The one place that reaches into discord.js's internals: its `InteractionCreate` action (`client.actions`), which
 * builds every interaction — from the gateway's INTERACTION_CREATE, or from a payload POSTed to the interactions
 * endpoint — and emits `interactionCreate` as it builds it. Two needs have no public API:
 * - building interactions from payloads received over HTTP (interactions-endpoint.ts), as the gateway's are, so
 *   commands, buttons and modals run the same code either way;
 * - what Discord sent that discord.js drops: the channel a thread or forum post is in (`channel.parent_id`). discord.js
 *   keeps only the channel's id on the interaction, and a client with no gateway intents caches no channel to look it
 *   up in (not even with `Partials.Channel`: a thread needs its server cached), nor gives its handlers the raw data.
 * So the action's `handle` is wrapped, once a client, and what it saw of each interaction it built is kept for it (as
 * long as the interaction is): its thread's channel, and its answer budget, from when it arrived (answer-budget.ts).
 *
 * A discord.js without that action (a later version that renamed it) does not stop a gateway bot: its first interaction
 * warns once through the client's `warn` event, and interactions made in threads are then read through
 * `interaction.channel` alone, which is not cached without intents, so a channels rule refuses them there. Over HTTP
 * nothing could be built: the endpoint does not start (`interactionDispatcher` throws).
 */
export function hookInteractionAction(client: Client): void {
  if (hooked.has(client)) return;
  hooked.add(client);
  const action = actionOf(client);
  if (!action) {
    client.prependOnceListener(Events.InteractionCreate, () => {
      if (warnedNoAction) return;
      warnedNoAction = true;
      client.emit(
        Events.Warn,
        'this discord.js has no InteractionCreate action to read the channel a thread is in: a channels rule refuses jobs asked in threads and forum posts of an allowed channel',
      );
    });
    return;
  }
  const handle = action.handle.bind(action);
  /** The data `handle` is building an interaction from, and the budget it came with (over HTTP). */
  let building: { data: unknown; budget: AnswerBudget | undefined } | undefined;
  client.prependListener(Events.InteractionCreate, (interaction) => {
    // The gateway's arrive as they are built; an endpoint's arrived when its POST did, and come with their budget.
    answerBudgetOf(interaction, building?.budget);
    const parent = threadParentIn(building?.data);
    if (parent !== undefined) threadParents.set(interaction, parent);
  });
  action.handle = (data: unknown) => {
    const outer = building;
    building = { data, budget: nextBudget.get(client) };
    nextBudget.delete(client);
    try {
      return handle(data);
    } finally {
      building = outer;
    }
  };
}

/**
 * Builds interactions from payloads received over HTTP with `client`'s own action, as the gateway's are (see
 * `hookInteractionAction`), each with the answer budget it arrived with. Throws when this discord.js has no such action.
 */
export function interactionDispatcher(client: Client): (payload: object, budget: AnswerBudget) => void {
  const action = actionOf(client);
  if (!action) throw new Error('this discord.js version has no InteractionCreate action to build interactions from HTTP payloads');
  hookInteractionAction(client);
  return (payload, budget) => {
    nextBudget.set(client, budget);
    try {
      action.handle(payload);
    } finally {
      nextBudget.delete(client);
    }
  };
}

/** The channel a thread or forum post is in, for an interaction made there, as Discord sent it; else undefined. */
export function threadParentOf(interaction: BaseInteraction): string | undefined {
  return threadParents.get(interaction);
}

type Action = { handle: (data: unknown) => unknown };

function actionOf(client: Client): Action | undefined {
  const action = (client as unknown as { actions?: { InteractionCreate?: Partial<Action> } }).actions?.InteractionCreate;
  return typeof action?.handle === 'function' ? (action as Action) : undefined;
}

/** Threads and forum posts: Discord sends their channel with the channel it is in (`parent_id`). */
const THREAD_TYPES: readonly number[] = [ChannelType.AnnouncementThread, ChannelType.PublicThread, ChannelType.PrivateThread];

function threadParentIn(data: unknown): string | undefined {
  const channel = (data as { channel?: { type?: unknown; parent_id?: unknown } } | null | undefined)?.channel;
  return channel && THREAD_TYPES.includes(channel.type as number) && typeof channel.parent_id === 'string' ? channel.parent_id : undefined;
}

const hooked = new WeakSet<Client>();
/** The channel each interaction made in a thread or forum post came from, as Discord sent it (kept while the interaction is). */
const threadParents = new WeakMap<BaseInteraction, string>();
/** The budget of the payload an endpoint is about to have built (`interactionDispatcher`). */
const nextBudget = new WeakMap<Client, AnswerBudget>();
/** The warning once a discord.js without the `InteractionCreate` action was met: said once a process. */
let warnedNoAction = false;
