/**
 * Child-process entry: runs ONE contender's workload `rounds` times against
 * the server at `url` and prints, as one JSON line, how far its memory rose
 * above its idle footprint. All three clients are imported (contenders.ts), so
 * every probe starts from the same footprint; only one of them is exercised.
 *
 * - `peakRssDelta`: the kernel's high-water mark of resident memory (exact,
 *   no sampling gaps) minus the RSS measured after imports and a full GC,
 *   before the first request. On Linux the mark is reset at that point
 *   (`/proc/self/clear_refs` ← 5, then `VmHWM`), so start-up (tsx compiling)
 *   does not count; elsewhere it is getrusage's maxrss since start.
 * - `peakHeapDelta`: the highest `heapUsed + arrayBuffers` seen (sampled every
 *   millisecond and after each call, while its result is still held) minus the
 *   same baseline. Sampling misses peaks inside one synchronous step.
 *
 * Usage: node --import tsx memory-probe.ts <contender> <workload> <url> <rounds>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { CONTENDER_NAMES, makeContender, WORKLOADS, type ContenderName, type WorkloadName } from './contenders.js';
import { collectGarbage } from './measure.js';

const [name, workload, url, roundsText] = process.argv.slice(2) as [ContenderName, WorkloadName, string, string];
if (!CONTENDER_NAMES.includes(name) || !(workload in WORKLOADS) || !url) {
  throw new Error('usage: memory-probe.ts <pictor|openai|undici> <nonStreamed|streamed> <url> <rounds>');
}
const rounds = Number(roundsText ?? 10);

const contender = makeContender(name, url);
collectGarbage();
const heapNow = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const baseRss = process.memoryUsage().rss;
const exactPeak = resetPeakRss();
const baseHeap = heapNow();
let peakHeap = baseHeap;
const sample = () => {
  peakHeap = Math.max(peakHeap, heapNow());
};
const sampler = setInterval(sample, 1);

let bytes = 0;
for (let i = 0; i < rounds; i++) {
  bytes = await contender.run(workload);
  sample();
}
clearInterval(sampler);

const peakRss = exactPeak ? linuxPeakRss() : process.resourceUsage().maxRSS * 1024;
process.stdout.write(
  `${JSON.stringify({ name, workload, rounds, bytes, exactPeak, peakRssDelta: peakRss - baseRss, peakHeapDelta: peakHeap - baseHeap })}\n`,
);
process.exit(0);

/** Resets the kernel's peak-RSS mark (Linux ≥ 4.0); false where that is not possible. */
function resetPeakRss(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return linuxPeakRss() > 0;
  } catch {
    return false;
  }
}

function linuxPeakRss(): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}
