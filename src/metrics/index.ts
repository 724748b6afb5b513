export { NO_METRICS, withRefusalListener, type JobMetrics } from './job-metrics.js';
export { createMetrics, type LedgerReadings, type LiveReadings, type Metrics } from './prometheus.js';
export { startMetricsServer, type HealthCheck, type MetricsServer, type MetricsServerOptions } from './metrics-server.js';
