/**
 * What queued edits hold in memory, with and without the runner's bound on
 * their input images (`PICTOR_MAX_QUEUED_INPUT_MB`): each case in its own child
 * process (helpers/queued-edits-probe.ts), a JobRunner whose limiter lets
 * nothing go, `--jobs` edits of `--images` × `--mb` MB submitted one after the
 * other (the job-count bound set to `--jobs`, so only the input bound refuses).
 * Prints the edits taken and refused, the Buffers still held after a full GC,
 * the RSS after it and the peak RSS (VmHWM), above each process's baseline, and
 * the ratios bounded / unbounded. Linux only (VmHWM).
 *
 * Flags: --jobs 200 --images 2 --mb 4 --bound 512 (MB; the default of the bots).
 */
import { runChildScript } from './helpers/child-script.js';

const flag = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
};
const jobs = flag('jobs', '200');
const images = flag('images', '2');
const mb = flag('mb', '4');
const bound = flag('bound', '512');

interface Probe {
  bound: string;
  accepted: number;
  refused: number;
  heldBytes: number;
  rssDelta: number;
  peakRssDelta: number;
}

const MB = 1024 * 1024;
const show = (bytes: number) => `${Math.round(bytes / MB)} MB`;
console.log(`${jobs} edits of ${images} × ${mb} MB submitted to a runner that sends nothing (they all wait in the queue)`);
const results: Probe[] = [];
for (const b of ['unbounded', bound]) results.push(await runChildScript<Probe>('./queued-edits-probe.ts', [b, jobs, images, mb]));
console.log('| input bound | edits taken | refused (queue_full) | images held after GC | RSS after GC | peak RSS |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const r of results) {
  console.log(`| ${r.bound === 'unbounded' ? 'none (before)' : `${r.bound} MB`} | ${r.accepted} | ${r.refused} | ${show(r.heldBytes)} | +${show(r.rssDelta)} | +${show(r.peakRssDelta)} |`);
}
const [before, after] = results as [Probe, Probe];
console.log(
  `bounded / unbounded: images held ${(after.heldBytes / before.heldBytes).toFixed(2)}, RSS after GC ${(after.rssDelta / before.rssDelta).toFixed(2)}, peak RSS ${(after.peakRssDelta / before.peakRssDelta).toFixed(2)}`,
);
