const DISCORD_EPOCH = 1_420_070_400_000n;
let sequence = 0n;

/** A Discord-style id (19 digits) made from the current time, unique within this process. */
export function snowflake(at: number = Date.now()): string {
  sequence = (sequence + 1n) & 0xfffn;
  return (((BigInt(at) - DISCORD_EPOCH) << 22n) | (1n << 17n) | sequence).toString();
}

/** When a snowflake was made (ms since the epoch). */
export function timestampOf(id: string): number {
  return Number((BigInt(id) >> 22n) + DISCORD_EPOCH);
}
