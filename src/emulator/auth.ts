import { timingSafeEqual } from 'node:crypto';

export type AuthOutcome = 'ok' | 'missing' | 'invalid';

/** Checks `Authorization: Bearer <key>` against the accepted keys. */
export function checkBearer(header: string | null, apiKeys: readonly string[]): AuthOutcome {
  if (!header || !header.trim()) return 'missing';
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
  if (!match) return 'invalid';
  const given = Buffer.from(match[1]!);
  return apiKeys.some((key) => sameBytes(given, Buffer.from(key))) ? 'ok' : 'invalid';
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
