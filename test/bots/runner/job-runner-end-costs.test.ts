import { describe, expect, it, onTestFinished } from 'vitest';
import type { IntakeAnswers, JobIntent, JobRunner, Requester, UpdateSink } from '../../../bots/runner/index.js';
import { openBotState } from '../../../bots/state/index.js';
import { ImageLimiter } from '../../../src/index.js';
import { silentLogger } from '../../../src/internal.js';
import { recordingPoster, requester, useRunnerKit, waitUntil } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();

/** A runner keeping a history and an audit channel, whose posts wait for its shutdown. */
async function recordingRunner(options: { partialImages?: number; maxConcurrent?: number } = {}) {
  const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
  onTestFinished(() => state.close());
  const limiter = options.maxConcurrent === undefined ? undefined : new ImageLimiter({ maxConcurrent: options.maxConcurrent });
  const { runner, store } = await kit.runner({ partialImages: options.partialImages ?? 0, history: state, auditBatchMs: 60_000, ...(limiter && { clientOptions: { limiter } }) });
  const poster = recordingPoster();
  runner.audit.setPoster('discord', poster);
  await runner.policy.set(requester({ isAdmin: true, locale: 'en' }), 'auditChannel', { channelId: 'C-audit' });
  return { runner, store, poster };
}

const intent = (who: Requester, prompt: string): JobIntent => ({ kind: 'generate', prompt, options: { quality: 'low', size: '1024x1024' }, requester: who });

/** Answers that accept with `sink`, kept in the history under `key`. */
function keptAs(key: string, sink: UpdateSink = () => {}): IntakeAnswers {
  return { refuse: async () => {}, fail: async () => {}, accept: async () => ({ sink, historyKey: key }) };
}

/** The history entry and the audit entry of the job kept as `key`, once the runner stopped (which posts what waits). */
async function recordedEnd(runner: JobRunner, poster: ReturnType<typeof recordingPoster>, who: Requester, key: string) {
  await runner.shutdown({ graceMs: 0 });
  const entry = (await runner.history!.mine(who)).find((e) => e.key === key);
  const audit = poster.posts.flatMap((p) => p.entries).find((e) => e.type === 'job' && e.userId === who.userId);
  return { entry, audit };
}

describe('what the history and the audit channel say a failed or cancelled job cost', () => {
  it('a job cancelled after it was sent: what the ledger charged it, in its history entry and its audit entry', async () => {
    // The service sends one partial, then holds the rest until the request is aborted: the cancel comes while it is sent.
    kit.emu.emulator.injectFault('stalled_stream');
    const { runner, store, poster } = await recordingRunner({ partialImages: 2 });
    const who = requester();
    let jobId = '';
    const handle = await runner.request(
      intent(who, 'a kite cut loose'),
      keptAs('cancelled-sent', (update) => {
        if (update.type === 'partial') runner.cancel(jobId, who);
      }),
    );
    jobId = handle!.id;
    expect(await handle!.done).toMatchObject({ type: 'cancelled' });
    const charged = await store.spentToday(`discord:${who.userId}`, Date.now());
    expect(charged).toBeGreaterThan(0);

    const { entry, audit } = await recordedEnd(runner, poster, who, 'cancelled-sent');
    expect(entry).toMatchObject({ status: 'cancelled', costUsd: charged });
    expect(audit).toMatchObject({ status: 'cancelled', costUsd: charged });
  });

  it('a job whose stream was cut: what the ledger charged it, in its history entry and its audit entry', async () => {
    kit.emu.emulator.injectFault('reset_mid_stream');
    const { runner, store, poster } = await recordingRunner();
    const who = requester();
    const handle = await runner.request(intent(who, 'a kite in a storm'), keptAs('failed-sent'));
    expect(await handle!.done).toMatchObject({ type: 'failed' });
    const charged = await store.spentToday(`discord:${who.userId}`, Date.now());
    expect(charged).toBeGreaterThan(0);

    const { entry, audit } = await recordedEnd(runner, poster, who, 'failed-sent');
    expect(entry).toMatchObject({ status: 'failed', costUsd: charged });
    expect(audit).toMatchObject({ costUsd: charged });
    expect(audit!.status).toMatch(/^failed:/);
  });

  it('a job cancelled before it was sent cost nothing and says no cost', async () => {
    // The first job's request is held by the service until it is aborted: the second waits its turn for as long as it takes.
    kit.emu.emulator.injectFault('stalled_stream');
    const { runner, store, poster } = await recordingRunner({ maxConcurrent: 1 });
    const [alice, bob] = [requester(), requester()];
    const first = await runner.request(intent(alice, 'first in line'), keptAs('first'));
    const queued = await runner.request(intent(bob, 'second in line'), keptAs('released'));
    await waitUntil(() => runner.get(first!.id)?.status === 'running' && runner.get(queued!.id)?.status === 'queued', 'the second job waits');
    expect(runner.cancel(queued!.id, bob)).toBe(true);
    await queued!.done;
    expect(runner.cancel(first!.id, alice)).toBe(true);
    await first!.done;
    expect(await store.spentToday(`discord:${bob.userId}`, Date.now())).toBe(0);

    const { entry, audit } = await recordedEnd(runner, poster, bob, 'released');
    expect(entry).toMatchObject({ status: 'cancelled' });
    expect(entry).not.toHaveProperty('costUsd');
    expect(audit).toMatchObject({ status: 'cancelled' });
    expect(audit).not.toHaveProperty('costUsd');
  });
});
