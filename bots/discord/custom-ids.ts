import { DISCORD_LIMITS } from './discord-facts.js';

/**
 * Everything a button or modal needs is in its `custom_id`: an action and the
 * short key of a job record in the store (plus an image number), so buttons
 * keep working after a restart. Format: `pictor:<action>:<key>[:<index>]`.
 */

export const CUSTOM_ID_ACTIONS = ['reroll', 'edit', 'cancel', 'retry', 'edit-result', 'edit-message', 'delete'] as const;
export type CustomIdAction = (typeof CUSTOM_ID_ACTIONS)[number];

export interface CustomIdData {
  action: CustomIdAction;
  /** A job record's key. */
  key: string;
  /** Which output image (0-based), for `edit` and `edit-result`. */
  index?: number | undefined;
}

const PREFIX = 'pictor';
const KEY_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

export function encodeCustomId(data: CustomIdData): string {
  if (!KEY_PATTERN.test(data.key)) throw new RangeError(`a job key must be 1 to 32 URL-safe characters, got ${JSON.stringify(data.key)}`);
  const id = [PREFIX, data.action, data.key, ...(data.index === undefined ? [] : [String(data.index)])].join(':');
  if (id.length > DISCORD_LIMITS.customIdMaxLength) throw new RangeError('custom_id too long');
  return id;
}

/** Reads a custom_id of ours; undefined for anything else (another app's, an old format, garbage). */
export function decodeCustomId(customId: string): CustomIdData | undefined {
  const parts = customId.split(':');
  if (parts.length < 3 || parts.length > 4 || parts[0] !== PREFIX) return undefined;
  const action = parts[1] as CustomIdAction;
  const key = parts[2]!;
  if (!(CUSTOM_ID_ACTIONS as readonly string[]).includes(action) || !KEY_PATTERN.test(key)) return undefined;
  const needsIndex = action === 'edit' || action === 'edit-result';
  if (needsIndex !== (parts.length === 4)) return undefined;
  if (!needsIndex) return { action, key };
  const index = Number(parts[3]);
  if (!Number.isInteger(index) || index < 0 || index > 99 || String(index) !== parts[3]) return undefined;
  return { action, key, index };
}
