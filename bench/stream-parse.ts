/**
 * How the Pictor client's stream parsing scales with the size of one event:
 * a stream whose single completed event is 15 MiB of base64 vs one of 30 MiB.
 * Linear parsing takes about twice as long for twice the bytes (ratio ≈ 2);
 * re-scanning or re-joining a growing buffer would show up as ≈ 4.
 *
 * The bodies come pre-built from a child process (helpers/sse-server.ts), so
 * neither the emulator's image encoding nor the server's CPU is in the numbers:
 * wall time is transfer + parsing, CPU time is this process's alone. A bare
 * undici reader (helpers/contenders.ts `readSse` + JSON.parse) runs alongside
 * as a reference. Sizes and readers alternate in order, with a full GC before
 * each read (outside the timed window).
 *
 * Usage: node --import tsx bench/stream-parse.ts [--rounds 20] [--warmup 2]
 */
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { DEV_API_KEY } from '../src/emulator/index.js';
import { PictorClient } from '../src/index.js';
import { MODEL, PATHS } from '../src/spec/index.js';
import { startChildServer } from './helpers/child-server.js';
import { readSse } from './helpers/contenders.js';
import { collectGarbage, median, ms, printTable, timed } from './helpers/measure.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '2' },
  },
});
const ROUNDS = Number(args.rounds);
const WARMUP = Number(args.warmup);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || !Number.isInteger(WARMUP) || WARMUP < 0) {
  throw new RangeError('--rounds must be a whole number of at least 1 and --warmup one of at least 0');
}

const SIZES_MIB = [15, 30] as const;
type SizeMiB = (typeof SIZES_MIB)[number];
const READERS = ['pictor', 'undici'] as const;
type Reader = (typeof READERS)[number];

const server = await startChildServer('./sse-server.ts', [SIZES_MIB.join(',')]);
try {
  const read = readers(server.url);
  const samples = Object.fromEntries(READERS.map((r) => [r, Object.fromEntries(SIZES_MIB.map((s) => [s, [] as { wallMs: number; cpuMs: number }[]]))])) as Record<
    Reader,
    Record<SizeMiB, { wallMs: number; cpuMs: number }[]>
  >;

  for (let round = -WARMUP; round < ROUNDS; round++) {
    const sizes = round % 2 === 0 ? SIZES_MIB : [...SIZES_MIB].reverse();
    const order = round % 2 === 0 ? READERS : [...READERS].reverse();
    for (const reader of order) {
      for (const size of sizes) {
        collectGarbage();
        const { value: chars, wallMs, cpuMs } = await timed(() => read[reader](size));
        const expected = size * 1024 * 1024;
        if (Math.abs(chars - expected) > 4) throw new Error(`${reader} read ${chars} base64 characters from the ${size} MiB event, expected ${expected}`);
        if (round >= 0) samples[reader][size].push({ wallMs, cpuMs });
      }
    }
  }

  console.log(`# Stream parsing: one ${SIZES_MIB.join(' MiB vs one ')} MiB SSE event (median of ${ROUNDS}, after ${WARMUP} warm-up rounds)\n`);
  const rows: string[][] = [];
  for (const reader of READERS) {
    for (const size of SIZES_MIB) {
      const wall = median(samples[reader][size].map((s) => s.wallMs));
      const cpu = median(samples[reader][size].map((s) => s.cpuMs));
      rows.push([reader, `${size} MiB`, ms(wall), ms(cpu), `${((size * 1000) / wall).toFixed(0)} MiB/s`]);
    }
  }
  printTable(['reader', 'event size', 'wall', 'CPU (this process)', 'throughput (wall)'], rows);

  console.log('\n## 30 MiB ÷ 15 MiB (2.00 = linear)\n');
  const [small, large] = SIZES_MIB;
  printTable(
    ['reader', 'wall ratio', 'CPU ratio'],
    READERS.map((reader) => {
      const m = (size: SizeMiB, key: 'wallMs' | 'cpuMs') => median(samples[reader][size].map((s) => s[key]));
      return [reader, `${(m(large, 'wallMs') / m(small, 'wallMs')).toFixed(2)}×`, `${(m(large, 'cpuMs') / m(small, 'cpuMs')).toFixed(2)}×`];
    }),
  );
} finally {
  await server.close();
}

/** Each reader reads one streamed generation and returns how many base64 characters its events carried. */
function readers(url: string): Record<Reader, (size: SizeMiB) => Promise<number>> {
  const clients = new Map(SIZES_MIB.map((size) => [size, new PictorClient({ baseURL: `${url}/${size}mb`, apiKey: DEV_API_KEY, maxRetries: 0 })]));
  const input = { model: MODEL, prompt: 'one very large event', partial_images: 0 };
  return {
    async pictor(size) {
      let chars = 0;
      for await (const event of clients.get(size)!.generateStream(input)) chars += event.b64_json.length;
      return chars;
    },
    async undici(size) {
      const res = await request(`${url}/${size}mb${PATHS.generations}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEV_API_KEY}`, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ ...input, stream: true }),
      });
      let chars = 0;
      await readSse(res.body, (data) => {
        chars += (JSON.parse(data) as { b64_json: string }).b64_json.length;
      });
      return chars;
    },
  };
}
