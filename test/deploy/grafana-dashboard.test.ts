import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startService, type Service } from '../../bots/main.js';
import { scrape } from '../metrics/scrape.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Panel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr: string }[];
  panels?: Panel[];
}

interface AlertRule {
  uid: string;
  title: string;
  condition: string;
  data: { refId: string; datasourceUid: string; model: { expr?: string; type?: string; expression?: string } }[];
}

async function alertRules(): Promise<AlertRule[]> {
  const file = parse(await readFile(join(root, 'deploy/grafana/provisioning/alerting/pictor-alerts.yaml'), 'utf8')) as { apiVersion: number; groups: { rules: AlertRule[] }[] };
  expect(file.apiVersion).toBe(1);
  return file.groups.flatMap((g) => g.rules);
}

async function dashboard(): Promise<{ uid: string; panels: Panel[] }> {
  return JSON.parse(await readFile(join(root, 'deploy/grafana/dashboards/pictor.json'), 'utf8')) as { uid: string; panels: Panel[] };
}

function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

const PROMQL_KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan']);

/**
 * The metric names a PromQL expression reads: identifiers that are not a
 * function (followed by "("), a keyword, a label (inside {…} or by/without/on/
 * ignoring (…)), a range ([…], Grafana's $__rate_interval included) or a string.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const match of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = bare.slice(match.index + match[0].length).trimStart();
    if (after.startsWith('(') || PROMQL_KEYWORDS.has(match[0].toLowerCase())) continue;
    names.push(match[0]);
  }
  return names;
}

describe('metricNames (how the dashboard test reads a query)', () => {
  it('finds the metrics and leaves out functions, labels, ranges and keywords', () => {
    expect(metricNames('histogram_quantile(0.95, sum by (le, operation) (rate(pictor_request_duration_seconds_bucket{stream="true"}[$__rate_interval])))')).toEqual([
      'pictor_request_duration_seconds_bucket',
    ]);
    expect(metricNames('sum(rate(pictor_rate_limited_total[5m])) * 60 > bool 0 or up')).toEqual(['pictor_rate_limited_total', 'up']);
  });
});

describe('the Grafana dashboard (deploy/grafana/dashboards/pictor.json)', () => {
  let service: Service;
  let exported: Set<string>;

  beforeAll(async () => {
    const lines: string[] = [];
    service = await startService({ PICTOR_LOG_LEVEL: 'silent', PICTOR_METRICS_PORT: '0', PICTOR_EMULATOR_LATENCY_MS: '0' }, (line) => lines.push(line));
    const url = /Metrics for Prometheus at (\S+)\/metrics/.exec(lines.join('\n'))![1]!;
    const { families } = await scrape(`${url}/metrics`);
    // A histogram is queried by its series: _bucket, _sum, _count.
    exported = new Set(families.flatMap((f) => (f.type === 'HISTOGRAM' || f.type === 'SUMMARY' ? [f.name, `${f.name}_bucket`, `${f.name}_sum`, `${f.name}_count`] : [f.name])));
  }, 120_000);
  afterAll(() => service?.stop());

  it('queries only metrics that a running Pictor exports', async () => {
    const queried = allPanels((await dashboard()).panels).flatMap((p) => (p.targets ?? []).flatMap((t) => metricNames(t.expr)));
    expect(queried.length).toBeGreaterThan(10);
    expect(queried.filter((name) => !exported.has(name))).toEqual([]);
  });

  it('covers jobs, spend, reservations, the queue, latency, 429s and retries', async () => {
    const queried = new Set(allPanels((await dashboard()).panels).flatMap((p) => (p.targets ?? []).flatMap((t) => metricNames(t.expr))));
    for (const name of [
      'pictor_jobs_total',
      'pictor_refusals_total',
      'pictor_spent_usd_total',
      'pictor_reserved_usd',
      'pictor_queue_length',
      'pictor_queue_wait_seconds_bucket',
      'pictor_request_duration_seconds_bucket',
      'pictor_rate_limited_total',
      'pictor_retries_total',
      'pictor_account_spent_usd',
      'pictor_account_cap_usd',
    ]) {
      expect(queried, name).toContain(name);
    }
  });

  it('has alert rules on spend against the caps, 429s and readiness, querying only exported metrics from the provisioned Prometheus', async () => {
    const source = await readFile(join(root, 'deploy/grafana/provisioning/datasources/prometheus.yaml'), 'utf8');
    const uid = /^\s+uid:\s*(\S+)$/m.exec(source)![1];
    const rules = await alertRules();
    const queried = new Set<string>();
    for (const rule of rules) {
      const queries = rule.data.filter((d) => d.datasourceUid !== '__expr__');
      expect(queries.length, rule.title).toBeGreaterThan(0);
      for (const query of queries) {
        expect(query.datasourceUid, rule.title).toBe(uid);
        const names = metricNames(query.model.expr ?? '');
        expect(names.filter((name) => !exported.has(name)), rule.title).toEqual([]);
        for (const name of names) queried.add(name);
      }
      // The condition is a threshold over one of the rule's queries.
      const condition = rule.data.find((d) => d.refId === rule.condition);
      expect(condition?.model.type, rule.title).toBe('threshold');
      expect(rule.data.map((d) => d.refId), rule.title).toContain(condition!.model.expression);
    }
    expect(new Set(rules.map((r) => r.uid)).size).toBe(rules.length);
    for (const name of ['pictor_account_spent_usd', 'pictor_account_cap_usd', 'pictor_rate_limited_total', 'pictor_ready']) expect(queried, name).toContain(name);
  });

  it('gives every graph a query and reads from the provisioned Prometheus data source', async () => {
    const source = await readFile(join(root, 'deploy/grafana/provisioning/datasources/prometheus.yaml'), 'utf8');
    const uid = /^\s+uid:\s*(\S+)$/m.exec(source)![1];
    const graphs = allPanels((await dashboard()).panels).filter((p) => p.type !== 'row');
    for (const panel of graphs) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      expect(panel.datasource, panel.title).toEqual({ type: 'prometheus', uid });
    }
  });
});
