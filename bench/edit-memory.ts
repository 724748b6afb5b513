/**
 * What a bot process holds while it runs edits, against the input images it holds: members send `/edit` at once
 * through the fake Discord (its CDN serves the images; it runs here), the bot (the real discord.js client inside
 * `startDiscordBot`, one `JobRunner` at its defaults: `PICTOR_MAX_QUEUED_INPUT_MB` 512, 4 requests at once) runs in
 * a process of its own, the emulator here. For each scenario: the bot's idle RSS (after start-up, one small edit and
 * two full GCs), its peak RSS (VmHWM, reset at that point), the most input bytes its runner held at once (what the
 * bound counts, sampled every millisecond), the ratio (peak − idle) ÷ held, the edits completed and refused, and the
 * peak against the 1 GiB the Kubernetes example gives the process.
 *
 * Scenarios (at the defaults): `issue` — 4 members × 16 images of 9 MB (under Discord's free 10 MB per file);
 * `at-bound` — one edit of 16 × 32 MiB, the largest the defaults take; `many` — 12 members × 16 × 2.5 MiB, 480 MiB
 * queued and in flight at once; `past-bound` — one edit of 16 × 49 MB (refused now: `input_too_large`).
 *
 * Side by side: `--compare-with DIR` runs the same scenario against another checkout's bots and core (e.g. the
 * commit before a change, `git archive <commit> | tar -x -C DIR`, with `node_modules` linked), each in a bot process
 * of its own, alternating which goes first. `--dist` loads the builds (`dist/`, `npm run build` first) as production
 * runs them instead of the sources through tsx (a smaller idle footprint). Linux only (VmHWM).
 *
 *   node --import tsx bench/edit-memory.ts [--scenarios issue,at-bound,many,past-bound] [--compare-with DIR] [--dist]
 */
import { resolve } from 'node:path';
import { measureEditMemory, type EditMemoryResult, type EditMemoryScenario } from '../test/helpers/edit-memory.js';

const flag = (name: string): string | undefined => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? undefined : process.argv[at + 1];
};
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const edits = (members: number, images: number, imageBytes: number) => Array.from({ length: members }, () => ({ images, imageBytes }));
const SCENARIOS: Record<string, { what: string; scenario: EditMemoryScenario }> = {
  issue: { what: '4 members × 16 × 9 MB', scenario: { edits: edits(4, 16, 9_000_000) } },
  'at-bound': { what: '1 edit of 16 × 32 MiB (512 MiB)', scenario: { edits: edits(1, 16, 32 * MiB) } },
  many: { what: '12 members × 16 × 2.5 MiB (480 MiB)', scenario: { edits: edits(12, 16, 2.5 * MiB) } },
  'past-bound': { what: '1 edit of 16 × 49 MB (784 MB)', scenario: { edits: edits(1, 16, 49_000_000) } },
};
const chosen = (flag('scenarios') ?? Object.keys(SCENARIOS).join(',')).split(',');
const compareWith = flag('compare-with');
const dist = process.argv.includes('--dist');
const variants: { name: string; root: string | undefined }[] = [{ name: 'this checkout', root: undefined }];
if (compareWith) variants.push({ name: `compare (${compareWith})`, root: resolve(compareWith) });

const mb = (bytes: number) => `${Math.round(bytes / MiB)} MiB`;
console.log(`edit memory: the bot process's peak RSS against the input images it holds (${dist ? 'dist builds' : 'sources through tsx'}; defaults: bound 512 MiB, 4 requests at once)`);
console.log('| scenario | variant | idle RSS | peak RSS | peak − idle | most input held | (peak − idle) ÷ held | completed / refused | peak ≤ 1 GiB |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
let round = 0;
for (const key of chosen) {
  const entry = SCENARIOS[key];
  if (!entry) throw new Error(`no scenario ${key} (there are ${Object.keys(SCENARIOS).join(', ')})`);
  // Alternate which variant goes first, so neither always runs on the warmer machine.
  const order = round++ % 2 === 0 ? variants : [...variants].reverse();
  const results = new Map<string, EditMemoryResult>();
  for (const variant of order) results.set(variant.name, await measureEditMemory({ ...entry.scenario, root: variant.root, dist }));
  for (const variant of variants) {
    const r = results.get(variant.name)!;
    const ratio = Number.isFinite(r.ratio) ? r.ratio.toFixed(2) : '—';
    console.log(`| ${key}: ${entry.what} | ${variant.name} | ${mb(r.idleRss)} | ${mb(r.peakRss)} | ${mb(r.peakRss - r.idleRss)} | ${mb(r.maxInputBytesHeld)} | ${ratio} | ${r.completed} / ${r.refused} | ${r.peakRss <= GiB ? 'yes' : 'no'} |`);
  }
}
