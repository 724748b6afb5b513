import { INTERACTION_TOKEN_MS } from '../state/interaction-token.js';

/**
 * Discord's platform facts this surface builds on (wire-format.md, "Discord"),
 * kept in one place so a change on Discord's side is a change here (the token's
 * life, which the bots' state follows too, is `state/interaction-token.ts`'s).
 */

export const DISCORD_API_BASE_URL = 'https://discord.com/api';

/** Hosts Discord serves attachments from; anything else is refused. */
export const DISCORD_CDN_HOSTS = ['cdn.discordapp.com', 'media.discordapp.net'] as const;

export const DISCORD_LIMITS = {
  optionsPerCommand: 25,
  filesPerMessage: 10,
  contentChars: 2000,
  /** A bot's per-file upload limit when the interaction does not say (`attachment_size_limit`): read it with `attachmentLimitOf`. */
  defaultAttachmentBytes: 10 * 1024 * 1024,
  /**
   * The most bytes of one request that sends a message, its files and the rest together, whatever the limit of one
   * file (Create Message, "Limitations": "The maximum request size when sending a message is 25 MiB").
   */
  requestBytes: 25 * 1024 * 1024,
  /** An interaction must be answered (or deferred) within this. */
  acknowledgeMs: 3000,
  /** An interaction token can edit its replies for this long. */
  interactionTokenMs: INTERACTION_TOKEN_MS,
  stringOptionMaxLength: 6000,
  textInputMaxLength: 4000,
  customIdMaxLength: 100,
  buttonsPerRow: 5,
  rowsPerMessage: 5,
  choicesPerOption: 25,
  /** Characters of a choice's name (a command option's choices, an autocomplete answer's). */
  choiceNameLength: 100,
  /** Embeds in one message, and the characters of text of all of them together. */
  embedsPerMessage: 10,
  embedChars: 6000,
  /**
   * How long after its first send a message with an enforced nonce is sent again with it: Discord answers one with the
   * nonce of a message the bot made "in the past few minutes" with that message (Create Message, `enforce_nonce`), so not
   * longer than the least that may mean. Every send of one nonce, discord.js's own tries included, is within it.
   */
  nonceKeptMs: 2 * 60_000,
} as const;

/**
 * The upload limit of one file (bytes) for an interaction — or for what it left: a job's record keeps the limit its
 * images were fitted to — its `attachmentSizeLimit` (Discord's `attachment_size_limit`), or Discord's default for a bot
 * (`DISCORD_LIMITS.defaultAttachmentBytes`) where there is none or it is no size (0, negative, not a finite number).
 */
export function attachmentLimitOf(source: { attachmentSizeLimit?: number | undefined } | undefined): number {
  const limit = source?.attachmentSizeLimit;
  return limit !== undefined && Number.isFinite(limit) && limit > 0 ? limit : DISCORD_LIMITS.defaultAttachmentBytes;
}

/**
 * Room kept in a request of files for the rest of it: its words (2000 characters), buttons, attachment list and each
 * file's multipart headers — a few KiB at most, kept generously.
 */
export const REQUEST_ROOM_BYTES = 64 * 1024;

/**
 * The most bytes of one file the bot uploads (what its images are fitted to, and packed by): the interaction's
 * upload limit of one file (`attachmentLimitOf`), but never more than one request that sends a message takes, less
 * the room for the rest of it. In a boosted server `attachment_size_limit` is 50 or 100 MiB, while Create Message
 * documents 25 MiB for the whole request; some report that Discord takes larger bodies there, but nothing Discord
 * documents says so, and a file it refuses is a paid image shrunk late, or lost. So the documented 25 MiB it is: a
 * file larger than that is re-encoded before it is sent, and its message says so.
 */
export function uploadLimitOf(source: { attachmentSizeLimit?: number | undefined } | undefined): number {
  return Math.min(attachmentLimitOf(source), DISCORD_LIMITS.requestBytes - REQUEST_ROOM_BYTES);
}

/** JSON error codes Discord answers with that this surface handles. */
export const DISCORD_ERRORS = {
  unknownMessage: 10008,
  unknownWebhook: 10015,
  /** Answered too late (after 3 s), or the interaction is gone. */
  unknownInteraction: 10062,
  requestEntityTooLarge: 40005,
  /** Someone (perhaps an earlier try of ours) already answered the interaction. */
  alreadyAcknowledged: 40060,
  unknownChannel: 10003,
  /** The user is not a member of that server (never was, left, was kicked or banned). */
  unknownMember: 10007,
  missingAccess: 50001,
  missingPermissions: 50013,
  /** The interaction token is older than 15 minutes. */
  invalidWebhookToken: 50027,
  /** An interaction only the user's install authorized has sent its 5 follow-ups. */
  maxFollowUps: 40094,
} as const;

/** Message flag: only the user who ran the command sees the message. */
export const EPHEMERAL_FLAG = 1 << 6;

/** `error.code` of a Discord API error (discord.js's DiscordAPIError), else undefined. */
export function discordErrorCode(error: unknown): number | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' && typeof (error as { status?: unknown }).status === 'number' ? code : undefined;
}

/** HTTP status of a Discord API error, else undefined. */
export function discordErrorStatus(error: unknown): number | undefined {
  if (!(error instanceof Error)) return undefined;
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
}
