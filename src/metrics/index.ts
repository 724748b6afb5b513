export { NO_METRICS, withRefusalListener, type JobMetrics } from './job-metrics.js';
export { BACKEND_WAIT_MS } from './backend-wait.js';
export { createMetrics, type LedgerReadings, type LiveReadings, type Metrics, type MetricsOptions } from './prometheus.js';
export { startMetricsServer, type HealthCheck, type MetricsServer, type MetricsServerOptions } from './metrics-server.js';
