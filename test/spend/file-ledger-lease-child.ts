/**
 * A process of the file ledger's lease tests: reserves one job and marks it sent (its request may have reached the
 * service), tells its parent, and waits to be killed. argv: data folder, job id, estimate (USD).
 */
import { FileQuotaStore } from '../../src/internal.js';

const [dir, jobId, estimate] = process.argv.slice(2) as [string, string, string];
const store = new FileQuotaStore({ dir });
await store.open();
await store.reserve({ jobId, userKey: 'slack:U1', scopeKey: 'slack:T1', estimateUsd: Number(estimate), limits: {}, now: Date.now() });
await store.markSent(jobId);
process.send?.({ type: 'sent', pid: process.pid });
setInterval(() => undefined, 60_000);
