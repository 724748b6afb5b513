import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ChannelWriter } from '../../../bots/slack/ChannelWriter.js';
import { SharedWriteBuckets } from '../../../bots/slack/shared-write-buckets.js';
import { silentLogger } from '../../../src/internal.js';
import { connectRedis } from '../../../src/core/redis-connection.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';

const redis = testRedis();
const connections: Redis[] = [];
const prefixes: string[] = [];

/** Two replicas' writers on one Redis and prefix, each with its own connection. */
async function replicas(options: { perMinute?: number; burst?: number; headroom?: number; intervalMs?: number }): Promise<[ChannelWriter, ChannelWriter]> {
  const url = requireRedisUrl(redis);
  const prefix = uniquePrefix('slack-writes');
  prefixes.push(prefix);
  const make = async () => {
    const connection = await connectRedis(url);
    connections.push(connection);
    return new ChannelWriter({
      channelWriteIntervalMs: options.intervalMs ?? 1,
      progressWritesPerMinute: options.perMinute ?? 1,
      progressWritesBurst: options.burst,
      sharedHeadroom: options.headroom ?? 0,
      shared: new SharedWriteBuckets({ redis: connection, prefix, logger: silentLogger() }),
    });
  };
  return [await make(), await make()];
}

describe.skipIf(redis.skipReason)(`ChannelWriters of two replicas on one Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  it('share one workspace’s budget and never exceed it together, while another workspace keeps its own', async () => {
    // One token a minute, four saved up: four updates of T1 go now across both replicas, however they are spread.
    const [a, b] = await replicas({ perMinute: 1, burst: 4 });
    const done: string[] = [];
    const update = (writer: ChannelWriter, name: string, workspace: string, channel: string) =>
      void writer.write(channel, { budgeted: true, workspace, run: async () => void done.push(name) });
    for (let i = 0; i < 5; i++) {
      update(a, `a${i}`, 'T1', `CA${i}`);
      update(b, `b${i}`, 'T1', `CB${i}`);
    }
    for (let i = 0; i < 4; i++) update(b, `t2-${i}`, 'T2', `CT${i}`);
    await vi.waitFor(() => expect(done).toHaveLength(8), { timeout: 15_000 });
    expect(done.filter((d) => d.startsWith('t2-'))).toHaveLength(4);
    expect(a.pending + b.pending).toBe(6);
  });

  it('leave headroom for final updates: a replica’s progress stops short of the budget, another replica’s finals take the rest', async () => {
    const [a, b] = await replicas({ perMinute: 1, burst: 4, headroom: 2 });
    const done: string[] = [];
    for (let i = 0; i < 4; i++) void a.write(`CA${i}`, { budgeted: true, workspace: 'T1', run: async () => void done.push('progress') });
    await vi.waitFor(() => expect(done).toHaveLength(2), { timeout: 15_000 });
    for (let i = 0; i < 3; i++) void b.write(`CB${i}`, { budgeted: true, urgent: true, workspace: 'T1', run: async () => void done.push('final') });
    await vi.waitFor(() => expect(done).toHaveLength(4), { timeout: 15_000 });
    expect(done).toEqual(['progress', 'progress', 'final', 'final']);
    expect(a.pending + b.pending).toBe(3);
  });

  it('share each channel’s pace: one write to a channel at a time across the replicas', async () => {
    const [a, b] = await replicas({ intervalMs: 60_000 });
    const done: string[] = [];
    void a.write('C1', { run: async () => void done.push('a') });
    void b.write('C1', { run: async () => void done.push('b') });
    void b.write('C2', { run: async () => void done.push('other channel') });
    await vi.waitFor(() => expect(done).toHaveLength(2), { timeout: 15_000 });
    expect(done).toContain('other channel');
    expect(a.pending + b.pending).toBe(1);
  });
});

describe.skipIf(redis.skipReason)('a ChannelWriter whose Redis cannot be reached', () => {
  it('keeps writing with its own budget, and says so once', async () => {
    const connection = await connectRedis(requireRedisUrl(redis));
    connection.disconnect();
    const logger = { ...silentLogger(), warn: vi.fn() };
    const writer = new ChannelWriter({
      channelWriteIntervalMs: 1,
      progressWritesPerMinute: 1,
      progressWritesBurst: 2,
      shared: new SharedWriteBuckets({ redis: connection, prefix: uniquePrefix('slack-writes'), logger }),
    });
    const done: string[] = [];
    for (const channel of ['C1', 'C2', 'C3']) void writer.write(channel, { budgeted: true, workspace: 'T1', run: async () => void done.push(channel) });
    await vi.waitFor(() => expect(done).toHaveLength(2), { timeout: 15_000 });
    expect(writer.pending).toBe(1);
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });
});

afterAll(async () => {
  for (const connection of connections) connection.disconnect();
  if (!redis.skipReason) for (const prefix of prefixes) await deleteKeys(requireRedisUrl(redis), prefix);
});
