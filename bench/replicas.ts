/**
 * Replicas: 1, 2 and 4 `npm start` processes (children running bots/main.ts)
 * on one Redis serve one Slack app (HTTP mode, behind a round-robin proxy)
 * against one account limit of `--ipm` images per minute.
 *
 * - One emulator in this process enforces the limit with its own token
 *   bucket (full at the start, refilled continuously), `--latency` ms per
 *   request; every replica is given the same PICTOR_IMAGES_PER_MINUTE, so
 *   they share one bucket through Redis.
 * - The fake Slack (in this process) delivers `/imagine` commands (n = 1, one
 *   user and one channel each) through the proxy; about 1.5 times as many
 *   jobs as the window allows are sent at once.
 * - For `--seconds` after the first command: the images the emulator
 *   accepted (against what the account allowed in the window: one full bucket
 *   plus the refill); the jobs whose result reached the channel (the final
 *   image shared there with its caption: what the requester sees), with the
 *   latency from command to that (median and p99: queued jobs wait their turn,
 *   so this grows with the backlog); and the jobs whose message reached "Done".
 *   The fake Slack enforces Tier 3 (50 `chat.update`s a minute per workspace)
 *   as Slack does; the replicas share one workspace budget of 40 a minute
 *   through Redis, so "Done" follows at that pace whatever the number of
 *   replicas, while results and their buttons are not held back by it.
 *
 * Needs a Redis: PICTOR_BENCH_REDIS_URL or PICTOR_TEST_REDIS_URL (skipped,
 * saying so, when neither is set).
 *
 * Usage: node --import tsx bench/replicas.ts [--ipm 30] [--seconds 30] [--latency 200] [--replicas 1,2,4]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createEmulator, DEV_API_KEY } from '../src/emulator/index.js';
import { FakeSlack } from '../test/fakes/slack/FakeSlack.js';
import { jobMessages, statusOf } from '../test/bots/slack/harness.js';
import { startRoundRobinProxy } from '../test/helpers/round-robin-proxy.js';
import { deleteKeys } from '../test/helpers/shared-limits-redis.js';
import { isPreviewFileName } from '../bots/slack/upload-files.js';
import { percentile, printTable } from './helpers/measure.js';

const MAIN = fileURLToPath(new URL('../bots/main.ts', import.meta.url));

const { values: args } = parseArgs({
  options: {
    ipm: { type: 'string', default: '30' },
    seconds: { type: 'string', default: '30' },
    latency: { type: 'string', default: '200' },
    replicas: { type: 'string', default: '1,2,4' },
  },
});
const ipm = Number(args.ipm);
const windowMs = Number(args.seconds) * 1000;
const redisUrl = process.env.PICTOR_BENCH_REDIS_URL ?? process.env.PICTOR_TEST_REDIS_URL;
if (!redisUrl) {
  console.log('replicas: skipped (no Redis: set PICTOR_BENCH_REDIS_URL or PICTOR_TEST_REDIS_URL)');
  process.exit(0);
}

const emulator = createEmulator({ imagesPerMinute: ipm, latencyMs: Number(args.latency), maxRecordedRequests: 20_000 });
const server = await emulator.listen({ port: 0, host: '127.0.0.1' });
const rows: string[][] = [];
const allowed = ipm + (ipm * windowMs) / 60_000;

for (const count of args.replicas.split(',').map(Number)) {
  emulator.reset();
  const slack = await new FakeSlack({ channelWriteIntervalMs: 0 }).start();
  const prefix = `pictor-bench:replicas:${randomUUID().slice(0, 8)}`;
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  try {
    const urls = await Promise.all(
      Array.from({ length: count }, async () => {
        const dataDir = await mkdtemp(join(tmpdir(), 'pictor-bench-replica-'));
        dirs.push(dataDir);
        const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
          env: {
            PATH: process.env.PATH,
            PICTOR_LOG_LEVEL: 'silent',
            PICTOR_BASE_URL: server.url,
            PICTOR_API_KEY: DEV_API_KEY,
            PICTOR_IMAGES_PER_MINUTE: String(ipm),
            PICTOR_MAX_CONCURRENT: '8',
            PICTOR_PARTIAL_IMAGES: '0',
            PICTOR_UPDATE_INTERVAL_MS: '1000',
            PICTOR_SHUTDOWN_GRACE_SECONDS: '1',
            PICTOR_DATA_DIR: dataDir,
            REDIS_URL: redisUrl,
            PICTOR_REDIS_PREFIX: prefix,
            SLACK_BOT_TOKEN: slack.botToken,
            SLACK_SIGNING_SECRET: slack.signingSecret,
            SLACK_MODE: 'http',
            SLACK_PORT: '0',
            SLACK_HOST: '127.0.0.1',
            SLACK_API_URL: slack.apiUrl,
          },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        children.push(child);
        return new Promise<string>((resolve, reject) => {
          let printed = '';
          child.stdout!.on('data', (chunk: Buffer) => {
            printed += chunk.toString();
            const url = /events at (\S+)\)/.exec(printed)?.[1];
            if (url) resolve(url);
          });
          child.once('exit', (code) => reject(new Error(`a replica exited (${code}) before it was online`)));
        });
      }),
    );
    const proxy = await startRoundRobinProxy(urls);
    slack.deliverOverHttp(proxy.url);
    const jobs = Math.ceil(allowed * 1.5);
    const sentAt: number[] = [];
    const start = Date.now();
    await Promise.all(
      Array.from({ length: jobs }, async (_, i) => {
        sentAt[i] = Date.now();
        await slack.command({ command: '/imagine', text: `lighthouse ${i} --quality low`, user: `U0B${i}`, channel: `C0B${i}` });
      }),
    );
    const shownAt = new Map<number, number>();
    const doneAt = new Map<number, number>();
    while (Date.now() < start + windowMs) {
      for (let i = 0; i < jobs; i++) {
        if (!shownAt.has(i) && slack.topLevel(`C0B${i}`).some((m) => m.files?.some((f) => !isPreviewFileName(f.name)))) shownAt.set(i, Date.now());
        if (doneAt.has(i)) continue;
        const message = jobMessages(slack, `C0B${i}`)[0];
        if (message && statusOf(message).includes('Done')) doneAt.set(i, Date.now());
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const accepted = emulator.requests.filter((r) => r.status === 200 && r.receivedAt <= start + windowMs).length;
    const latencies = [...shownAt].map(([i, at]) => at - sentAt[i]!).sort((a, b) => a - b);
    rows.push([
      String(count),
      String(accepted),
      (accepted / allowed).toFixed(3),
      String(shownAt.size),
      (shownAt.size / allowed).toFixed(3),
      (percentile(latencies, 50) / 1000).toFixed(1),
      (percentile(latencies, 99) / 1000).toFixed(1),
      String(doneAt.size),
      String(emulator.stats().rateLimited),
      String(slack.tier3Refusals.length),
      String(proxy.sent.join('/')),
    ]);
    await proxy.close();
  } finally {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }),
    );
    await deleteKeys(redisUrl, prefix);
    await slack.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}
await server.close();
console.log(`replicas: one account of ${ipm} images/min, ${windowMs / 1000} s window (allowed: a full bucket + the refill = ${Math.round(allowed)} jobs of 1 image)`);
printTable(['replicas', 'images accepted', 'accepted / allowed', 'results in the channel', 'in channel / allowed', 'median s', 'p99 s', 'messages showing Done', 'emulator 429s', 'Tier 3 refusals', 'commands per replica'], rows);
process.exit(0);
