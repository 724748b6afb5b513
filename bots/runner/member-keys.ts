import type { Platform } from './types.js';

/**
 * The one way a member and a server/workspace are named across Pictor: the spend ledger's user and scope keys, the
 * history's, the state's (`discord:<user id>`, `slack:<team id>`).
 */
export const userKeyOf = (r: { platform: Platform; userId: string }): string => `${r.platform}:${r.userId}`;
export const scopeKeyOf = (r: { platform: Platform; scopeId: string }): string => `${r.platform}:${r.scopeId}`;
