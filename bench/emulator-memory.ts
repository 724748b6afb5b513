/**
 * Memory of a long-running `pictor emulator` (issue: it once buffered whole
 * bodies before checking auth and kept every edit's image bytes in its log).
 *
 * Starts the real command (`src/cli/main.ts emulator --port 0 --latency-ms 0`)
 * in a child process and sends it ROUNDS (default 1000) mixed requests, two at
 * a time, from this process:
 *   - non-streamed generations (low, 1024x1024) and streamed ones with 2 partials;
 *   - edits with 1 small image, and every 25th request an edit with 16 images of 10 MB each;
 *   - every 50th request an unauthenticated upload declaring 800 MB (64 KB sent, then waits for the answer);
 *   - every 50th request (offset) an edit with a 60 MB image, over the 50 MB limit (refused as it streams).
 * The child's resident memory is read from /proc/<pid>/status: VmRSS every
 * 50 ms and VmHWM (the kernel's exact peak) at the end. Printed side by side:
 * RSS after the first 10 % of requests against RSS at the end (growth: a log
 * that kept bytes grows ~170 MB per heavy edit until it drops records), and the
 * peak against the 300 MB target.
 *
 * Linux only (reads /proc). Usage: node --import tsx bench/emulator-memory.ts [--rounds N]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { DEV_API_KEY } from '../src/emulator/index.js';
import { padImage } from '../src/emulator/pad-image.js';
import { REPO_ROOT } from './helpers/child-server.js';
import { mb, printTable, ratio } from './helpers/measure.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '1000' } } });
const ROUNDS = Number(values.rounds);
const TARGET_BYTES = 300 * 1024 * 1024;
const AUTH = { authorization: `Bearer ${DEV_API_KEY}` };

const child = spawn(process.execPath, ['dist/src/cli/main.js', 'emulator', '--port', '0', '--latency-ms', '0'], {
  cwd: REPO_ROOT,
  env: { ...withoutKey(process.env), PICTOR_LOG_LEVEL: 'silent' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise<string>((resolve, reject) => {
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    const match = /listening on (\S+)/.exec(line);
    if (match) resolve(match[1]!);
  });
  child.once('exit', (code) => reject(new Error(`pictor emulator exited with ${String(code)}`)));
});
const pid = child.pid!;

const procStatus = (field: 'VmRSS' | 'VmHWM') => {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
};
let sampledPeak = 0;
const sampler = setInterval(() => {
  sampledPeak = Math.max(sampledPeak, procStatus('VmRSS'));
}, 50);
const idleRss = procStatus('VmRSS');

const small = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3366aa' } }).png().toBuffer();
const tenMb = padImage(small, 'png', 10 * 1024 * 1024);
const sixtyMb = padImage(small, 'png', 60 * 1024 * 1024);

function editBody(images: Buffer[]): FormData {
  const form = new FormData();
  for (const [i, bytes] of images.entries()) form.append('image[]', new Blob([bytes], { type: 'image/png' }), `in-${i}.png`);
  form.append('prompt', 'a lighthouse at dusk');
  form.append('quality', 'low');
  return form;
}

async function generation(stream: boolean): Promise<number> {
  const response = await fetch(`${url}/v1/images/generations`, {
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'a lighthouse at dusk', quality: 'low', stream, ...(stream ? { partial_images: 2 } : {}) }),
  });
  await response.arrayBuffer();
  return response.status;
}

async function edit(images: Buffer[]): Promise<number> {
  const response = await fetch(`${url}/v1/images/edits`, { method: 'POST', headers: AUTH, body: editBody(images) }).catch(() => undefined);
  if (!response) return 0;
  await response.arrayBuffer();
  return response.status;
}

/** An unauthenticated upload that declares 800 MB and sends 64 KB: the answer must come without the rest. */
function hugeUnauthenticated(): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`POST /v1/images/edits HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: ${800 * 1024 * 1024}\r\n\r\n`);
      socket.write(Buffer.alloc(64 * 1024));
    });
    let head = '';
    socket.on('data', (data) => {
      head += data.toString('latin1');
      const status = /^HTTP\/1\.1 (\d+)/.exec(head);
      if (status) {
        socket.destroy();
        resolve(Number(status[1]));
      }
    });
    socket.on('error', () => resolve(0));
  });
}

function request(i: number): Promise<number> {
  if (i % 25 === 24) return edit(Array.from({ length: 16 }, () => tenMb));
  if (i % 50 === 10) return hugeUnauthenticated();
  if (i % 50 === 35) return edit([sixtyMb]);
  if (i % 3 === 0) return generation(false);
  if (i % 3 === 1) return generation(true);
  return edit([small]);
}

const statuses: Record<number, number> = {};
let rssAtTenth = 0;
let next = 0;
const started = Date.now();
async function worker(): Promise<void> {
  while (next < ROUNDS) {
    const i = next++;
    const status = await request(i);
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (i === Math.floor(ROUNDS / 10)) rssAtTenth = procStatus('VmRSS');
  }
}
await Promise.all([worker(), worker()]);
const seconds = (Date.now() - started) / 1000;
clearInterval(sampler);
const finalRss = procStatus('VmRSS');
const peak = Math.max(procStatus('VmHWM'), sampledPeak);
child.kill('SIGTERM');

console.log(`pictor emulator, ${ROUNDS} mixed requests (2 at a time) in ${seconds.toFixed(1)} s; answers by status: ${JSON.stringify(statuses)}`);
console.log(`heavy edits (16 x 10 MB): ${Math.floor(ROUNDS / 25)}; 800 MB unauthenticated uploads: ${Math.ceil(ROUNDS / 50)}; 60 MB images: ${Math.ceil(ROUNDS / 50)}`);
printTable(
  ['measure', 'RSS', 'ratio'],
  [
    ['idle, after start', mb(idleRss), ''],
    [`after ${Math.floor(ROUNDS / 10)} requests`, mb(rssAtTenth), ''],
    [`after ${ROUNDS} requests`, mb(finalRss), `${ratio(finalRss, rssAtTenth)} of the 10 % mark`],
    ['peak (VmHWM)', mb(peak), `${ratio(peak, TARGET_BYTES)} of the 300 MB target`],
  ],
);
process.exit(0);

function withoutKey(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { PICTOR_API_KEY: _key, PICTOR_BASE_URL: _url, ...rest } = env;
  return rest;
}
