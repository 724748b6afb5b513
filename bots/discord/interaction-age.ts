import { SnowflakeUtil } from 'discord.js';
import { DISCORD_LIMITS } from './discord-facts.js';
import { SIGNATURE_TIMESTAMP_WINDOW } from './verify-signature.js';

const SNOWFLAKE = /^\d{1,20}$/;

/**
 * Whether an interaction can still be answered, from when it was made (its id is a snowflake, which carries
 * that time): `expired` once it is older than its token's life (15 minutes: nothing can be shown to the
 * member any more, and a result would have to be posted in the channel instead), `future` when it is stamped
 * further ahead than a drifting clock explains, `fresh` otherwise. Checked on every entry point (the gateway
 * and the interactions endpoint) before anything is claimed, reserved or sent.
 */
export function interactionAge(createdAt: number, now: number = Date.now()): 'fresh' | 'expired' | 'future' {
  if (now - createdAt >= DISCORD_LIMITS.interactionTokenMs) return 'expired';
  if (createdAt - now > SIGNATURE_TIMESTAMP_WINDOW.maxAheadMs) return 'future';
  return 'fresh';
}

/** When the interaction with this id was made (ms), or undefined when the id is not a snowflake. */
export function createdAtOf(id: string): number | undefined {
  return SNOWFLAKE.test(id) ? SnowflakeUtil.timestampFrom(id) : undefined;
}
