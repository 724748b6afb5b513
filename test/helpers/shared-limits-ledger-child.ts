/**
 * A process of the ledger race test: connects a RedisQuotaStore and, when its
 * parent says go, reserves one job per round at `startAt + round × spacingMs`
 * (the other racer fires at the same moments), each round against a budget
 * that only one of the racing processes can win.
 */
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';

interface Go {
  type: 'go';
  rounds: number;
  estimateUsd: number;
  userDailyUsd: number;
  startAt: number;
  spacingMs: number;
}

const sleepUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

const [url, prefix, name] = process.argv.slice(2) as [string, string, string];
const store = await RedisQuotaStore.connect({ url, prefix });

process.on('message', (message: Go) => {
  if (message.type !== 'go') return;
  void Promise.all(
    Array.from({ length: message.rounds }, async (_, round) => {
      await sleepUntil(message.startAt + round * message.spacingMs);
      return store.reserve({
        jobId: `${name}-${round}`,
        userKey: `racer:${round}`,
        scopeKey: 'racers',
        estimateUsd: message.estimateUsd,
        limits: { userDailyUsd: message.userDailyUsd },
        now: Date.now(),
      });
    }),
  ).then(async (results) => {
    process.send?.({ type: 'results', won: results.map((r) => r.ok) });
    await store.close();
    process.exit(0);
  });
});
process.send?.({ type: 'ready' });
