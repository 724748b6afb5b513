/**
 * The console's cost, in two parts.
 *
 * 1. How fast the spend page answers with a big ledger: 100,000 usage records
 *    (90 days, four surfaces, 60 servers/workspaces, 3,000 users) and 1,000
 *    jobs whose images the Discord bot keeps, on the file ledger and on Redis
 *    (`PICTOR_BENCH_REDIS_URL` / `PICTOR_TEST_REDIS_URL`, else a throwaway
 *    redis-server from PATH, else skipped). Printed: the first page after a
 *    start (it waits for the first read of every record), then the spend page
 *    `--pages` times (default 40) and the jobs page 10 times, one after the
 *    other: median, p95 and the slowest, with a job settling between every few
 *    pages (so each page has new records to take in). Goal: ≤ 200 ms.
 *
 * 2. What the console adds to a bot's CPU in a burst: `bench/discord-imagine.ts`
 *    (100 jobs by default, `--jobs N`) run `--rounds` times (default 3) each
 *    way, alternating which goes first, in processes of their own: plain, and
 *    with `PICTOR_BENCH_CONSOLE=1` (the console served from the bot's process
 *    on its ledger, with a browser's worth of load from another process: the
 *    jobs page's live updates held open, the spend page every 2 s, the jobs page
 *    every 5 s). Printed: CPU per job each way (median) and their ratio. Goal: ≤ 1.05.
 *
 *   node --import tsx bench/console.ts [--part pages|cpu|both] [--records N] [--pages N] [--jobs N] [--rounds N]
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { botsConsoleView } from '../bots/console-view.js';
import { JobRecordStore } from '../bots/discord/JobRecordStore.js';
import { readRunnerConfig } from '../bots/runner/config.js';
import { JobRunner } from '../bots/runner/index.js';
import { openBotState, type BotState } from '../bots/state/index.js';
import { startConsole } from '../src/console/index.js';
import { DEFAULT_ALERT_THRESHOLDS } from '../src/console/alerts/config.js';
import { PictorClient } from '../src/index.js';
import { closeRedis, connectRedis, RedisLink, silentLogger } from '../src/internal.js';
import { FileQuotaStore } from '../src/spend/FileQuotaStore.js';
import { RedisQuotaStore } from '../src/spend/RedisQuotaStore.js';
import type { QuotaStore, UsageRecord } from '../src/spend/types.js';
import { startThrowawayRedis } from '../test/setup/redis-server.js';
import { REPO_ROOT } from './helpers/child-server.js';
import { median, percentile } from './helpers/measure.js';

const flag = (name: string): string | undefined => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? undefined : process.argv[at + 1];
};
const PART = flag('part') ?? 'both';
const RECORDS = Number(flag('records') ?? 100_000);
const PAGES = Number(flag('pages') ?? 40);
const KEPT_JOBS = 1000;
const BURST_JOBS = Number(flag('jobs') ?? 100);
const ROUNDS = Number(flag('rounds') ?? 3);
const TOKEN = 'bench-console-token-0123456789';
const DAY = 24 * 60 * 60_000;

/** A big ledger's worth of records: 90 days, most on Discord, then Slack, the CLI and n8n. */
function* records(count: number, now: number): Generator<UsageRecord> {
  const qualities = ['low', 'medium', 'high'] as const;
  const prices = { low: 0.011, medium: 0.042, high: 0.167 };
  for (let i = 0; i < count; i++) {
    const roll = i % 20;
    const surface = roll < 12 ? 'discord' : roll < 17 ? 'slack' : roll < 19 ? 'cli' : 'n8n';
    const scope = surface === 'discord' ? `discord:${100000000000000000 + (i % 40)}` : surface === 'slack' ? `slack:T${i % 20}` : surface;
    const user = surface === 'cli' ? 'cli:owner' : surface === 'n8n' ? `n8n:wf-${i % 5}` : `${surface}:${surface === 'slack' ? `U${i % 1000}` : 200000000000000000 + (i % 2000)}`;
    const quality = qualities[i % 3]!;
    const n = 1 + (i % 4 === 0 ? 1 : 0);
    const time = now - Math.floor((i / count) * 90 * DAY) - 60_000;
    const day = new Date(time).toISOString().slice(0, 10);
    yield {
      jobId: `bench-${i}`,
      time,
      day,
      month: day.slice(0, 7),
      surface,
      userKey: user,
      scopeKey: scope,
      operation: 'generate',
      n,
      size: '1024x1024',
      quality,
      costUsd: prices[quality] * n,
      basis: 'table',
      outcome: 'completed',
      reservedAt: time - 20_000,
      images: n,
    };
  }
}

/** One `usage.jsonl` as versions before wrote it (its rewrite line, then the records oldest first): the ledger's open moves it into day files. */
async function seedFile(dir: string, now: number): Promise<void> {
  const lines: string[] = [];
  for (const record of records(RECORDS, now)) lines.push(JSON.stringify(record));
  await mkdir(dir, { recursive: true });
  const rewrite = JSON.stringify({ rewrite: '0123456789abcdef' });
  await writeFile(join(dir, 'usage.jsonl'), `${[rewrite, ...lines.reverse()].join('\n')}\n`, { mode: 0o600 });
}

/** The Redis stream as the settle script writes it (amounts in nano-dollars, the job's details as JSON). */
async function seedRedis(url: string, prefix: string, now: number): Promise<void> {
  const redis = await connectRedis(url);
  const all = [...records(RECORDS, now)].reverse();
  for (let i = 0; i < all.length; i += 5000) {
    const pipeline = redis.pipeline();
    for (const r of all.slice(i, i + 5000)) {
      const entry = {
        jobId: r.jobId,
        time: r.time,
        day: r.day,
        month: r.month,
        userKey: r.userKey,
        scopeKey: r.scopeKey,
        nanos: Math.round(r.costUsd * 1e9),
        basis: r.basis,
        reservedNanos: Math.round(r.costUsd * 1.5e9),
        reservedAt: r.reservedAt,
        outcome: r.outcome,
        images: r.images,
        job: JSON.stringify({ operation: 'generate', n: r.n, size: r.size, quality: r.quality }),
      };
      pipeline.xadd(`${prefix}:quota:usage`, '*', 'r', JSON.stringify(entry));
    }
    await pipeline.exec();
  }
  await closeRedis(redis);
}

/** 1,000 Discord jobs whose final image the bot keeps (for its buttons, and the console's thumbnails), linked to their ledger jobs. */
async function keepJobs(state: BotState): Promise<void> {
  const jobs = new JobRecordStore({ state, logger: silentLogger() });
  const image = await sharp({ create: { width: 96, height: 96, channels: 3, background: { r: 30, g: 60, b: 90 } } }).png().toBuffer();
  for (let i = 0; i < KEPT_JOBS; i++) {
    const key = `kept${i}`;
    await jobs.add({ key, kind: 'generate', prompt: `kept ${i}`, options: {}, requester: { platform: 'discord', userId: '1', channelId: '2', scopeId: '3' }, status: 'completed', runnerJobId: `bench-${i}` });
    await jobs.saveOutputs(key, [image], ['png']);
  }
}

/** `tellReconciles`: as `startConsole` takes it, wired to the store's `onReconciled`. */
async function measurePages(kind: 'file' | 'redis', store: QuotaStore, state: BotState, tellReconciles: (reconciled: () => void) => void): Promise<void> {
  const runner = new JobRunner({ client: new PictorClient({ baseURL: 'http://127.0.0.1:9', apiKey: 'unused', maxRetries: 0 }), store, limits: {} });
  const running = (await startConsole({
    source: {
      store,
      operator: { caps: { accountDailyUsd: 500, accountMonthlyUsd: 10_000, scopeDailyUsd: 50, userDailyUsd: 5 }, dmCaps: {}, breaker: { factor: 10, floorUsd: 5 }, imagesPerMinute: 50, ledger: 'account' },
      bots: botsConsoleView({ runner, runnerConfig: readRunnerConfig({}, {}), state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() }),
    },
    config: { port: 0, host: '127.0.0.1', token: TOKEN, allowChanges: false },
    alerts: { thresholds: DEFAULT_ALERT_THRESHOLDS, breaker: true, checkMs: 60_000, discord: undefined, slack: undefined, webhook: undefined },
    ledgerWhere: kind,
    logger: silentLogger(),
    tellReconciles,
  }))!;
  try {
    const login = await fetch(`${running.url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }), redirect: 'manual', headers: { origin: running.url! } });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const get = async (path: string) => {
      const start = performance.now();
      const res = await fetch(`${running.url}${path}`, { headers: { cookie } });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
      return { ms: performance.now() - start, bytes: body.length };
    };
    const first = await get('/spend');
    const spend: number[] = [];
    let settled = 0;
    for (let i = 0; i < PAGES; i++) {
      // New records arrive as the page is used: a job settles every few pages.
      if (i % 4 === 0) {
        const jobId = `live-${kind}-${i}`;
        await store.reserve({ jobId, userKey: 'discord:9', scopeKey: 'discord:8', estimateUsd: 0.2, limits: {}, now: Date.now() });
        await store.markSent(jobId);
        await store.settle(jobId, 0.042, { outcome: 'completed', images: 1 });
        settled++;
      }
      spend.push((await get(i % 2 ? '/spend' : '/spend?days=90')).ms);
    }
    const jobsPages: number[] = [];
    for (let i = 0; i < 10; i++) jobsPages.push((await get('/jobs')).ms);
    const sorted = [...spend].sort((a, b) => a - b);
    const sortedJobs = [...jobsPages].sort((a, b) => a - b);
    console.log(`${kind} ledger, ${RECORDS.toLocaleString('en-US')} usage records, ${KEPT_JOBS} kept jobs:`);
    console.log(`  first spend page after a start (reads every record): ${first.ms.toFixed(0)} ms (${Math.round(first.bytes / 1024)} KB)`);
    console.log(`  spend page x${PAGES} (${settled} jobs settled meanwhile): median ${median(spend).toFixed(1)} ms, p95 ${percentile(sorted, 95).toFixed(1)} ms, slowest ${sorted.at(-1)!.toFixed(1)} ms (goal ≤ 200 ms)`);
    console.log(`  jobs page x10 (thumbnails of kept images): median ${median(jobsPages).toFixed(1)} ms, p95 ${percentile(sortedJobs, 95).toFixed(1)} ms`);
    console.log(`  RSS of this process: ${Math.round(process.memoryUsage.rss() / 2 ** 20)} MB`);
  } finally {
    await running.close();
  }
}

async function pagesPart(): Promise<void> {
  const now = Date.now();
  const dir = await mkdtemp(join(tmpdir(), 'pictor-console-bench-'));
  try {
    await seedFile(dir, now);
    let reconciled: (() => void) | undefined;
    const store = new FileQuotaStore({ dir, onReconciled: () => reconciled?.() });
    await store.open();
    const state = await openBotState({ dataDir: dir, ledger: store, logger: silentLogger() });
    await keepJobs(state);
    await measurePages('file', store, state, (tell) => void (reconciled = tell));
    await state.close();
    await store.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  let url = process.env.PICTOR_BENCH_REDIS_URL ?? process.env.PICTOR_TEST_REDIS_URL;
  const throwaway = url ? undefined : await startThrowawayRedis();
  url ??= throwaway?.url;
  if (!url) {
    console.log('redis ledger: skipped (no Redis: set PICTOR_BENCH_REDIS_URL, or put redis-server on PATH)');
    return;
  }
  const prefix = `pictor-bench-console-${process.pid}`;
  try {
    await seedRedis(url, prefix, now);
    const link = await RedisLink.open({ url, prefix });
    let reconciled: (() => void) | undefined;
    const store = new RedisQuotaStore({ redis: link.commands, prefix, onReconciled: () => reconciled?.() });
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-console-bench-'));
    const state = await openBotState({ dataDir, redis: link, leaseMs: 15_000, ledger: store, logger: silentLogger() });
    await keepJobs(state);
    await measurePages('redis', store, state, (tell) => void (reconciled = tell));
    await state.close();
    await store.close();
    await link.close();
    await rm(dataDir, { recursive: true, force: true });
  } finally {
    const redis = await connectRedis(url);
    for (const pattern of [`${prefix}:*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== '0');
    }
    await closeRedis(redis);
    await throwaway?.stop();
  }
}

/** One run of the Discord burst bench in a process of its own; its CPU per job. */
function burst(withConsole: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bench/discord-imagine.ts'), '--jobs', String(BURST_JOBS), '--light-previews', 'on'], {
      cwd: REPO_ROOT,
      env: { ...process.env, PICTOR_BENCH_CONSOLE: withConsole ? '1' : '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const cpu = /CPU per job: ([\d.]+) ms/.exec(output);
      const served = /console: (.*)$/m.exec(output);
      if (code !== 0 || !cpu) return reject(new Error(`discord-imagine exited ${code}: ${output.slice(-500)}`));
      console.log(`  ${withConsole ? 'with the console   ' : 'without the console'}: ${cpu[1]} ms CPU per job${served ? ` (${served[1]})` : ''}`);
      resolve(Number(cpu[1]));
    });
  });
}

async function cpuPart(): Promise<void> {
  console.log(`Discord burst (${BURST_JOBS} jobs, bench/discord-imagine.ts), ${ROUNDS} rounds each way, alternating:`);
  const plain: number[] = [];
  const console_: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const withConsole of round % 2 ? [true, false] : [false, true]) (withConsole ? console_ : plain).push(await burst(withConsole));
  }
  const ratio = median(console_) / median(plain);
  console.log(`  CPU per job, median: without ${median(plain).toFixed(1)} ms, with the console ${median(console_).toFixed(1)} ms: ${ratio.toFixed(3)}× (goal ≤ 1.05)`);
}

if (PART === 'pages' || PART === 'both') await pagesPart();
if (PART === 'cpu' || PART === 'both') await cpuPart();
