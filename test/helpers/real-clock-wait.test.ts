import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeDiscord } from '../fakes/discord/FakeDiscord.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { waitOnRealClock } from './real-clock-wait.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('a wait on the real clock', () => {
  it('answers on a change of the fake’s at once, before its next look', async () => {
    const changes = new EventEmitter();
    let ready = false;
    const waited = waitOnRealClock(() => ready || undefined, 'the change', { timeoutMs: 2_000, changes, pollMs: 60_000 });
    ready = true;
    changes.emit('change');
    await expect(waited).resolves.toBe(true);
    expect(changes.listenerCount('change')).toBe(0);
  });

  it('fails with what it waited for while the test holds a fake clock and fakes Date, instead of hanging', async () => {
    vi.useFakeTimers();
    await expect(waitOnRealClock(() => undefined, 'nothing at all', { timeoutMs: 200 })).rejects.toThrow('timed out after 200 ms waiting for nothing at all');
  });

  it('fails with what its probe threw', async () => {
    const changes = new EventEmitter();
    const waited = waitOnRealClock(
      () => {
        if (changes.listenerCount('change') > 0) throw new Error('broken probe');
        return undefined;
      },
      'a probe that breaks',
      { timeoutMs: 2_000, changes },
    );
    changes.emit('change');
    await expect(waited).rejects.toThrow('broken probe');
  });
});

describe('the fakes’ waitFor, while a test holds a fake clock and fakes Date', () => {
  it('of Discord fails with what it waited for, instead of hanging', async () => {
    const discord = await FakeDiscord.start();
    try {
      vi.useFakeTimers();
      await expect(discord.waitFor(() => undefined, 'a message never sent', 200)).rejects.toThrow('timed out after 200 ms waiting for a message never sent');
    } finally {
      vi.useRealTimers();
      await discord.close();
    }
  });

  it('of Slack fails with what it waited for, instead of hanging', async () => {
    const slack = new FakeSlack();
    vi.useFakeTimers();
    await expect(slack.waitFor(() => undefined, 'a message never posted', 200)).rejects.toThrow('timed out after 200 ms waiting for a message never posted');
  });

  it('of Discord’s gateway fails with what it waited for, instead of hanging', async () => {
    const discord = await FakeDiscord.start();
    try {
      vi.useFakeTimers();
      await expect(discord.waitForReady(200)).rejects.toThrow('within 200 ms');
    } finally {
      vi.useRealTimers();
      await discord.close();
    }
  });
});
