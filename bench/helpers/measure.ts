import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Wall and CPU time of one awaited call. CPU is this process only (user + system, all its threads); `systemMs` is its system part. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; wallMs: number; cpuMs: number; systemMs: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const value = await fn();
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { value, wallMs, cpuMs: (used.user + used.system) / 1000, systemMs: used.system / 1000 };
}

/** A command-line flag's value as a whole number of at least 1 (RangeError naming the flag otherwise). */
export function positiveInt(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`--${name} must be a whole number of at least 1, got ${JSON.stringify(text)}`);
  return value;
}

/** A command-line flag's comma-separated list, each item one of `allowed` (RangeError naming the flag otherwise). */
export function listOf(flag: string, text: string, allowed: readonly string[]): string[] {
  const items = text.split(',').map((item) => item.trim()).filter(Boolean);
  const bad = items.filter((item) => !allowed.includes(item));
  if (bad.length || items.length === 0) throw new RangeError(`--${flag} takes a comma-separated list of ${allowed.join(', ')}; got ${JSON.stringify(text)}`);
  return items;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The nearest-rank percentile `p` (0–100) of values sorted ascending (NaN when there are none). */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The middle half's spread, as a share of the median: how noisy a series was. */
export function relativeIqr(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))]!;
  return (at(0.75) - at(0.25)) / median(values);
}

export function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}×`;
}

export function ms(value: number): string {
  return value >= 100 ? `${value.toFixed(0)} ms` : `${value.toFixed(2)} ms`;
}

export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Prints rows as a Markdown table (pipe-separated, header underlined). */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  console.log(line(header));
  console.log(line(header.map(() => '---')));
  for (const row of rows) console.log(line(row));
}

/**
 * A full garbage collection. `gc` is exposed at run time (v8 flag, then taken
 * from a fresh context), so scripts need no `--expose-gc` on the command line.
 */
export function collectGarbage(): void {
  gc();
}

const gc: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();
