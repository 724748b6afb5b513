import { afterEach, describe, expect, it } from 'vitest';
import { finishedJob, startHarness, statusOf, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('Socket Mode', () => {
  it('connects through apps.connections.open with the app token and runs a command that arrives over the WebSocket', async () => {
    h = await startHarness({ mode: 'socket' });
    const { fake } = h;
    expect(fake.connectionsOpened).toBe(1);
    expect(fake.callsOf('apps.connections.open')[0]!.ok).toBe(true);

    const ack = await fake.command({ command: '/imagine', text: 'a lantern --quality low', channel: 'C0SOCKET' });
    expect(ack.body).toEqual({});
    const message = await finishedJob(fake, 'C0SOCKET');
    expect(statusOf(message)).toContain('Done · 1024x1024 · low');
    expect(h.bot.url).toBeUndefined();
  });

  it('acknowledges a bad flag over the WebSocket with the private explanation', async () => {
    h = await startHarness({ mode: 'socket' });
    const ack = await h.fake.command({ command: '/imagine', text: 'a lantern --n 11' });
    expect(ack.body).toMatchObject({ response_type: 'ephemeral' });
    expect((ack.body as { text: string }).text).toContain('`--n 11` is not allowed: --n takes an integer from 1 to 10');
    expect(h.emulator.requests).toEqual([]);
  });

  it('says it is connected while the WebSocket is open, and not while Slack cannot be reached', async () => {
    h = await startHarness({ mode: 'socket' });
    const { fake, bot } = h;
    expect(bot.connected()).toBe(true);

    // Slack stops handing out connections, then the socket breaks.
    fake.failNext('apps.connections.open', { status: 503, retryAfterSec: 30, count: 100 });
    fake.dropSocketConnections();

    await fake.waitFor(() => !bot.connected(), 'the bot to notice the lost connection');
    expect(bot.connected()).toBe(false);
  });
});
