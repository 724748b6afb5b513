import { describe, expect, it } from 'vitest';
import type { AuditPost, AuditPoster, JobIntent } from '../../../bots/runner/index.js';
import { requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();

/** A poster keeping what it was asked to post. */
function recordingPoster(): AuditPoster & { posts: AuditPost[] } {
  const posts: AuditPost[] = [];
  return { posts, maxEntries: 10, post: async (post) => (posts.push(post), { messageId: String(posts.length) }), edit: async () => undefined, greet: async () => undefined };
}

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
});
