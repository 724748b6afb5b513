import type { APIAttachment, APIMessage, APIUser } from 'discord.js';

/** A file as the fake stores it: the API object plus its bytes (served by the fake CDN). */
export interface FakeAttachment {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  url: string;
  bytes: Buffer;
}

/** What a message looked like after one create or edit. */
export interface MessageSnapshot {
  at: number;
  /** How it got there. */
  via: 'callback' | 'webhook' | 'followup' | 'channel';
  content: string;
  components: unknown[];
  /** The files it showed (the bytes are the uploaded ones, not copies). */
  attachments: { filename: string; size: number; contentType: string; bytes: Buffer }[];
}

export interface FakeMessage {
  id: string;
  channelId: string;
  guildId: string | undefined;
  authorId: string;
  content: string;
  components: unknown[];
  flags: number;
  attachments: FakeAttachment[];
  /** Its embeds as sent (Discord's `embeds`: at most 10, 6,000 characters of text together). */
  embeds: Record<string, unknown>[];
  allowedMentions: unknown;
  /** The interaction whose response (or follow-up) this is. */
  interactionId: string | undefined;
  createdAt: number;
  editedAt: number | undefined;
  /** Every state the message went through, first to last. */
  history: MessageSnapshot[];
}

export const MESSAGE_FLAG_EPHEMERAL = 1 << 6;
export const MESSAGE_FLAG_LOADING = 1 << 7;

export function apiUser(user: { id: string; username: string; bot?: boolean }): APIUser {
  return {
    id: user.id,
    username: user.username,
    global_name: user.username,
    discriminator: '0',
    avatar: null,
    ...(user.bot ? { bot: true } : {}),
  };
}

export function apiAttachment(a: FakeAttachment): APIAttachment {
  return { id: a.id, filename: a.filename, size: a.size, url: a.url, proxy_url: a.url, content_type: a.contentType };
}

/**
 * A message as the API shows it. `madeBy`: the interaction it answers (its response or a follow-up), shown as its
 * `interaction_metadata` (the interaction's id, type and user).
 */
export function apiMessage(message: FakeMessage, author: APIUser, madeBy?: { id: string; type: number; user: APIUser }): APIMessage {
  return {
    id: message.id,
    channel_id: message.channelId,
    author,
    content: message.content,
    timestamp: new Date(message.createdAt).toISOString(),
    edited_timestamp: message.editedAt === undefined ? null : new Date(message.editedAt).toISOString(),
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: message.attachments.map(apiAttachment),
    embeds: message.embeds as APIMessage['embeds'],
    pinned: false,
    type: 0,
    flags: message.flags,
    components: message.components as APIMessage['components'],
    ...(message.interactionId ? { webhook_id: author.id, application_id: author.id } : {}),
    ...(madeBy && { interaction_metadata: { id: madeBy.id, type: madeBy.type, user: madeBy.user, authorizing_integration_owners: {} } as APIMessage['interaction_metadata'] }),
  };
}

export function snapshotOf(message: FakeMessage, via: MessageSnapshot['via'], at: number): MessageSnapshot {
  return {
    at,
    via,
    content: message.content,
    components: structuredClone(message.components),
    attachments: message.attachments.map((a) => ({ filename: a.filename, size: a.size, contentType: a.contentType, bytes: a.bytes })),
  };
}
