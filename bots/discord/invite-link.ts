import { OAuth2Scopes, PermissionFlagsBits, PermissionsBitField } from 'discord.js';

/** The scopes the bot is invited with: itself, and its slash commands. */
export const INVITE_SCOPES = [OAuth2Scopes.Bot, OAuth2Scopes.ApplicationsCommands] as const;

/**
 * The permissions the bot asks for, by name (README, "Setting up the Discord application"): only used when a job
 * outlives its 15-minute interaction token and its result is posted in the channel instead, and for the audit
 * channel's posts (their entries are embeds: Embed Links).
 */
export const INVITE_PERMISSIONS = new PermissionsBitField([
  PermissionFlagsBits.ViewChannel,
  PermissionFlagsBits.SendMessages,
  PermissionFlagsBits.SendMessagesInThreads,
  PermissionFlagsBits.AttachFiles,
  PermissionFlagsBits.EmbedLinks,
]).freeze();

/** The ready-to-click link that adds the bot of `applicationId` to a server, with the scopes and permissions above. */
export function inviteLink(applicationId: string): string {
  const query = new URLSearchParams({ client_id: applicationId, scope: INVITE_SCOPES.join(' '), permissions: INVITE_PERMISSIONS.bitfield.toString() });
  return `https://discord.com/oauth2/authorize?${query.toString()}`;
}
