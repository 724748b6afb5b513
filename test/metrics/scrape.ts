import parsePrometheusTextFormat, { type MetricFamily, type Sample } from 'parse-prometheus-text-format';

/** What a Prometheus server would read from a `/metrics` URL, parsed by a Prometheus text-format parser. */
export async function scrape(url: string): Promise<Scraped> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`);
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain')) throw new Error(`GET ${url} answered ${type}, not the text format`);
  const text = await response.text();
  return new Scraped(text, parsePrometheusTextFormat(text));
}

export class Scraped {
  constructor(
    readonly text: string,
    readonly families: MetricFamily[],
  ) {}

  family(name: string): MetricFamily {
    const found = this.families.find((f) => f.name === name);
    if (!found) throw new Error(`no metric ${name} in the scrape`);
    return found;
  }

  /** The value of the counter or gauge sample with exactly these labels (0 when the series does not exist yet). */
  value(name: string, labels: Record<string, string> = {}): number {
    const sample = this.#sample(name, labels);
    return sample ? Number(sample.value) : 0;
  }

  /**
   * How many observations a histogram holds: its `+Inf` bucket. This parser
   * folds the series of a labelled histogram into one sample, so a test that
   * reads one keeps it to a single label set.
   */
  count(name: string): number {
    const family = this.family(name);
    if (family.type !== 'HISTOGRAM') throw new Error(`${name} is a ${family.type}, not a histogram`);
    const [sample] = family.metrics;
    return sample?.buckets ? Number(sample.buckets['+Inf']) : 0;
  }

  #sample(name: string, labels: Record<string, string>): Sample | undefined {
    const wanted = JSON.stringify(Object.entries(labels).sort());
    return this.family(name).metrics.find((m) => JSON.stringify(Object.entries(m.labels ?? {}).sort()) === wanted);
  }
}
