import type { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import type { SlackConfig } from '../../../bots/slack/config.js';
import { startSlackBot } from '../../../bots/slack/start-slack-bot.js';
import { slackSurface } from '../../../bots/slack/surface.js';
import type { SurfaceContext } from '../../../bots/surface.js';

// The Slack surface's start, with a bot standing in for the Socket Mode one (Slack cannot run here). A file that
// replaces a module runs with a module graph of its own (vitest.lists.ts, INTEGRATION_MOCKS_MODULES).
vi.mock('../../../bots/slack/start-slack-bot.js', () => ({ startSlackBot: vi.fn() }));

describe('the Slack surface’s start', () => {
  it('stops the Socket Mode bot it started when joining the replicas fails, before it fails', async () => {
    // How a join fails in time when Redis does not answer is the join's own test (socket-replicas.test.ts); here Redis refuses it.
    const bot = { teamId: 'T10', botUserId: 'U10', connected: () => true, handOver: vi.fn(), stop: vi.fn(() => Promise.resolve()) };
    vi.mocked(startSlackBot).mockResolvedValue(bot as unknown as Awaited<ReturnType<typeof startSlackBot>>);
    const refusing = {
      defineCommand: vi.fn(),
      pictorSocketRenew: () => Promise.reject(new Error('READONLY You can’t write against a read only replica.')),
      pictorSocketLive: () => Promise.resolve(0),
      zrem: vi.fn(() => Promise.resolve(0)),
    } as unknown as Redis;
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const ctx = { runner: {}, state: { redis: { commands: refusing, config: { prefix: 'test' } } }, logger, onWriteRefused: undefined, print: vi.fn() } as unknown as SurfaceContext;
    await expect(slackSurface.start({ mode: 'socket', botToken: 'xoxb-1', appToken: 'xapp-1' } as SlackConfig, ctx)).rejects.toThrow('READONLY');
    expect(bot.stop).toHaveBeenCalledTimes(1);
  });
});
