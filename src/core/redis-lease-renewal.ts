import type { Redis } from 'ioredis';

/**
 * KEYS[1] the lease; ARGV: its holder, its lifetime in ms, '1' to write it when gone. Extends it (`PEXPIRE`) while it
 * holds the holder, writes it (`SET … PX`) only when it is gone and ARGV[3] says so: 1 renewed or written, 0 another's
 * or gone. `PEXPIRE` is one of the commands a Redis at its `maxmemory` under `noeviction` still answers; a `SET` it
 * refuses ("OOM command not allowed"), so a full Redis refuses only the write of a lease it has already lost.
 */
const RENEW = `local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if held == false and ARGV[3] == '1' and redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
return 0`;

/**
 * One renewal of a lease kept in Redis (`key` holding `holder`, lasting `ttlMs` unless renewed): true when the key holds
 * `holder` for `ttlMs` from now. A key gone is written again only with `writeWhenGone` (else false), as is one that
 * holds another holder never (false). Renewing a lease that is there works on a Redis that is full (`noeviction`); a
 * lease gone cannot be written there, and the renewal rejects with Redis's OOM error.
 */
export async function renewLeaseKey(redis: Redis, lease: { key: string; holder: string; ttlMs: number; writeWhenGone?: boolean | undefined }): Promise<boolean> {
  return Number(await redis.eval(RENEW, 1, lease.key, lease.holder, String(lease.ttlMs), lease.writeWhenGone ? '1' : '0')) === 1;
}
