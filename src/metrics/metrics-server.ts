import { createServer, type Server } from 'node:http';
import { Gauge, type Registry } from 'prom-client';
import { listenOn } from '../core/listen.js';
import { withTimeout } from '../core/with-timeout.js';
import { BACKEND_WAIT_MS } from './backend-wait.js';

/** One readiness check of `/healthz`: a surface connected, Redis answering. */
export type HealthCheck = () => boolean | Promise<boolean>;

export interface MetricsServerOptions {
  registry: Registry;
  /** Named checks; `/healthz` is 200 when every one passes, 503 otherwise. */
  checks: Record<string, HealthCheck>;
  /** Default 127.0.0.1: metrics show what the account spends, so they are not published unless the operator says so. */
  host?: string | undefined;
  /** 0 picks a free port. */
  port: number;
  /** A check that has not answered after this long counts as failed, so a probe is answered in time. Default `BACKEND_WAIT_MS` (3 s), the bound of every `/metrics` series read from a backend. */
  checkTimeoutMs?: number | undefined;
}

export interface MetricsServer {
  /** `http://host:port`, as it listens. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text format, from the registry) and
 * `GET /healthz` (`{"status":"ok"|"unavailable","checks":{name:bool}}`, 200 or
 * 503) for container orchestrators. Nothing else: other paths are 404, other
 * methods 405. Neither ever shows a secret, a user or a prompt.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  // Readiness as a metric too, for an alert rule: 1 when every check of /healthz passes.
  if (!options.registry.getSingleMetric('pictor_ready')) {
    new Gauge({
      name: 'pictor_ready',
      help: 'Whether this process is ready (every /healthz check passes): 1 or 0.',
      registers: [options.registry],
      async collect() {
        const results = await Promise.all(Object.values(options.checks).map((check) => passes(check, options.checkTimeoutMs ?? BACKEND_WAIT_MS)));
        this.set(results.every(Boolean) ? 1 : 0);
      },
    });
  }
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' && path !== '/healthz') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: try /metrics or /healthz\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('Method not allowed\n');
      return;
    }
    const answer = path === '/metrics' ? metricsAnswer(options.registry) : healthAnswer(options.checks, options.checkTimeoutMs ?? BACKEND_WAIT_MS);
    answer.then(
      ({ status, type, body }) => {
        res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Could not collect the metrics\n'),
    );
  });
  // A scraper holds no connection open for long; slow clients are cut rather than kept.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  const { url } = await listenOn(server, options.port, options.host ?? '127.0.0.1');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function metricsAnswer(registry: Registry) {
  return { status: 200, type: registry.contentType, body: await registry.metrics() };
}

async function healthAnswer(checks: Record<string, HealthCheck>, timeoutMs: number) {
  const results = await Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await passes(check, timeoutMs)] as const));
  const ok = results.every(([, passed]) => passed);
  const body = JSON.stringify({ status: ok ? 'ok' : 'unavailable', checks: Object.fromEntries(results) });
  return { status: ok ? 200 : 503, type: 'application/json; charset=utf-8', body: `${body}\n` };
}

function passes(check: HealthCheck, timeoutMs: number): Promise<boolean> {
  return withTimeout(Promise.resolve().then(check), timeoutMs, 'the check did not answer').then(
    (passed) => passed === true,
    () => false,
  );
}
