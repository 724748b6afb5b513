/**
 * Child-process entry of `measureEditMemory` (edit-memory.ts): a Discord bot process as `npm start` runs one — the
 * real discord.js client inside `startDiscordBot`, one `JobRunner` at its defaults (or the input bound given), one
 * `PictorClient` — logged in to a fake Discord and sending to an image service, both in other processes, so its
 * memory is the bot's alone. It prints one JSON line per step and waits for the parent's word on stdin:
 *
 * - after start: `{"ready": true}`;
 * - `baseline`: two full GCs, then its RSS is the idle footprint, the kernel's high-water mark is reset
 *   (`/proc/self/clear_refs` ← 5) and the input bytes the runner holds (`queuedInputBytes`, what the bound counts)
 *   are sampled every millisecond: `{"idleRss": n}`;
 * - `report`: `{"idleRss", "peakRss" (VmHWM), "maxInputBytesHeld", "atPeak"}` (`process.memoryUsage()` when the
 *   sampled RSS was highest), then it stops.
 *
 * Config (argv[2], JSON): `root` (a checkout whose `bots/` and `src/` are loaded: this one by default, another to
 * compare), `dist` (load the build, `dist/`, as production runs it), `apiBaseUrl`, `token`, `cdnHost`,
 * `emulatorUrl`, `apiKey`, `maxQueuedInputBytes` (default the runner's), `dataDir` (the parent's to remove: it stops
 * this process with a signal once it has its report).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

interface ProbeConfig {
  root?: string;
  dist?: boolean;
  apiBaseUrl: string;
  token: string;
  cdnHost: string;
  emulatorUrl: string;
  apiKey: string;
  maxQueuedInputBytes?: number;
  dataDir: string;
}

const config = JSON.parse(process.argv[2] ?? '{}') as ProbeConfig;
const root = config.root ?? fileURLToPath(new URL('../../', import.meta.url));
const load = (path: string) => import(pathToFileURL(join(root, config.dist ? `dist/${path}.js` : `${path}.ts`)).href);
const { startDiscordBot } = (await load('bots/discord/index')) as typeof import('../../bots/discord/index.js');
const { FileQuotaStore, JobRunner } = (await load('bots/runner/index')) as typeof import('../../bots/runner/index.js');
const { PictorClient } = (await load('src/index')) as typeof import('../../src/index.js');
// A checkout from before the internal entry (a `root` to compare with) had the helpers in its index.
const { silentLogger } = (await load('src/internal').catch(() => load('src/index'))) as typeof import('../../src/internal.js');

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const peakRss = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;

const { dataDir } = config;
const store = new FileQuotaStore({ dir: dataDir });
const logger = silentLogger();
const runner = new JobRunner({
  client: new PictorClient({ baseURL: config.emulatorUrl, apiKey: config.apiKey, maxRetries: 0 }),
  store,
  limits: {},
  partialImages: 0,
  logger,
  ...(config.maxQueuedInputBytes !== undefined && { maxQueuedInputBytes: config.maxQueuedInputBytes }),
});
// The bots' state in the data folder, as `npm start` keeps it without Redis (a checkout from before the state room took the folder itself).
const stateModule = (await load('bots/state/index')) as Partial<typeof import('../../bots/state/index.js')>;
const state = stateModule.openBotState ? await stateModule.openBotState({ dataDir, ledger: store, logger }) : undefined;
const bot = await startDiscordBot({ token: config.token, apiBaseUrl: config.apiBaseUrl, runner, ...((state ? { state } : { dataDir }) as { state: NonNullable<typeof state> }), logger, allowedAttachmentHosts: [config.cdnHost] });
const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
say({ ready: true });

let idleRss = 0;
let maxInputBytesHeld = 0;
let sampler: NodeJS.Timeout | undefined;
/** `process.memoryUsage()` when the sampled RSS was highest: where the memory was. */
let atPeak = process.memoryUsage();
const held = () => runner.liveReadings().queuedInputBytes();
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'baseline') {
    gc();
    gc();
    atPeak = process.memoryUsage();
    idleRss = atPeak.rss;
    say({ idleRss });
    writeFileSync('/proc/self/clear_refs', '5');
    maxInputBytesHeld = 0;
    sampler = setInterval(() => {
      maxInputBytesHeld = Math.max(maxInputBytesHeld, held());
      const now = process.memoryUsage();
      if (now.rss > atPeak.rss) atPeak = now;
    }, 1);
  } else if (line === 'report') {
    clearInterval(sampler);
    say({ idleRss, peakRss: peakRss(), maxInputBytesHeld, atPeak });
    break;
  }
}
await runner.shutdown({ graceMs: 0 });
await bot.stop();
await state?.close();
await store.close();
process.exit(0);
