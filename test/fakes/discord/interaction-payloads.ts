import type { APIAttachment, APIMessage, APIUser } from 'discord.js';

/** Who sends an interaction, and where. */
export interface InteractionContext {
  /**
   * Where it happens: a server the bot is installed in (`guild`), the user's DM with the bot (`dm`: context 1, no
   * guild, `user` instead of `member`), or a server where only the user installed the app (`user-install`: context 0,
   * the guild's id, but `authorizing_integration_owners` names only the user), or a group DM the user is in with
   * friends (`group-dm`: context 2 PRIVATE_CHANNEL, no guild, a channel of type 3 GROUP_DM, `user` instead of
   * `member`, the user's install only).
   */
  place: 'guild' | 'dm' | 'user-install' | 'group-dm';
  applicationId: string;
  guildId: string;
  channelId: string;
  user: APIUser;
  /** Role ids of the member. */
  roles: string[];
  /** The member's permission bits, as Discord sends them (a decimal string). */
  permissions: string;
  attachmentSizeLimit: number;
  /** The member's language in their Discord client (`locale`, e.g. `de`, `ja`, `en-US`). */
  locale: string;
  /** The server's language (`guild_locale`: its Community settings), sent with interactions in a server. */
  guildLocale: string;
  /**
   * In a server, the channel `channelId` is a thread or forum post of: the interaction's `channel` is then a public
   * thread (type 11) with this `parent_id`, as Discord sends it. Undefined: `channelId` is a text channel.
   */
  threadParentId?: string | undefined;
  /**
   * `authorizing_integration_owners` when it is not the one the place gives the user (`{'1': user}` where only the
   * user installed the app, `{'0': guild}` in a server that did): on a button or a form of a message, the owners of
   * the interaction that made the message — who authorized the app there, not who pressed it.
   */
  authorizingOwners?: Record<string, string> | undefined;
}

/** A role picked for a role option (type 8): Discord sends its id, and the role itself in `resolved.roles`. */
export interface RoleOptionValue {
  role: { id: string; name: string };
}

/** A channel picked in a channel option (type 7): Discord sends its id, and the channel in `resolved.channels`. */
export interface ChannelOption {
  channel: { id: string; name?: string | undefined; type?: number | undefined };
}

/** A slash-command option value: text, a whole number, a flag, a file (an attachment option), a role or a channel. */
export type OptionValue = string | number | boolean | APIAttachment | RoleOptionValue | ChannelOption;

const OPTION_SUBCOMMAND = 1;
const OPTION_STRING = 3;
const OPTION_ROLE = 8;
const OPTION_INTEGER = 4;
const OPTION_BOOLEAN = 5;
const OPTION_NUMBER = 10;
const OPTION_ATTACHMENT = 11;
const OPTION_CHANNEL = 7;

const EMBED_LINKS = 1n << 14n;
const ATTACH_FILES = 1n << 15n;
const MENTION_EVERYONE = 1n << 17n;
const USE_EXTERNAL_EMOJIS = 1n << 18n;

/** What a user-installed app may do in a channel of a server it is not in (Attach Files, Embed Links, Use External Emojis): it answers through the interaction only. */
const USER_INSTALL_APP_PERMISSIONS = String(ATTACH_FILES | EMBED_LINKS | USE_EXTERNAL_EMOJIS);
/** `app_permissions` in a DM or group DM with other users, as Discord documents it: Attach Files, Embed Links, Mention Everyone. */
export const GROUP_DM_APP_PERMISSIONS = String(ATTACH_FILES | EMBED_LINKS | MENTION_EVERYONE);
/** `app_permissions` in the user's DM with the bot: those of any DM, and Use External Emojis. */
export const BOT_DM_APP_PERMISSIONS = String(ATTACH_FILES | EMBED_LINKS | MENTION_EVERYONE | USE_EXTERNAL_EMOJIS);

function base(id: string, token: string, type: number, ctx: InteractionContext): Record<string, unknown> {
  const common = { id, application_id: ctx.applicationId, type, token, version: 1, channel_id: ctx.channelId, locale: ctx.locale, entitlements: [], attachment_size_limit: ctx.attachmentSizeLimit };
  if (ctx.place === 'dm') {
    return {
      ...common,
      channel: { id: ctx.channelId, type: 1, recipients: [ctx.user], flags: 0 },
      user: ctx.user,
      app_permissions: BOT_DM_APP_PERMISSIONS,
      authorizing_integration_owners: ctx.authorizingOwners ?? { '1': ctx.user.id },
      context: 1,
    };
  }
  if (ctx.place === 'group-dm') {
    return {
      ...common,
      channel: { id: ctx.channelId, type: 3, name: null, icon: null, owner_id: ctx.user.id, recipients: [ctx.user], flags: 0 },
      user: ctx.user,
      app_permissions: GROUP_DM_APP_PERMISSIONS,
      authorizing_integration_owners: ctx.authorizingOwners ?? { '1': ctx.user.id },
      context: 2,
    };
  }
  return {
    ...common,
    guild_id: ctx.guildId,
    channel:
      ctx.threadParentId === undefined
        ? { id: ctx.channelId, type: 0, guild_id: ctx.guildId, name: 'general' }
        : { id: ctx.channelId, type: 11, guild_id: ctx.guildId, parent_id: ctx.threadParentId, name: 'a thread', thread_metadata: { archived: false, auto_archive_duration: 1440, archive_timestamp: new Date(0).toISOString(), locked: false } },
    member: {
      user: ctx.user,
      roles: ctx.roles,
      permissions: ctx.permissions,
      joined_at: new Date(0).toISOString(),
      deaf: false,
      mute: false,
      flags: 0,
      nick: null,
      avatar: null,
    },
    app_permissions: ctx.place === 'user-install' ? USER_INSTALL_APP_PERMISSIONS : '2248473465835073',
    guild_locale: ctx.guildLocale,
    authorizing_integration_owners: ctx.authorizingOwners ?? (ctx.place === 'user-install' ? { '1': ctx.user.id } : { '0': ctx.guildId }),
    context: 0,
  };
}

export function chatInputPayload(
  ids: { id: string; token: string; commandId: string },
  name: string,
  options: Record<string, OptionValue>,
  ctx: InteractionContext,
): Record<string, unknown> {
  const attachments: Record<string, APIAttachment> = {};
  const roles: Record<string, Record<string, unknown>> = {};
  const channels: Record<string, Record<string, unknown>> = {};
  const opts = Object.entries(options).map(([optionName, value]) => {
    if (typeof value === 'object' && 'role' in value) {
      const { id, name } = value.role;
      roles[id] = { id, name, color: 0, hoist: false, icon: null, unicode_emoji: null, position: 1, permissions: '0', managed: false, mentionable: true, flags: 0 };
      return { name: optionName, type: OPTION_ROLE, value: id };
    }
    if (typeof value === 'object' && 'channel' in value) {
      const { id, name, type } = value.channel;
      channels[id] = { id, name: name ?? 'channel', type: type ?? 0, permissions: '2248473465835073', guild_id: ctx.guildId };
      return { name: optionName, type: OPTION_CHANNEL, value: id };
    }
    if (typeof value === 'object') {
      attachments[value.id] = value;
      return { name: optionName, type: OPTION_ATTACHMENT, value: value.id };
    }
    if (typeof value === 'boolean') return { name: optionName, type: OPTION_BOOLEAN, value };
    if (typeof value === 'number') return { name: optionName, type: Number.isInteger(value) ? OPTION_INTEGER : OPTION_NUMBER, value };
    return { name: optionName, type: OPTION_STRING, value };
  });
  // `imagine-admin budget`: a subcommand (option type 1) carrying the options.
  const [commandName, subcommand] = name.split(' ');
  return {
    ...base(ids.id, ids.token, 2, ctx),
    data: {
      id: ids.commandId,
      name: commandName,
      type: 1,
      options: subcommand ? [{ name: subcommand, type: OPTION_SUBCOMMAND, options: opts }] : opts,
      ...(Object.keys(attachments).length || Object.keys(roles).length || Object.keys(channels).length
        ? {
            resolved: {
              ...(Object.keys(attachments).length && { attachments }),
              ...(Object.keys(roles).length && { roles }),
              ...(Object.keys(channels).length && { channels }),
            },
          }
        : {}),
    },
  };
}

/**
 * An autocomplete interaction (type 4): the options typed so far, the one being typed marked `focused` (its value
 * the partial text, always a string as Discord sends it).
 */
export function autocompletePayload(
  ids: { id: string; token: string; commandId: string },
  name: string,
  options: Record<string, OptionValue>,
  focused: { name: string; value: string },
  ctx: InteractionContext,
): Record<string, unknown> {
  const command = chatInputPayload(ids, name, options, ctx) as { data: { options: Record<string, unknown>[] } } & Record<string, unknown>;
  const [, subcommand] = name.split(' ');
  const list = subcommand ? ((command.data.options[0]!.options as Record<string, unknown>[]) ?? []) : command.data.options;
  list.push({ name: focused.name, type: OPTION_STRING, value: focused.value, focused: true });
  return { ...command, ...base(ids.id, ids.token, 4, ctx), data: command.data };
}

export function messageCommandPayload(
  ids: { id: string; token: string; commandId: string },
  name: string,
  target: APIMessage,
  ctx: InteractionContext,
): Record<string, unknown> {
  return {
    ...base(ids.id, ids.token, 2, ctx),
    data: { id: ids.commandId, name, type: 3, target_id: target.id, resolved: { messages: { [target.id]: target } } },
  };
}

export function buttonPayload(ids: { id: string; token: string }, customId: string, message: APIMessage, ctx: InteractionContext): Record<string, unknown> {
  return { ...base(ids.id, ids.token, 3, ctx), data: { custom_id: customId, component_type: 2 }, message };
}

export function modalSubmitPayload(
  ids: { id: string; token: string },
  customId: string,
  components: unknown[],
  message: APIMessage | undefined,
  ctx: InteractionContext,
): Record<string, unknown> {
  return { ...base(ids.id, ids.token, 5, ctx), data: { custom_id: customId, components }, ...(message ? { message } : {}) };
}

interface ShownInput {
  type: number;
  custom_id?: string;
  required?: boolean;
  min_length?: number;
  max_length?: number;
}

/**
 * What Discord sends back for a modal: the same layout as shown (action rows
 * or labels), each text input with the value typed into it. Enforces what the
 * Discord client enforces before sending: required inputs and lengths.
 */
export function modalAnswers(shown: unknown[], values: Record<string, string>): unknown[] {
  const answer = (input: ShownInput) => {
    const id = input.custom_id ?? '';
    const value = values[id] ?? '';
    if ((input.required ?? true) && value === '') throw new Error(`the modal's input ${id} is required`);
    if (input.max_length !== undefined && value.length > input.max_length) throw new Error(`the modal's input ${id} takes at most ${input.max_length} characters`);
    if (input.min_length !== undefined && value !== '' && value.length < input.min_length) throw new Error(`the modal's input ${id} needs at least ${input.min_length} characters`);
    return { type: input.type, custom_id: id, value };
  };
  return (shown as { type: number; id?: number; components?: ShownInput[]; component?: ShownInput }[]).map((top) => {
    if (top.type === 1) return { type: 1, id: top.id, components: (top.components ?? []).map(answer) };
    if (top.type === 18 && top.component) return { type: 18, id: top.id, component: answer(top.component) };
    return { type: top.type, id: top.id };
  });
}
