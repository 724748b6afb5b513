import { PermissionFlagsBits, type BaseInteraction } from 'discord.js';
import type { Requester } from '../runner/types.js';

/**
 * Who is asking, for the runner: user, channel, server (the budget scope), and
 * whether they count as an admin (a configured admin role, or the server's
 * Administrator permission).
 */
export function requesterOf(interaction: BaseInteraction, adminRoleIds: readonly string[]): Requester {
  const member = interaction.member;
  const roles: string[] = !member ? [] : Array.isArray(member.roles) ? member.roles : [...member.roles.cache.keys()];
  const hasAdminRole = roles.some((role) => adminRoleIds.includes(role));
  const isAdministrator = interaction.memberPermissions?.has(PermissionFlagsBits.Administrator) ?? false;
  return {
    platform: 'discord',
    userId: interaction.user.id,
    userName: interaction.user.username,
    channelId: interaction.channelId ?? '',
    scopeId: scopeOf(interaction),
    isAdmin: hasAdminRole || isAdministrator,
    roleIds: roles,
  };
}

/** The budget scope of an interaction: its server, or outside a server the user's DMs. */
export function scopeOf(interaction: BaseInteraction): string {
  return interaction.guildId ?? `dm:${interaction.user.id}`;
}

/**
 * Who may see the server's totals and change its budgets: an admin as for
 * `requesterOf` (a configured admin role, or Administrator), or a member with
 * Manage Server — the permission `/imagine-admin` asks for by default.
 */
export function budgetRequesterOf(interaction: BaseInteraction, adminRoleIds: readonly string[]): Requester {
  const requester = requesterOf(interaction, adminRoleIds);
  const managesServer = interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild) ?? false;
  return { ...requester, isAdmin: requester.isAdmin === true || managesServer };
}
