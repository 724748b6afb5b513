/**
 * The n8n node under an account limit: the BUILT node package (nodes/dist, as
 * n8n loads it, with its process-wide limiter registry) runs `execute()`
 * through the test harness against the emulator limited to a few images per
 * minute. Two runs, each with a fresh account bucket:
 *
 *   A. one workflow of 30 items;
 *   B. three workflows of 10 items at once (same credential and limits, so
 *      they share one limiter, as executions in one n8n process do).
 *
 * Goal: zero failed items and no rate-limit answer reaching n8n (the client
 * may absorb a 429 by waiting as the service asks; the emulator counts them).
 * Prints each run's duration against two ideals: the naive one (30 images /
 * limit) and the bucket-aware one ((30 - bucket) / limit, since the account's
 * bucket starts full, holding one minute of images).
 *
 *   node --import tsx bench/n8n-throttle.ts [--ipm 20] [--latency 300]
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createEmulator, DEV_API_KEY } from '../src/emulator/index.js';
import { createHarness, type N8nWorkflowRuntime } from '../test/nodes/execute-harness.js';
import type { INodeExecutionData, INodeType } from '../test/nodes/n8n-workflow.js';

const { values: args } = parseArgs({
  options: {
    ipm: { type: 'string', default: '20' },
    latency: { type: 'string', default: '300' },
  },
});
const IMAGES_PER_MINUTE = Number(args.ipm);
const LATENCY_MS = Number(args.latency);
const ITEMS = 30;
const DEADLINE_MS = 5 * 60_000;

const nodesDir = resolve(import.meta.dirname, '..', 'nodes');
execFileSync(process.execPath, [join(nodesDir, 'scripts', 'build.mjs')], { stdio: 'inherit' });
const fromNodes = createRequire(join(nodesDir, 'package.json'));
const n8n = fromNodes('n8n-workflow') as N8nWorkflowRuntime;
const { PictorImage } = fromNodes('./dist/nodes/PictorImage/PictorImage.node.js') as { PictorImage: new () => INodeType };

const emulator = createEmulator({ imagesPerMinute: IMAGES_PER_MINUTE, latencyMs: LATENCY_MS });
const server = await emulator.listen({ port: 0 });
const node = new PictorImage();

interface Outcome {
  name: string;
  seconds: number;
  items: number;
  failed: number;
  requests: number;
  absorbed429: number;
}

async function scenario(name: string, workflows: number, maxConcurrent: number): Promise<Outcome> {
  emulator.reset(); // a full account bucket, as at the start of a minute of quiet
  const perWorkflow = ITEMS / workflows;
  const parameters = {
    operation: 'generate',
    prompt: 'a paced picture',
    quality: 'low',
    // A new maxConcurrent gives this run its own limiter (full bucket), like the account's.
    options: { imagesPerMinute: IMAGES_PER_MINUTE, maxConcurrent },
  };
  const started = performance.now();
  const runs = Array.from({ length: workflows }, () =>
    createHarness({
      n8n,
      nodeType: node,
      parameters,
      items: Array.from({ length: perWorkflow }, (_, i) => ({ json: { i } })),
      credentials: { apiKey: DEV_API_KEY, baseUrl: server.url },
      continueOnFail: true,
    }).run(),
  );
  const outputs = (await Promise.all(runs)).flatMap(([items]) => items ?? []) as INodeExecutionData[];
  const seconds = (performance.now() - started) / 1000;
  const stats = emulator.stats();
  return {
    name,
    seconds,
    items: outputs.length,
    failed: outputs.filter((item) => item.error !== undefined || item.json.error !== undefined).length,
    requests: stats.requests,
    absorbed429: stats.rateLimited,
  };
}

const deadline = setTimeout(() => {
  console.error(`n8n-throttle: gave up after ${DEADLINE_MS / 1000} s`);
  process.exit(1);
}, DEADLINE_MS);

const naive = (ITEMS / IMAGES_PER_MINUTE) * 60;
const bucketAware = (Math.max(0, ITEMS - IMAGES_PER_MINUTE) / IMAGES_PER_MINUTE) * 60;
console.log(`n8n-throttle: ${ITEMS} items of 1 image, account limit ${IMAGES_PER_MINUTE} images/min, ${LATENCY_MS} ms per image`);
console.log(`ideal: naive ${naive.toFixed(1)} s (${ITEMS}/${IMAGES_PER_MINUTE} min); bucket-aware ${bucketAware.toFixed(1)} s (the first ${Math.min(ITEMS, IMAGES_PER_MINUTE)} images fit the full bucket)\n`);

const outcomes = [await scenario('A: one workflow of 30 items', 1, 4), await scenario('B: three workflows of 10 items at once', 3, 3)];
clearTimeout(deadline);
await emulator.close();

console.log('| run | items out | failed | requests | 429s absorbed | duration | / bucket-aware ideal | / naive ideal |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const o of outcomes) {
  const ratio = (ideal: number) => (ideal > 0 ? (o.seconds / ideal).toFixed(2) : 'n/a');
  console.log(`| ${o.name} | ${o.items} | ${o.failed} | ${o.requests} | ${o.absorbed429} | ${o.seconds.toFixed(1)} s | ${ratio(bucketAware)} | ${ratio(naive)} |`);
}
const ok = outcomes.every((o) => o.items === ITEMS && o.failed === 0);
console.log(`\n${ok ? 'goal met' : 'GOAL MISSED'}: ${outcomes.map((o) => `${o.failed} failed items in ${o.name.split(':')[0]}`).join(', ')}`);
process.exitCode = ok ? 0 : 1;
