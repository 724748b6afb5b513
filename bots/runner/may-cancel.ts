import type { Requester } from './types.js';

/**
 * Who may cancel a job: the person who asked for it, or an admin of the same
 * Discord server / Slack workspace (never an admin of another one).
 */
export function mayCancel(owner: Requester, by: Requester): boolean {
  if (by.platform !== owner.platform) return false;
  if (by.userId === owner.userId) return true;
  return by.isAdmin === true && by.scopeId === owner.scopeId;
}
