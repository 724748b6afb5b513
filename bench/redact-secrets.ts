/**
 * What redaction costs on the error path: a 64 KiB error body passed through
 * `redactSecrets` 1,000 times (and through `sanitizeServiceText`, which redacts
 * a service's body before cutting it down for an error message), for two
 * bodies: an error page of prose and JSON with a few credentials echoed in it,
 * and a JSON body that is mostly base64 (a service echoing image data back).
 *
 * With `--compare-with DIR` (another checkout of Pictor, e.g. the commit
 * before a change to redaction), its `src/core/errors.ts` is loaded into the
 * same process and measured side by side: rounds alternate the two in rotating
 * order after the same warm-up, and the ratio of medians (this / other) is
 * printed. CPU time is this process's; each sample is 1,000 calls.
 *
 * Usage: node --import tsx bench/redact-secrets.ts [--rounds 15] [--warmup 2] [--calls 1000] [--compare-with DIR]
 */
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { redactSecrets, sanitizeServiceText } from '../src/internal.js';
import { collectGarbage, median, ms, positiveInt, printTable, ratio, relativeIqr, timed } from './helpers/measure.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '2' },
    calls: { type: 'string', default: '1000' },
    'compare-with': { type: 'string' },
  },
});
const ROUNDS = positiveInt('rounds', args.rounds);
const WARMUP = Number(args.warmup);
if (!Number.isInteger(WARMUP) || WARMUP < 0) throw new RangeError('--warmup must be a whole number of at least 0');
const CALLS = positiveInt('calls', args.calls);

interface Redaction {
  redactSecrets: (text: string) => string;
  sanitizeServiceText: (text: string) => string;
}

const contenders: Record<string, Redaction> = { this: { redactSecrets, sanitizeServiceText } };
if (args['compare-with']) {
  const other = (await import(pathToFileURL(join(resolve(args['compare-with']), 'src/core/errors.ts')).href)) as Redaction;
  contenders.other = { redactSecrets: other.redactSecrets, sanitizeServiceText: other.sanitizeServiceText };
}

const SIZE = 64 * 1024;

/** An error page: prose, JSON and echoed request lines, a few credentials among them. */
function proseBody(): string {
  const lines = [
    '{"error":{"message":"Access denied. The request was rejected before billing; check the key and retry (incident 7781).","type":"invalid_request_error","code":"invalid_api_key"}}',
    'POST /v1/images/generations HTTP/1.1 Host: api.example.test Content-Type: application/json Authorization: Bearer sk-proj-0123456789abcdefABCDEF',
    '<p>This server could not verify that you are authorized to access the document requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.</p>',
    'GET https://h.test/login?user=bob&password=hunter2&next=%2Fhome returned 500; the token expired at 12:00 and a new one was not issued.',
    `{"ok":false,"error":"invalid_auth","warning":"missing_charset","token":"${['xoxb', '17653672481', '19874698323', 'pdFZKVeTuE8sk7oOcBrzbqgy'].join('-')}"}`,
    'The AWS Access Key Id you provided does not exist in our records. Your prompt was: a lighthouse at dusk, oil on canvas, 1536x1024, quality high.',
  ];
  let out = '';
  for (let i = 0; out.length < SIZE; i++) out += `${lines[i % lines.length]}\n`;
  return out.slice(0, SIZE);
}

/** A JSON body that is mostly base64: long runs of letters and digits with no credential in them. */
function base64Body(): string {
  let seed = 7;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let data = '';
  while (data.length < SIZE) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    data += alphabet[seed % 64];
  }
  return `{"error":{"message":"the image could not be read","echo":"${data}"}}`.slice(0, SIZE);
}

const BODIES = { prose: proseBody(), base64: base64Body() } as const;
const OPERATIONS = ['redactSecrets', 'sanitizeServiceText'] as const;

// What each version makes of the bodies (a version hiding more may leave fewer characters).
for (const [name, body] of Object.entries(BODIES)) {
  for (const [who, c] of Object.entries(contenders)) console.log(`${who}: ${name} body of ${body.length} characters → ${c.redactSecrets(body).length} after redaction`);
}

type Key = `${string}/${string}/${string}`;
const samples = new Map<Key, number[]>();
const names = Object.keys(contenders);
for (let round = -WARMUP; round < ROUNDS; round++) {
  const order = names.map((_, i) => names[(i + Math.max(round, 0)) % names.length]!);
  for (const who of order) {
    for (const op of OPERATIONS) {
      for (const [bodyName, body] of Object.entries(BODIES)) {
        const fn = contenders[who]![op];
        collectGarbage();
        const { cpuMs } = await timed(async () => {
          for (let i = 0; i < CALLS; i++) fn(body);
        });
        if (round >= 0) {
          const key: Key = `${who}/${op}/${bodyName}`;
          samples.set(key, [...(samples.get(key) ?? []), cpuMs]);
        }
      }
    }
  }
}

console.log(`\n${CALLS} calls per sample, median of ${ROUNDS} rounds (CPU time of this process; IQR as a share of the median)\n`);
const rows: string[][] = [];
for (const op of OPERATIONS) {
  for (const bodyName of Object.keys(BODIES)) {
    const mine = samples.get(`this/${op}/${bodyName}`)!;
    const other = samples.get(`other/${op}/${bodyName}`);
    rows.push([
      op,
      bodyName,
      `${ms(median(mine))} (${(relativeIqr(mine) * 100).toFixed(0)} %)`,
      other ? `${ms(median(other))} (${(relativeIqr(other) * 100).toFixed(0)} %)` : '–',
      other ? ratio(median(mine), median(other)) : '–',
      `${((median(mine) / CALLS) * 1000).toFixed(0)} µs`,
    ]);
  }
}
printTable(['call', 'body (64 KiB)', 'this checkout', 'other checkout', 'this / other', 'this, per call'], rows);
