/** What a job runner reports, in the terms of `docs/metrics.md`. Every method is a counter bump or an observation. */
export interface JobMetrics {
  /** A job ended: `completed`, `failed` or `cancelled`; or was `refused` before anything was sent. */
  jobFinished(surface: string, outcome: 'completed' | 'failed' | 'cancelled' | 'refused'): void;
  /** A refusal by a cap or a per-user rule, by its code (`budget_account_daily`, `user_cooldown`, …). */
  refused(code: string): void;
  /** Images the service made (and the account paid for). */
  imagesMade(size: string, quality: string, count: number): void;
  /** USD settled for a job (its real cost, or what an interrupted job was charged). */
  spent(usd: number): void;
  /** A settle charged more than its job had reserved (the service reported a dearer job): by how many USD. */
  overReserved(overUsd: number): void;
  /** Time from submit to the request leaving the queue. */
  queueWait(seconds: number): void;
  /** Time from sending a request to the end of its answer. */
  requestDuration(operation: 'generate' | 'edit', streamed: boolean, seconds: number): void;
  /** A request was retried; `rate_limited` ones were a 429 from the service. */
  retried(code: string): void;
  /** A 429 from the service, retried or not. */
  rateLimited(): void;
  /** A chat platform refused a write of the bot (a 429, a 5xx, an error answer). */
  chatWriteRefused(platform: string): void;
}

/** Nothing recorded: what a runner uses when metrics are off. */
export const NO_METRICS: JobMetrics = {
  jobFinished() {},
  refused() {},
  imagesMade() {},
  spent() {},
  overReserved() {},
  queueWait() {},
  requestDuration() {},
  retried() {},
  rateLimited() {},
  chatWriteRefused() {},
};

/** `metrics` that also tell `onRefused` of every refused job (by its code): the ledger's refusal counts, the console's alerts. */
export function withRefusalListener(metrics: JobMetrics, onRefused: (code: string) => void): JobMetrics {
  return {
    ...metrics,
    refused(code) {
      metrics.refused(code);
      onRefused(code);
    },
  };
}
