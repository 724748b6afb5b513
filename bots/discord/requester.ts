import { InteractionContextType, PermissionFlagsBits, type BaseInteraction } from 'discord.js';
import { dmScopeId } from '../runner/index.js';
import type { Requester } from '../runner/types.js';
import { threadParentOf } from './interaction-action.js';

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
    parentChannelId: threadParentOf(interaction) ?? (interaction.channel?.isThread() ? (interaction.channel.parentId ?? undefined) : undefined),
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
