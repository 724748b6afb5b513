/**
 * Child-process entry of queued-edits-memory.ts: a JobRunner whose limiter lets
 * nothing go, so every job it takes stays queued; `jobs` edits are submitted one
 * after the other, each with `images` fresh buffers of `mb` MB (a PNG signature,
 * then bytes written, as a download leaves them), and the memory the queue then
 * holds is printed as one JSON line:
 *
 * - `heldBytes`: `arrayBuffers` (Buffers' memory) after a full GC, above the
 *   baseline taken after imports and a full GC: the input images still referenced;
 * - `rssDelta`: RSS after that GC, above the baseline RSS;
 * - `peakRssDelta`: the kernel's high-water mark (`VmHWM`, reset at the baseline).
 *
 * Usage: node --import tsx queued-edits-probe.ts <maxQueuedInputMb | unbounded> <jobs> <images> <mb>
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileQuotaStore, JobRunner, type JobSpec } from '../../bots/runner/index.js';
import { ImageLimiter, PictorClient } from '../../src/index.js';
import { collectGarbage } from './measure.js';

const [boundText, jobsText, imagesText, mbText] = process.argv.slice(2);
const jobs = Number(jobsText ?? 200);
const images = Number(imagesText ?? 2);
const mb = Number(mbText ?? 4);
const MB = 1024 * 1024;
/** `unbounded`: as before the input bound (only the job count bounds the queue). */
const maxQueuedInputBytes = boundText === 'unbounded' ? Number.MAX_SAFE_INTEGER : Number(boundText) * MB;

/** Lets nothing go: every request waits in the queue until the process ends. */
class ClosedLimiter extends ImageLimiter {
  override acquire(): Promise<() => void> {
    return new Promise(() => {});
  }
}

const dir = await mkdtemp(join(tmpdir(), 'pictor-queued-edits-'));
const store = new FileQuotaStore({ dir });
const client = new PictorClient({ baseURL: 'http://127.0.0.1:9', apiKey: 'unused', limiter: new ClosedLimiter() });
const runner = new JobRunner({ client, store, limits: {}, partialImages: 0, maxQueuedJobs: Math.max(jobs, 1), maxQueuedInputBytes });
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

collectGarbage();
const baseRss = process.memoryUsage().rss;
const baseBuffers = process.memoryUsage().arrayBuffers;
writeFileSync('/proc/self/clear_refs', '5');

let accepted = 0;
let refused = 0;
for (let i = 0; i < jobs; i++) {
  // Fresh bytes per job, every page written, as a download leaves them.
  const inputs = Array.from({ length: images }, (_, k) => {
    const data = Buffer.alloc(mb * MB, (i + k) % 251);
    PNG_SIGNATURE.copy(data);
    return { data, filename: `in-${i}-${k}.png` };
  });
  const spec: JobSpec = {
    kind: 'edit',
    prompt: `edit ${i}`,
    options: { quality: 'low' },
    images: inputs,
    requester: { platform: 'discord', userId: `u${i}`, channelId: 'c', scopeId: 'g' },
  };
  try {
    await runner.submit(spec, () => {});
    accepted++;
  } catch (error) {
    if ((error as { code?: string }).code !== 'queue_full') throw error;
    refused++;
  }
}
collectGarbage();
await new Promise((resolve) => setTimeout(resolve, 50));
collectGarbage();
const now = process.memoryUsage();
const peak = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;
process.stdout.write(
  `${JSON.stringify({ bound: boundText, jobs, images, mb, accepted, refused, heldBytes: now.arrayBuffers - baseBuffers, rssDelta: now.rss - baseRss, peakRssDelta: peak - baseRss })}\n`,
);
await rm(dir, { recursive: true, force: true });
process.exit(0);
