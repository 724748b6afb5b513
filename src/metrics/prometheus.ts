import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LoggerLike } from '../client/PictorClient.js';
import { withTimeout } from '../core/with-timeout.js';
import { BACKEND_WAIT_MS } from './backend-wait.js';
import type { JobMetrics } from './job-metrics.js';

/** Read when Prometheus scrapes: what is reserved and queued right now. */
export interface LiveReadings {
  reservedUsd(): number;
  queued(): number;
  /** Bytes of edit input images held: being fetched, queued, or sent and not yet taken by the service (the bots' `PICTOR_MAX_QUEUED_INPUT_MB` bound). */
  queuedInputBytes?(): number;
}

/** Read from the ledger when Prometheus scrapes: what the whole account spent (settled and reserved) against its caps. */
export interface LedgerReadings {
  spentUsd(period: 'day' | 'month'): Promise<number>;
  /** `PICTOR_ACCOUNT_DAILY_USD`, `PICTOR_ACCOUNT_MONTHLY_USD`; undefined: no cap (no series). */
  capUsd: { day: number | undefined; month: number | undefined };
}

export interface Metrics extends JobMetrics {
  readonly registry: Registry;
  /** Where the gauges read from (the job runner, once it exists). */
  watch(readings: LiveReadings): void;
  /** The spend ledger had lost a reservation this process held (Redis restarted empty, a flush): put back or charged all the same. */
  reservationLost(): void;
  /** Where the spend-against-caps gauges read from (the ledger, once it is open). */
  watchLedger(readings: LedgerReadings): void;
}

export interface MetricsOptions {
  /** Told once per streak when a series read from the ledger is late or fails (left out of the scrape), and when it is back. */
  logger?: Pick<LoggerLike, 'info' | 'warn'> | undefined;
  /** How long a scrape waits for the ledger before it leaves its series out. Default `BACKEND_WAIT_MS` (3 s), the bound of `/healthz`'s checks. */
  backendWaitMs?: number | undefined;
}

/**
 * The service's Prometheus metrics, in a registry of its own (two services in
 * one process, or tests, never share counters), with Node's process metrics
 * under the same `pictor_` prefix. Labels are bounded: surfaces, outcomes,
 * codes, sizes and qualities — never users, prompts or ids. A series read from
 * a backend is bounded in time: a hung Redis leaves it out of the scrape
 * rather than holding the whole scrape (and `pictor_ready 0`) back.
 */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const { logger } = options;
  const backendWaitMs = options.backendWaitMs ?? BACKEND_WAIT_MS;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'pictor_' });
  const jobs = new Counter({ name: 'pictor_jobs_total', help: 'Jobs by surface and outcome (refused: before anything was sent).', labelNames: ['surface', 'outcome'], registers: [registry] });
  const refusals = new Counter({ name: 'pictor_refusals_total', help: 'Jobs refused by a spending cap or a per-user rule, by code.', labelNames: ['code'], registers: [registry] });
  const images = new Counter({ name: 'pictor_images_total', help: 'Images the service made, by size and quality.', labelNames: ['size', 'quality'], registers: [registry] });
  const spentUsd = new Counter({ name: 'pictor_spent_usd_total', help: 'US dollars settled for jobs (real cost, or the charge of an interrupted job).', registers: [registry] });
  const overReserved = new Counter({ name: 'pictor_over_reservation_total', help: 'Settles that charged more than their job had reserved (counted in full, past the caps).', registers: [registry] });
  const overReservedUsd = new Counter({ name: 'pictor_over_reservation_usd_total', help: 'US dollars charged beyond what their jobs had reserved.', registers: [registry] });
  let readings: LiveReadings | undefined;
  let ledger: LedgerReadings | undefined;
  /** The ledger read a late scrape left running: the next scrape waits on it rather than piling another on a hung Redis. */
  let spentRead: { from: LedgerReadings; read: Promise<[number, number]> } | undefined;
  let spentUnread = false;
  const readSpent = (from: LedgerReadings): Promise<[number, number]> => {
    if (spentRead?.from === from) return spentRead.read;
    const read = Promise.all([from.spentUsd('day'), from.spentUsd('month')]);
    const current = { from, read };
    spentRead = current;
    const done = () => {
      if (spentRead === current) spentRead = undefined;
    };
    read.then(done, done);
    return read;
  };
  new Gauge({
    name: 'pictor_account_spent_usd',
    help: 'US dollars the whole account spent this UTC day or month (settled, plus what running jobs reserved), read from the ledger every process shares.',
    labelNames: ['period'],
    registers: [registry],
    async collect() {
      if (!ledger) return;
      try {
        const [day, month] = await withTimeout(readSpent(ledger), backendWaitMs, `the ledger did not answer within ${backendWaitMs} ms`);
        this.set({ period: 'day' }, day);
        this.set({ period: 'month' }, month);
        if (spentUnread) logger?.info({ metric: 'pictor_account_spent_usd' }, 'the ledger answers /metrics again');
        spentUnread = false;
      } catch (error) {
        // No figure is better than an old one passed off as current: the series is absent until the ledger answers.
        this.reset();
        if (!spentUnread) {
          logger?.warn(
            { err: error, metric: 'pictor_account_spent_usd', waitMs: backendWaitMs },
            'could not read what the account spent for /metrics: the series is left out of each scrape until the ledger answers (said once until then)',
          );
        }
        spentUnread = true;
      }
    },
  });
  new Gauge({
    name: 'pictor_account_cap_usd',
    help: 'The account’s spending caps in US dollars (PICTOR_ACCOUNT_DAILY_USD, PICTOR_ACCOUNT_MONTHLY_USD); no series for a cap not set.',
    labelNames: ['period'],
    registers: [registry],
    collect() {
      if (ledger?.capUsd.day !== undefined) this.set({ period: 'day' }, ledger.capUsd.day);
      if (ledger?.capUsd.month !== undefined) this.set({ period: 'month' }, ledger.capUsd.month);
    },
  });
  new Gauge({
    name: 'pictor_reserved_usd',
    help: 'US dollars reserved right now for jobs queued or running (their upper-bound price).',
    registers: [registry],
    collect() {
      this.set(readings?.reservedUsd() ?? 0);
    },
  });
  new Gauge({
    name: 'pictor_queue_length',
    help: 'Jobs waiting for the throttle (queued, not yet sent).',
    registers: [registry],
    collect() {
      this.set(readings?.queued() ?? 0);
    },
  });
  new Gauge({
    name: 'pictor_queued_input_bytes',
    help: 'Bytes of edit input images held: by edits being fetched, waiting to be sent, or sent and not yet taken by the image service.',
    registers: [registry],
    collect() {
      this.set(readings?.queuedInputBytes?.() ?? 0);
    },
  });
  const queueWait = new Histogram({
    name: 'pictor_queue_wait_seconds',
    help: 'Time from submit to the request leaving the queue.',
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'pictor_request_duration_seconds',
    help: 'Time from sending a request to the end of its answer, by operation and whether it was streamed.',
    labelNames: ['operation', 'stream'],
    buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300, 600],
    registers: [registry],
  });
  const retries = new Counter({ name: 'pictor_retries_total', help: 'Requests sent again (never one that may have been billed), by the code of the failure.', labelNames: ['code'], registers: [registry] });
  const rateLimited = new Counter({ name: 'pictor_rate_limited_total', help: '429 answers from the image service.', registers: [registry] });
  const reservationsLost = new Counter({
    name: 'pictor_reservations_lost_total',
    help: 'Reservations the spend ledger had lost while their job ran (Redis restarted without its data, or was flushed): put back before sending, or charged at the settle all the same.',
    registers: [registry],
  });
  const chatRefused = new Counter({ name: 'pictor_chat_writes_refused_total', help: 'Writes of the bot the chat platform refused (429, 5xx, error answers), by platform.', labelNames: ['platform'], registers: [registry] });

  return {
    registry,
    watch(next) {
      readings = next;
    },
    watchLedger(next) {
      ledger = next;
    },
    jobFinished: (surface, outcome) => jobs.inc({ surface, outcome }),
    refused: (code) => refusals.inc({ code }),
    imagesMade: (size, quality, count) => images.inc({ size, quality }, count),
    spent: (usd) => usd > 0 && spentUsd.inc(usd),
    overReserved: (overUsd) => {
      overReserved.inc();
      if (overUsd > 0) overReservedUsd.inc(overUsd);
    },
    queueWait: (seconds) => queueWait.observe(seconds),
    requestDuration: (operation, streamed, seconds) => duration.observe({ operation, stream: String(streamed) }, seconds),
    retried: (code) => retries.inc({ code }),
    rateLimited: () => rateLimited.inc(),
    chatWriteRefused: (platform) => chatRefused.inc({ platform }),
    reservationLost: () => reservationsLost.inc(),
  };
}
