import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { SocketReplicas } from '../../bots/slack/socket-replicas.js';
import { RedisStateStore } from '../../bots/state/RedisStateStore.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import type { RedisLink } from '../../src/internal.js';

/** Every Lua script the bots' Redis classes define (`defineCommand`), by name, read from a client that only records them. */
async function definedScripts(): Promise<Map<string, string>> {
  const scripts = new Map<string, string>();
  const recording = { defineCommand: (name: string, definition: { lua: string }) => void scripts.set(name, definition.lua) } as unknown as Redis;
  new SocketReplicas({ redis: recording, key: 'pictor:slack:socket-replicas:T1:U1' });
  new RedisQuotaStore({ redis: recording });
  // Its lease cannot be taken on a client that only records: opening fails once the scripts are defined.
  await RedisStateStore.open({ link: { commands: recording, config: { prefix: 'pictor' } } as unknown as RedisLink }).catch(() => undefined);
  return scripts;
}

const WRITES = /redis\.call\(\s*'(SET|DEL|HSET|HDEL|HINCRBY|INCR|INCRBY|ZADD|ZREM|ZREMRANGEBYSCORE|PEXPIRE|EXPIRE|XADD|RENAME|LPUSH|RPUSH|SADD|SREM)'/i;
const CALLS_TIME = /redis\.call\(\s*'TIME'\s*\)/i;

describe('the Lua scripts run on Redis', () => {
  it('replicate their commands, not themselves, whenever they read Redis’s clock and write (Redis before 5 refuses a write after TIME otherwise)', async () => {
    const scripts = await definedScripts();
    const timed = [...scripts].filter(([, lua]) => CALLS_TIME.test(lua) && WRITES.test(lua));
    expect(timed.map(([name]) => name)).toEqual(expect.arrayContaining(['pictorSocketRenew', 'pictorStatePut']));
    for (const [name, lua] of timed) expect({ name, start: lua.trimStart().split('\n')[0] }).toEqual({ name, start: 'redis.replicate_commands()' });
  });
});
