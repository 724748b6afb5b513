/**
 * A process of the spend tests, driven by its parent over IPC:
 * - `race`: reserves one job per round at `startAt + round × spacingMs` (the
 *   other racers fire at the same moments) against caps only one can win;
 * - `hold`: runs jobs through a JobRunner against an emulator and reports when
 *   the first is sent (the parent watches the service) and the second waits in the limiter, so the parent can kill it with SIGKILL.
 * - `burst`: reserves jobs `concurrent` at a time, without end, telling the
 *   parent each job id as soon as its reservation is answered.
 * - `settleBurst`: reserves, marks sent and settles jobs `concurrent` at a
 *   time, without end (each job's usage record and ledger change in flight
 *   together), telling the parent each job id once its settle is answered.
 * argv: store kind (`file` | `redis`), data folder or Redis URL, key prefix, name.
 */
import { JobRunner } from '../../bots/runner/index.js';
import { ImageLimiter, PictorClient } from '../../src/index.js';
import { FileQuotaStore, RedisQuotaStore, type QuotaStore, type SpendLimits } from '../../src/internal.js';

type Message =
  | { type: 'race'; rounds: number; estimateUsd: number; limits: SpendLimits; startAt: number; spacingMs: number; dayOfRound0: number }
  | { type: 'hold'; baseURL: string; apiKey: string; userId: string }
  | { type: 'burst'; concurrent: number }
  | { type: 'settleBurst'; concurrent: number };

const sleepUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

const [kind, where, prefix, name] = process.argv.slice(2) as ['file' | 'redis', string, string, string];
const store: QuotaStore = kind === 'redis' ? await RedisQuotaStore.connect({ url: where, prefix }, { leaseMs: 60_000 }) : new FileQuotaStore({ dir: where });

process.on('message', (message: Message) => {
  if (message.type === 'race') {
    void Promise.all(
      Array.from({ length: message.rounds }, async (_, round) => {
        await sleepUntil(message.startAt + round * message.spacingMs);
        const result = await store.reserve({
          jobId: `${name}-${round}`,
          userKey: `racer:${name}`,
          scopeKey: `scope:${name}`,
          estimateUsd: message.estimateUsd,
          limits: message.limits,
          // Each round counts for a UTC day of its own, so each is a race for the whole of that day's account cap.
          now: message.dayOfRound0 + round * 24 * 60 * 60_000,
        });
        return result.ok;
      }),
    ).then((won) => {
      // Stays alive (holding its reservations) until the parent kills it: a racer that exited would be a dead
      // process, whose unsent reservations the other may rightly release.
      process.send?.({ type: 'results', won });
    });
  }
  if (message.type === 'burst') {
    let next = 0;
    const one = async (): Promise<void> => {
      for (;;) {
        const jobId = `${name}-${next++}`;
        const result = await store.reserve({ jobId, userKey: `u${next % 5}`, scopeKey: 's', estimateUsd: 0.01, limits: {}, now: Date.now() });
        if (result.ok) process.send?.({ type: 'answered', jobId });
      }
    };
    for (let i = 0; i < message.concurrent; i++) void one();
  }
  if (message.type === 'settleBurst') {
    let next = 0;
    const one = async (): Promise<void> => {
      for (;;) {
        const jobId = `${name}-${next++}`;
        const job = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low' };
        const result = await store.reserve({ jobId, userKey: `cli:${name}`, scopeKey: 'cli', estimateUsd: 0.02, limits: {}, now: Date.now(), job });
        if (!result.ok) continue;
        await store.markSent(jobId);
        await store.settle(jobId, 0.01, { requestId: `req-${jobId}` });
        process.send?.({ type: 'settled', jobId });
      }
    };
    for (let i = 0; i < message.concurrent; i++) void one();
  }
  if (message.type === 'hold') {
    // One request at a time: the first job is sent (and stays in flight), the second waits in the limiter.
    const client = new PictorClient({ baseURL: message.baseURL, apiKey: message.apiKey, limiter: new ImageLimiter({ maxConcurrent: 1 }) });
    const runner = new JobRunner({ client, store, limits: { userConcurrentJobs: 2 }, partialImages: 0, minUpdateIntervalMs: 0 });
    const requester = { platform: 'discord' as const, userId: message.userId, channelId: 'c', scopeId: 'g' };
    void (async () => {
      const ids: string[] = [];
      for (const prompt of ['sent first', 'queued second']) {
        ids.push((await runner.submit({ kind: 'generate', prompt, options: { quality: 'low' }, requester }, () => {})).id);
      }
      process.send?.({ type: 'submitted', ids });
    })();
  }
});
process.send?.({ type: 'ready' });
