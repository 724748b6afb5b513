/**
 * How long a `/healthz` check, or a `/metrics` series read from a backend (Redis, the spend ledger), may take: a
 * check not answered by then counts as failed, a series not read by then is left out of that scrape. One bound for
 * both, so a probe and a scrape (Prometheus gives up after 10 s by default) are answered in time while Redis hangs.
 */
export const BACKEND_WAIT_MS = 3_000;
