/**
 * How long a Discord interaction's token answers and edits its replies: Discord's 15 minutes. The Discord surface knows
 * it as `DISCORD_LIMITS.interactionTokenMs`; it is kept here, outside the surface, because the bots' state follows it
 * too — it keeps the ids of the interactions taken (`discord-interactions`) as long as one can still be taken — and the
 * state imports no surface.
 */
export const INTERACTION_TOKEN_MS = 15 * 60_000;
