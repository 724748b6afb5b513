/**
 * What redaction costs on the error path and on every log line: texts passed
 * through `redactSecrets` (and through `sanitizeServiceText`, which redacts a
 * service's body before cutting it down for an error message). Three texts: a
 * short log line, a 64 KiB error page of prose and JSON with a few credentials
 * echoed in it, and a 64 KiB JSON body that is mostly base64 (a service
 * echoing image data back).
 *
 * Both are measured with no secret registered and with one key registered,
 * as every process with a client has (the client registers its key): a
 * registered key is looked for in every text, in every form and as pieces of
 * it (see `src/core/redact-secrets.ts`). The registry is the process's, so
 * `errors.ts` and its redaction module are loaded twice, each pair with a
 * registry of its own: one left empty, one holding the key. The texts do not
 * hold the key: what is measured is the cost of looking for it.
 *
 * With `--compare-with DIR` (another checkout of Pictor, e.g. the commit
 * before a change to redaction), its `src/core/errors.ts` and
 * `src/core/redact-secrets.ts` (twice, as above) are loaded into the
 * same process and measured side by side. Rounds alternate the versions in
 * rotating order after the same warm-up, and ratios of medians are printed: a
 * key / no key for each version, and this / other. CPU time is this process's;
 * a sample is `--calls` calls for a 64 KiB text and 100 times as many for the
 * short line.
 *
 * Usage: node --import tsx bench/redact-secrets.ts [--rounds 15] [--warmup 2] [--calls 1000] [--compare-with DIR]
 */
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { collectGarbage, median, positiveInt, printTable, ratio, relativeIqr, timed } from './helpers/measure.js';

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

type Redact = (text: string) => string;
interface Calls {
  redactSecrets: Redact;
  sanitizeServiceText: Redact;
}
interface Version {
  /** `redactSecrets` and `sanitizeServiceText` with no secret registered. */
  noKey: Calls;
  /** The same, of a registry of their own holding `KEY`, when the version has the redaction module to load apart. */
  aKey?: Calls;
}

/**
 * A key as the service hands them out (48 characters), made up here from a seeded generator, so that no key is written
 * in the repository and every run looks for the same one.
 */
const KEY = (() => {
  let seed = 11;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let body = '';
  while (body.length < 40) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    body += alphabet[seed % alphabet.length];
  }
  return `sk-proj-${body}`;
})();

/** What a module loaded a second time, for the key, is marked with: a module of its own, with a registry of its own. */
const WITH_A_KEY = '?with-a-key';
// `errors.ts` loaded with the mark imports its redaction module with it too, so its `sanitizeServiceText` redacts with
// the registry that holds the key (every other import it makes is the process's one).
register(
  `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (specifier === './redact-secrets.js' && context.parentURL?.endsWith(${JSON.stringify(WITH_A_KEY)})) return { ...resolved, url: resolved.url + ${JSON.stringify(WITH_A_KEY)} };
  return resolved;
}`)}`,
);

/** A checkout's redaction: its `errors.ts` as it is (nothing registered), and loaded apart with `KEY` registered. */
async function versionIn(dir: string, name: string): Promise<Version> {
  const errorsUrl = pathToFileURL(join(dir, 'src/core/errors.ts')).href;
  const errors = (await import(errorsUrl)) as Calls;
  const version: Version = { noKey: { redactSecrets: errors.redactSecrets, sanitizeServiceText: errors.sanitizeServiceText } };
  const module = join(dir, 'src/core/redact-secrets.ts');
  if (!existsSync(module)) {
    console.log(`${name}: no src/core/redact-secrets.ts to load apart: measured with no key only`);
    return version;
  }
  const keyedErrors = (await import(`${errorsUrl}${WITH_A_KEY}`)) as Calls;
  const keyed = (await import(`${pathToFileURL(module).href}${WITH_A_KEY}`)) as { registerSecret: (secret: string) => void };
  keyed.registerSecret(KEY);
  const hidden = (calls: Calls) => calls.redactSecrets(`key ${KEY}`) === 'key [redacted]' && calls.sanitizeServiceText(`key ${KEY}`) === 'key [redacted]';
  if (!hidden(keyedErrors) || hidden(version.noKey)) throw new Error(`${name}: the key is not registered in its own registry alone`);
  version.aKey = { redactSecrets: keyedErrors.redactSecrets, sanitizeServiceText: keyedErrors.sanitizeServiceText };
  return version;
}

const versions: Record<string, Version> = { this: await versionIn(fileURLToPath(new URL('..', import.meta.url)), 'this') };
if (args['compare-with']) versions.other = await versionIn(resolve(args['compare-with']), 'other');

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

/** A log line as a bot writes one for each job: short, with an id of letters and digits in it. */
const LOG_LINE =
  '{"level":30,"time":1735732800000,"pid":4242,"msg":"job finished","jobId":"01HZX4K9Q7ABCDEFGHJKMNPQ","scope":"discord:G1","size":"1536x1024","images":2,"costUsd":0.084}';

const TEXTS = { 'log line': LOG_LINE, 'prose (64 KiB)': proseBody(), 'base64 (64 KiB)': base64Body() } as const;
type TextName = keyof typeof TEXTS;
/** Calls in a sample: 100 times as many for the short line, so that a sample takes about as long. */
const callsFor = (text: TextName): number => (text === 'log line' ? CALLS * 100 : CALLS);

interface Case {
  call: 'redactSecrets' | 'sanitizeServiceText';
  key: 'no key' | 'a key';
  text: TextName;
}
const CASES: Case[] = [];
for (const text of Object.keys(TEXTS) as TextName[]) {
  for (const call of ['redactSecrets', 'sanitizeServiceText'] as const) for (const key of ['no key', 'a key'] as const) CASES.push({ call, key, text });
}
/** The call of a case; none for a key where the version has no redaction module to load apart. */
const fnOf = (version: Version, { call, key }: Case): Redact | undefined => (key === 'a key' ? version.aKey?.[call] : version.noKey[call]);

// What each version makes of the texts (a version hiding more may leave fewer characters).
for (const [name, text] of Object.entries(TEXTS)) {
  for (const [who, version] of Object.entries(versions)) {
    const keyed = version.aKey ? `, ${version.aKey.redactSecrets(text).length} with a key registered` : '';
    console.log(`${who}: ${name}, ${text.length} characters → ${version.noKey.redactSecrets(text).length} after redaction with no key${keyed}`);
  }
}

/** Microseconds per call, a sample each round, by version and case. */
const samples = new Map<string, number[]>();
const sampleKey = (who: string, { call, key, text }: Case) => `${who}/${call}/${key}/${text}`;
const names = Object.keys(versions);
for (let round = -WARMUP; round < ROUNDS; round++) {
  const order = names.map((_, i) => names[(i + Math.max(round, 0)) % names.length]!);
  for (const who of order) {
    for (const c of CASES) {
      const fn = fnOf(versions[who]!, c);
      if (!fn) continue;
      const text = TEXTS[c.text];
      const calls = callsFor(c.text);
      collectGarbage();
      const { cpuMs } = await timed(async () => {
        for (let i = 0; i < calls; i++) fn(text);
      });
      if (round >= 0) samples.set(sampleKey(who, c), [...(samples.get(sampleKey(who, c)) ?? []), (cpuMs * 1000) / calls]);
    }
  }
}

const micros = (value: number) => (value >= 100 ? `${value.toFixed(0)} µs` : `${value.toFixed(1)} µs`);
/** A median in µs per call, with its IQR as a share of it. */
const shown = (values: number[] | undefined) => (values ? `${micros(median(values))} (${(relativeIqr(values) * 100).toFixed(0)} %)` : '–');
const ratioOf = (a: number[] | undefined, b: number[] | undefined) => (a && b ? ratio(median(a), median(b)) : '–');

console.log(
  `\nCPU time per call (this process's), median of ${ROUNDS} rounds of ${CALLS} calls (${CALLS * 100} for the log line); IQR as a share of the median in brackets. ` +
    `"a key": one key of ${KEY.length} characters registered, which the texts do not hold.\n`,
);
const rows: string[][] = [];
for (const call of ['redactSecrets', 'sanitizeServiceText'] as const) {
  for (const text of Object.keys(TEXTS) as TextName[]) {
    const at = (who: string, key: Case['key']) => samples.get(sampleKey(who, { call, key, text }));
    const row = [call, text, shown(at('this', 'no key')), shown(at('this', 'a key')), ratioOf(at('this', 'a key'), at('this', 'no key'))];
    if (versions.other) {
      row.push(shown(at('other', 'no key')), shown(at('other', 'a key')), ratioOf(at('other', 'a key'), at('other', 'no key')));
      row.push(ratioOf(at('this', 'no key'), at('other', 'no key')), ratioOf(at('this', 'a key'), at('other', 'a key')));
    }
    rows.push(row);
  }
}
const header = ['call', 'text', 'no key', 'a key', 'a key / no key'];
if (versions.other) header.push('other: no key', 'other: a key', 'other: a key / no key', 'this / other, no key', 'this / other, a key');
printTable(header, rows);
