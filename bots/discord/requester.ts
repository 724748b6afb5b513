import { ChannelType, Events, InteractionContextType, PermissionFlagsBits, type BaseInteraction, type Client } from 'discord.js';
import { dmScopeId } from '../runner/index.js';
import type { Requester } from '../runner/types.js';

/**
 * Whether an interaction comes from the user's own context rather than a server the bot is installed in: a DM with
 * the bot (`context` 1), a group DM or another DM (2), or a server where only the user installed the app (`context`
 * 0, but `authorizing_integration_owners` has no guild install for that server). There the job is the user's own:
 * no server, roles or admins count, and the bot may not be able to post in the channel at all.
 */
export function isPersonalContext(interaction: Pick<BaseInteraction, 'context' | 'guildId' | 'authorizingIntegrationOwners'>): boolean {
  if (interaction.context === InteractionContextType.BotDM || interaction.context === InteractionContextType.PrivateChannel) return true;
  if (!interaction.guildId) return true;
  return interaction.authorizingIntegrationOwners.guildId !== interaction.guildId;
}

/** Threads and forum posts: Discord sends their channel with the channel it is in (`parent_id`). */
const THREAD_TYPES: readonly number[] = [ChannelType.AnnouncementThread, ChannelType.PublicThread, ChannelType.PrivateThread];

/** The channel each interaction made in a thread or forum post came from, as Discord sent it (kept while the interaction is). */
const threadParents = new WeakMap<BaseInteraction, string>();

/** The warning once a discord.js without the `InteractionCreate` action was met (`followThreadParents`): said once a process. */
let warnedNoAction = false;

/**
 * Makes `client` keep the channel a thread or forum post is in for each interaction made there. Discord sends it in
 * the interaction's `channel` (`parent_id`), but discord.js keeps only the channel's id on the interaction, and a
 * client with no gateway intents caches no channel to look it up in (not even with `Partials.Channel`: a thread
 * needs its server cached), nor does it give the interaction's raw data to its handlers: no public way reads it. Every
 * interaction, from the gateway or over HTTP, is built by the client's internal `InteractionCreate` action, which
 * emits `interactionCreate` as it builds one, so that action is wrapped. A discord.js without it (a later version
 * that renamed it) does not stop the bot: its first interaction warns once through the client's `warn` event, and
 * interactions made in threads are then read through `interaction.channel` alone, which is not cached without intents,
 * so a channels rule refuses them there, as it did before threads were followed.
 */
export function followThreadParents(client: Client): void {
  const action = (client as unknown as { actions?: { InteractionCreate?: { handle?: (data: unknown) => unknown } } }).actions?.InteractionCreate;
  if (typeof action?.handle !== 'function') {
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
  let parent: string | undefined;
  client.prependListener(Events.InteractionCreate, (interaction) => {
    if (parent !== undefined) threadParents.set(interaction, parent);
  });
  action.handle = (data: unknown) => {
    parent = threadParentOf(data);
    try {
      return handle(data);
    } finally {
      parent = undefined;
    }
  };
}

function threadParentOf(data: unknown): string | undefined {
  const channel = (data as { channel?: { type?: unknown; parent_id?: unknown } } | null)?.channel;
  return channel && THREAD_TYPES.includes(channel.type as number) && typeof channel.parent_id === 'string' ? channel.parent_id : undefined;
}

/**
 * Who is asking, for the runner: user, channel, server (the budget scope), and
 * whether they count as an admin (a configured admin role, or the server's
 * Administrator permission).
 */
export function requesterOf(interaction: BaseInteraction, adminRoleIds: readonly string[]): Requester {
  const who = {
    platform: 'discord' as const,
    userId: interaction.user.id,
    userName: interaction.user.username,
    channelId: interaction.channelId ?? '',
    parentChannelId: threadParents.get(interaction) ?? (interaction.channel?.isThread() ? (interaction.channel.parentId ?? undefined) : undefined),
    scopeId: scopeOf(interaction),
    locale: interaction.locale,
  };
  // The user's own jobs: no server, so no roles and no admin (a role of a server the bot is not in means nothing here).
  if (isPersonalContext(interaction)) return { ...who, isAdmin: false, roleIds: [] };
  const member = interaction.member;
  // Roles not sent are unknown, not none: the least generous role budget applies then (`memberLimits`), never the server's.
  const roles: string[] | undefined = !member ? undefined : Array.isArray(member.roles) ? member.roles : [...member.roles.cache.keys()];
  const hasAdminRole = (roles ?? []).some((role) => adminRoleIds.includes(role));
  const isAdministrator = interaction.memberPermissions?.has(PermissionFlagsBits.Administrator) ?? false;
  return { ...who, isAdmin: hasAdminRole || isAdministrator, roleIds: roles };
}

/**
 * The language of what the bot posts for everyone in the channel (a job's reply, its buttons, its result): the
 * server's (`guild_locale`), so everyone who reads the channel reads one language; outside a server (DMs, user
 * installs) the member's own. Private answers are in the member's language (`interaction.locale`).
 */
export function publicLocaleOf(interaction: Pick<BaseInteraction, 'guildLocale' | 'locale' | 'context' | 'guildId' | 'authorizingIntegrationOwners'>): string {
  return isPersonalContext(interaction) ? interaction.locale : (interaction.guildLocale ?? interaction.locale);
}

/** The budget scope of an interaction: its server, or in the user's own context (`isPersonalContext`) the user's own scope. */
export function scopeOf(interaction: BaseInteraction): string {
  return isPersonalContext(interaction) ? dmScopeId(interaction.user.id) : interaction.guildId!;
}

/**
 * Who may see the server's totals and change its budgets: an admin as for
 * `requesterOf` (a configured admin role, or Administrator), or a member with
 * Manage Server — the permission `/imagine-admin` asks for by default.
 */
export function budgetRequesterOf(interaction: BaseInteraction, adminRoleIds: readonly string[]): Requester {
  const requester = requesterOf(interaction, adminRoleIds);
  const managesServer = !isPersonalContext(interaction) && (interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild) ?? false);
  return { ...requester, isAdmin: requester.isAdmin === true || managesServer };
}
