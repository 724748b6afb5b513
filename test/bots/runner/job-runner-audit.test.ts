import { describe, expect, it, vi } from 'vitest';
import type { JobIntent } from '../../../bots/runner/index.js';
import { recordingPoster, requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();

/** A poster keeping what it was asked to post. */
describe('the runner’s audit entries', () => {
  it('records an ended job once its answer was given, and a refusal by a rule, but not one by a typo; shutdown posts what waits', async () => {
    // A long batch: only the shutdown's flush posts within the test.
    const { runner } = await kit.runner({ auditBatchMs: 60_000 });
    const poster = recordingPoster();
    runner.audit.setPoster('discord', poster);
    const admin = requester({ isAdmin: true, locale: 'en' });
    await runner.policy.set(admin, 'auditChannel', { channelId: 'C-audit' });
    await runner.policy.set(admin, 'blockedWords', ['kraken']);
    const member = requester();
    const intent = (prompt: string, options = {}): JobIntent => ({ kind: 'generate', prompt, options, requester: member });

    const handle = await runner.submit(intent('a calm sea', { quality: 'low' }), () => undefined);
    await handle.done;
    await expect(runner.submit(intent('a kraken'), () => undefined)).rejects.toMatchObject({ code: 'blocked_word' });
    await expect(runner.submit(intent('a fox', { size: '13x13' }), () => undefined)).rejects.toMatchObject({ code: 'validation_error' });
    expect(poster.posts).toEqual([]);

    await runner.shutdown({ graceMs: 0 });
    expect(poster.posts).toHaveLength(1);
    expect(poster.posts[0]!.entries.map((e) => [e.type, e.status, e.prompt])).toEqual([
      ['job', 'completed', 'a calm sea'],
      ['refusal', 'blocked_word', 'a kraken'],
    ]);
    expect(poster.posts[0]).toMatchObject({ channelId: 'C-audit', scopeId: member.scopeId });
  });

  it('stops within its few seconds when the audit channel does not take the posts, and logs how many entries were not posted', async () => {
    const warnings: [Record<string, unknown>, string][] = [];
    const logger = { debug() {}, info() {}, warn: (o: Record<string, unknown>, m: string) => void warnings.push([o, m]), error() {} };
    const { runner } = await kit.runner({ auditBatchMs: 60_000, logger });
    // One entry a post, and posts that do not end until the test is over.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    runner.audit.setPoster('discord', { maxEntries: 1, post: async () => (await held, { messageId: '1' }), edit: async () => undefined, greet: async () => undefined });
    await runner.policy.set(requester({ isAdmin: true }), 'auditChannel', { channelId: 'C-audit' });
    await runner.policy.set(requester({ isAdmin: true }), 'blockedWords', ['kraken']);
    const member = requester();
    for (let i = 0; i < 3; i++) await expect(runner.submit({ kind: 'generate', prompt: `kraken ${i}`, options: {}, requester: member }, () => undefined)).rejects.toMatchObject({ code: 'blocked_word' });

    vi.useFakeTimers();
    try {
      const stopped = runner.shutdown({ graceMs: 0 });
      await vi.advanceTimersByTimeAsync(60_000);
      await stopped;
      // The first post hangs; the two entries behind it were not posted.
      expect(warnings.find(([, m]) => m.startsWith('audit entries were not posted'))?.[0]).toMatchObject({ entries: 2 });
    } finally {
      vi.useRealTimers();
      release();
    }
  });
});
