/**
 * How long a Discord interaction's token answers and edits its replies: Discord's 15 minutes. The Discord surface knows
 * it as `DISCORD_LIMITS.interactionTokenMs`; it is kept here, in the state room, because the bots' state follows it
 * too — it keeps the ids of the interactions taken (`discord-interactions`) as long as one can still be taken — and the
 * state imports no surface.
 */
export const INTERACTION_TOKEN_MS = 15 * 60_000;

/**
 * How far ahead of this process's clock a Discord interaction may be stamped and still be taken: a minute, for clocks
 * that drift. The signature check (`SIGNATURE_TIMESTAMP_WINDOW.maxAheadMs`) and the age check allow it, and the bots'
 * state keeps an interaction's id that much longer than its token's life, so one stamped ahead stays taken as long as
 * it can be taken.
 */
export const INTERACTION_MAX_AHEAD_MS = 60_000;
