/**
 * Child-process entry: ONE contender alone against the server at `url`:
 * `warmup` requests of the workload, then `requests` more, timed; prints one
 * JSON line with the bytes of images the last request turned into, and the
 * CPU time of the timed requests. Every client is imported (contenders.ts), so
 * two probes differ only in what they run. `bench/client-instructions.ts` runs
 * it under callgrind twice per contender (with 0 and with N timed requests):
 * the difference of the two instruction counts is what the N requests cost.
 *
 * The Pictor contender is a build: this checkout's (`dist/src/index.js`) or
 * the one named by the last argument (another checkout's, to compare). As
 * with `client-compare.ts --pictor dist`, source-mapped stack traces, which
 * tsx turns on for the process, are turned off again.
 *
 * Usage: node --import tsx client-probe.ts <contender> <workload> <url> <warmup> <requests> [path of a build's dist/src/index.js]
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CONTENDER_NAMES, makeContender, WORKLOADS, type ContenderName, type PictorModule, type WorkloadName } from './contenders.js';
import { REPO_ROOT } from './child-server.js';

const [name, workload, url, warmupText, requestsText, buildEntry = `${REPO_ROOT}dist/src/index.js`] = process.argv.slice(2) as [
  ContenderName,
  WorkloadName,
  string,
  string,
  string,
  string | undefined,
];
const warmup = Number(warmupText);
const requests = Number(requestsText);
if (!CONTENDER_NAMES.includes(name) || !(workload in WORKLOADS) || !url || !Number.isInteger(warmup) || !Number.isInteger(requests)) {
  throw new Error(`usage: client-probe.ts <${CONTENDER_NAMES.join('|')}> <${Object.keys(WORKLOADS).join('|')}> <url> <warmup> <requests> [build entry]`);
}
if (!existsSync(buildEntry)) throw new Error(`no build at ${buildEntry}: run \`npm run build\` in that checkout first`);
const pictor = (await import(pathToFileURL(buildEntry).href)) as PictorModule;
process.setSourceMapsEnabled(false);

const contender = makeContender(name, url, pictor);
let bytes = 0;
for (let i = 0; i < warmup; i++) bytes = await contender.run(workload);
const cpu = process.cpuUsage();
for (let i = 0; i < requests; i++) bytes = await contender.run(workload);
const used = process.cpuUsage(cpu);
process.stdout.write(`${JSON.stringify({ name, workload, warmup, requests, bytes, cpuMs: (used.user + used.system) / 1000 })}\n`);
process.exit(0);
