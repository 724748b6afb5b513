/**
 * 50 concurrent `/imagine` jobs through real Bolt (HTTP receiver, signed
 * requests), the real job runner and the emulator, against the fake Slack,
 * which refuses (429) any write to a channel less than 1 s after the last one,
 * as Slack does. Prints whether every job finished, how many writes Slack
 * refused (the goal is zero), and how long a preview took from the runner to
 * Slack.
 *
 *   node --import tsx bench/slack-imagine.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileQuotaStore, JobRunner } from '../bots/runner/index.js';
import { DEFAULT_FILE_HOSTS, startSlackBot, type ShownEvent } from '../bots/slack/index.js';
import { createEmulator, DEV_API_KEY } from '../src/emulator/index.js';
import { ImageLimiter, PictorClient, silentLogger } from '../src/index.js';
import { FakeSlack } from '../test/fakes/slack/FakeSlack.js';

const JOBS = 50;
const CHANNELS = 10;
/** Slack's pace: about one write per second per channel. Both the fake and the bot use it. */
const CHANNEL_INTERVAL_MS = 1000;
/** Per image, spread over its previews and the final image, as the emulator does. */
const IMAGE_LATENCY_MS = 4000;
const PARTIAL_IMAGES = 2;
const MAX_CONCURRENT_REQUESTS = 10;
const DEADLINE_MS = 150_000;

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
const ms = (n: number) => (Number.isFinite(n) ? `${Math.round(n)} ms` : 'n/a');

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pictor-slack-bench-'));
  const fake = await new FakeSlack({ channelWriteIntervalMs: CHANNEL_INTERVAL_MS }).start();
  const emulator = createEmulator({ latencyMs: IMAGE_LATENCY_MS, defaultPartialImages: PARTIAL_IMAGES });
  const server = await emulator.listen({ port: 0 });
  const limiter = new ImageLimiter({ maxConcurrent: MAX_CONCURRENT_REQUESTS });
  const client = new PictorClient({ baseURL: server.url, apiKey: DEV_API_KEY, limiter });
  const store = new FileQuotaStore({ dir: dataDir });
  const runner = new JobRunner({ client, store, limits: {}, partialImages: PARTIAL_IMAGES });
  const shown: ShownEvent[] = [];
  const bot = await startSlackBot({
    botToken: fake.botToken,
    signingSecret: fake.signingSecret,
    mode: 'http',
    port: 0,
    host: '127.0.0.1',
    apiUrl: fake.apiUrl,
    runner,
    dataDir,
    allowedFileHosts: [...DEFAULT_FILE_HOSTS, fake.fileHost],
    logger: silentLogger(),
    channelWriteIntervalMs: CHANNEL_INTERVAL_MS,
    onUpdateShown: (event) => shown.push(event),
  });
  fake.deliverOverHttp(bot.url!);

  const started = Date.now();
  const acks = await Promise.all(
    Array.from({ length: JOBS }, (_, i) =>
      fake.command({
        command: '/imagine',
        text: `bench scene ${i + 1}, a lighthouse in a storm --quality low`,
        user: `U${String(i + 1).padStart(4, '0')}`,
        channel: `C0BENCH${String(i % CHANNELS).padStart(2, '0')}`,
      }),
    ),
  );
  const finished = () =>
    fake.messages.filter((m) => m.user === fake.botUserId && (m.blocks ?? []).some((b) => JSON.stringify(b).includes(':white_check_mark: Done'))).length;
  let timedOut = false;
  try {
    await fake.waitFor(() => finished() >= JOBS, `${JOBS} finished jobs`, DEADLINE_MS);
  } catch {
    timedOut = true;
  }
  const wallMs = Date.now() - started;

  const previews = shown.filter((e) => e.type === 'partial');
  const shownPreviews = previews.filter((e) => !e.superseded).map((e) => e.shownAt - e.receivedAt).sort((a, b) => a - b);
  const allPreviews = previews.map((e) => e.shownAt - e.receivedAt).sort((a, b) => a - b);
  const queued = shown.filter((e) => e.type === 'queued' || e.type === 'started').map((e) => e.shownAt - e.receivedAt).sort((a, b) => a - b);
  const writes = fake.writes;
  const rejected = fake.rejectedWrites.length;
  const perChannel = new Map<string, number[]>();
  for (const w of writes.filter((x) => !x.rejected)) perChannel.set(w.channel, [...(perChannel.get(w.channel) ?? []), w.at]);
  let closestGap = Infinity;
  for (const times of perChannel.values()) for (let i = 1; i < times.length; i++) closestGap = Math.min(closestGap, times[i]! - times[i - 1]!);

  const lines = [
    `jobs: ${JOBS} over ${CHANNELS} channels, ${PARTIAL_IMAGES} previews each, ${IMAGE_LATENCY_MS} ms per image, ${MAX_CONCURRENT_REQUESTS} requests at once`,
    `acknowledged: ${acks.filter((a) => a.status === 200).length}/${JOBS}`,
    `finished: ${finished()}/${JOBS}${timedOut ? ' (DEADLINE REACHED)' : ''} in ${(wallMs / 1000).toFixed(1)} s`,
    `channel writes: ${writes.length - rejected} accepted, ${rejected} refused with 429; closest two writes to one channel: ${ms(closestGap)}`,
    `preview → visible in Slack (shown on its own, n=${shownPreviews.length}): median ${ms(percentile(shownPreviews, 50))}, p99 ${ms(percentile(shownPreviews, 99))}`,
    `preview → visible, counting ${previews.length - shownPreviews.length} previews replaced by a newer one or the final image: median ${ms(percentile(allPreviews, 50))}, p99 ${ms(percentile(allPreviews, 99))}`,
    `queued/started → message updated (n=${queued.length}): median ${ms(percentile(queued, 50))}, p99 ${ms(percentile(queued, 99))}`,
  ];
  for (const line of lines) console.log(line);

  await bot.stop();
  await runner.shutdown({ graceMs: 1000 });
  await store.close();
  await limiter.stop();
  await emulator.close();
  await fake.close();
  await rm(dataDir, { recursive: true, force: true });
  if (timedOut || rejected > 0 || finished() < JOBS) process.exitCode = 1;
}

await main();
