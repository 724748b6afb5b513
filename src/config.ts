import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { envChoice, envError, envNumber, envText, envUrl, type Env } from './core/env.js';
import { operatorMustFix, ValidationError } from './core/errors.js';
import { LOG_FORMATS, type LogFormat } from './core/log-format.js';
import { readRedisConfig, type RedisConfig } from './core/redis-config.js';
import { describeFileError } from './core/system-errors.js';
import { MAX_TIMER_MS } from './core/timer-ms.js';
import { readSpendConfig, type SpendConfig } from './spend/caps.js';

/**
 * The core's settings, read once from the environment at an entry point (CLI,
 * `npm start`, `npm run discord:deploy`) through the env helpers of
 * `core/env.ts` and validated. Library code never reads `process.env`.
 */

/** Longest timeout a Node timer can hold, in whole seconds (2^31 − 1 ms ≈ 24.8 days). */
export const MAX_TIMEOUT_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface CoreConfig {
  /** Upstream service; undefined means "run against the embedded emulator". */
  baseURL: string | undefined;
  apiKey: string | undefined;
  logLevel: string;
  /** `PICTOR_LOG_FORMAT`: human or json; undefined = the entry point decides (npm start: human on a terminal). */
  logFormat: LogFormat | undefined;
  imagesPerMinute: number | undefined;
  maxConcurrent: number;
  timeoutMs: number | undefined;
  maxRetries: number | undefined;
  /** Port of the embedded emulator when it is started (0 = a free port). */
  emulatorPort: number;
  /** Base time per image of the embedded emulator (a medium 1024x1024 image; 0 = instant); undefined = the entry point's default. */
  emulatorLatencyMs: number | undefined;
  /** Shared limits through Redis (`REDIS_URL`, `PICTOR_REDIS_PREFIX`); undefined = this process only. */
  redis: RedisConfig | undefined;
  /** Spending caps (`PICTOR_*_USD`) and the file ledger's folder. */
  spend: SpendConfig;
  /** `PICTOR_METRICS_PORT` (and `PICTOR_METRICS_HOST`, default 127.0.0.1): where `npm start` serves /metrics and /healthz; undefined = off. */
  metrics: { port: number; host: string } | undefined;
}

/**
 * `defaultDataDir`: where the program keeps its data without `PICTOR_DATA_DIR` — the one default of each program: the
 * CLI's is the user's state folder (`userStateDir`), `npm start`'s the `./.data` of its working directory.
 */
export function readCoreConfig(env: Env, options: { defaultDataDir?: string } = {}): CoreConfig {
  const baseURL = envUrl(env, 'PICTOR_BASE_URL', { example: 'https://images.example.com' });
  const apiKey = envText(env, 'PICTOR_API_KEY');
  if (apiKey !== undefined && !/^[\x21-\x7e]+$/.test(apiKey)) {
    // The value itself is never quoted: it is a secret.
    throw envError(env, 'PICTOR_API_KEY', 'a key an HTTP header can carry: it contains spaces, line breaks or non-ASCII characters; check for a stray line break', { secret: true });
  }
  if (baseURL && !apiKey) {
    throw new ValidationError('PICTOR_API_KEY', 'PICTOR_BASE_URL is set but PICTOR_API_KEY is not: set the key the service gave you');
  }
  const metricsPort = envNumber(env, 'PICTOR_METRICS_PORT', { int: true, min: 0, max: 65535 });
  const metricsHost = envText(env, 'PICTOR_METRICS_HOST');
  if (metricsHost !== undefined && !/^[\w.:-]+$/.test(metricsHost)) {
    throw envError(env, 'PICTOR_METRICS_HOST', 'a host name or an IP address to listen on, e.g. 127.0.0.1 or 0.0.0.0');
  }
  if (metricsHost !== undefined && metricsPort === undefined) {
    throw new ValidationError('PICTOR_METRICS_PORT', 'PICTOR_METRICS_HOST is set but PICTOR_METRICS_PORT is not: set the port to serve /metrics and /healthz on');
  }
  // A Node timer holds at most 2^31 − 1 ms; a longer one fires at once (an instant false timeout).
  const timeoutSeconds = envNumber(env, 'PICTOR_TIMEOUT_SECONDS', { min: 1, max: MAX_TIMEOUT_SECONDS, takes: `a number of seconds from 1 to ${MAX_TIMEOUT_SECONDS}` });
  return {
    baseURL,
    apiKey,
    logLevel: envChoice(env, 'PICTOR_LOG_LEVEL', LOG_LEVELS) ?? 'info',
    logFormat: envChoice(env, 'PICTOR_LOG_FORMAT', LOG_FORMATS),
    imagesPerMinute: envNumber(env, 'PICTOR_IMAGES_PER_MINUTE', { min: 1 }),
    maxConcurrent: envNumber(env, 'PICTOR_MAX_CONCURRENT', { int: true, min: 1, max: 100 }) ?? 4,
    timeoutMs: timeoutSeconds !== undefined ? timeoutSeconds * 1000 : undefined,
    maxRetries: envNumber(env, 'PICTOR_MAX_RETRIES', { int: true, min: 0, max: 10 }),
    emulatorPort: envNumber(env, 'PICTOR_EMULATOR_PORT', { int: true, min: 0, max: 65535 }) ?? 0,
    emulatorLatencyMs: envNumber(env, 'PICTOR_EMULATOR_LATENCY_MS', { int: true, min: 0, max: 600_000 }),
    redis: readRedisConfig(env),
    spend: readSpendConfig(env, options.defaultDataDir),
    metrics: metricsPort === undefined ? undefined : { port: metricsPort, host: metricsHost ?? '127.0.0.1' },
  };
}

/**
 * Loads `.env` from the working directory into `process.env` if there is one (variables already set win). Every
 * entry point calls it first — `npm start`, the `pictor` command and `npm run discord:deploy` — so one `.env` serves all.
 * A `.env` to fix (a folder, a file that cannot be read, one saved as UTF-16, a byte-order mark, a carriage return
 * inside a line, a line that is not a setting) is a ValidationError naming it (`param` `.env`). Returns the warnings
 * the entry point writes on stderr: a name set on more than one line (Node takes the last), named with its lines'
 * numbers, never their values (they may be secrets), saying the environment's value is used when the environment already sets it.
 */
export function loadDotEnv(path = '.env'): string[] {
  try {
    const bytes = readFileSync(path);
    if (isUtf16(bytes)) {
      // Read as UTF-8, the first name carries the mark's bytes and every name NUL bytes: no setting (a cap) is read, without a word.
      throw new ValidationError(
        '.env',
        `.env: ${resolve(path)} was saved as UTF-16 (as Windows Notepad's "Unicode" or PowerShell 5's > save it), which Node cannot read (none of its settings would be read): save it as UTF-8 without a BOM (in Notepad: Save as, Encoding "UTF-8")`,
      );
    }
    const text = bytes.toString('utf8');
    if (text.startsWith(BYTE_ORDER_MARK)) {
      // Node reads the mark as part of the first name (`\uFEFFNAME`): that setting is lost without a word.
      throw new ValidationError(
        '.env',
        `.env: ${resolve(path)} was saved with a byte-order mark (BOM), which hides its first setting: save it as UTF-8 without a BOM (most editors offer "UTF-8" next to "UTF-8 with BOM")`,
      );
    }
    const partingReturn = firstCarriageReturnInsideALine(text);
    if (partingReturn !== undefined) {
      // Node drops it and reads the text it parts as one line: a setting after it becomes part of the value before it.
      // Named by its line's number only, as below.
      throw new ValidationError(
        '.env',
        `.env: line ${partingReturn} of ${resolve(path)} has a carriage return (CR) inside it, text on both sides of it, which Node drops, reading what follows it as part of that line (a file saved with old Mac line endings, CR alone, loses its settings that way): save it with LF or CRLF line endings`,
      );
    }
    const badLine = firstLineNotASetting(text);
    if (badLine !== undefined) {
      // Node would lose a setting (a cap) there without a word, or read lines up to the next = as one name. The line is
      // named by its number only: it may hold a secret.
      throw new ValidationError(
        '.env',
        `.env: line ${badLine} of ${resolve(path)} is not a NAME=value setting Node reads as written: put # first on a comment's line, leave an empty line empty (no spaces or tabs), keep tabs away from a name and put one space after export, and keep a value that spans lines in quotes (NAME="…") that close`,
      );
    }
    const repeated = repeatedSettings(text);
    // A name the environment already set keeps that value: Node's loading leaves it alone, so neither line is read.
    const fromEnvironment = new Set(repeated.filter(({ name }) => process.env[name] !== undefined).map(({ name }) => name));
    process.loadEnvFile(path);
    return repeated.map(({ name, lines }) => {
      const where = `.env: ${name} is set on lines ${listOf(lines)} of ${resolve(path)}`;
      return fromEnvironment.has(name)
        ? `${where}; the environment's value is used (it wins over .env), not any of these lines: keep one of them`
        : `${where}; the last one (line ${lines.at(-1)}) is read, as Node reads the file: remove the ${lines.length === 2 ? 'other' : 'others'}`;
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    // A folder named .env: Node 20 says only ERR_INVALID_ARG_TYPE, later ones EISDIR; either way the user needs to hear what it is.
    if (isFolder(path)) {
      throw new ValidationError('.env', `.env: ${resolve(path)} is a folder, not a file: put the settings in a file named .env (NAME=value lines), or move the folder away`);
    }
    // Already said in full (a byte-order mark, a carriage return inside a line, a line that is not a setting).
    if (error instanceof ValidationError) throw error;
    // One that cannot be read (its permissions, a link to itself) is a settings error too, named with why.
    throw new ValidationError('.env', `.env: cannot read ${resolve(path)} (${describeFileError(error)})`);
  }
}

/**
 * `loadDotEnv` at a program's entry point (`npm start`, `npm run discord:deploy`): a `.env` to fix (a folder, a line
 * that is not NAME=value, a carriage return inside a line, a byte-order mark, UTF-16, a file that cannot be read) is one line on stderr,
 * the program's `words` then what the error says, and the process exits 2, as for every settings error. Any other
 * failure is thrown. Each warning of a `.env` it loads (a name set twice) is a line on stderr, `pictor: warning: ` then the warning.
 * `options` (`path`, `stderr`, `exit`) default to `.env` and the process's own.
 */
export function loadDotEnvOrExit(
  words: string,
  options: { path?: string | undefined; stderr?: ((line: string) => void) | undefined; exit?: ((code: number) => never) | undefined } = {},
): void {
  const stderr = options.stderr ?? ((line) => process.stderr.write(`${line}\n`));
  try {
    for (const warning of loadDotEnv(options.path)) stderr(`pictor: warning: ${warning}`);
  } catch (error) {
    if (!operatorMustFix(error)) throw error;
    stderr(`${words}${(error as Error).message}`);
    (options.exit ?? ((code) => process.exit(code)))(2);
  }
}

const BYTE_ORDER_MARK = '\uFEFF';

/** A file saved as UTF-16: it opens with a UTF-16 byte-order mark (FF FE or FE FF), or holds a NUL byte, which no UTF-8 `.env` does. */
function isUtf16(bytes: Buffer): boolean {
  return (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff) || bytes.includes(0);
}

/** `1`, `1 and 3`, `1, 5 and 7`. */
function listOf(numbers: number[]): string {
  return numbers.length === 1 ? String(numbers[0]) : `${numbers.slice(0, -1).join(', ')} and ${numbers.at(-1)}`;
}
const QUOTES = new Set(['"', "'", '`']);

/**
 * The number (from 1, counted by line breaks) of the first line of a `.env` text holding a carriage return inside it —
 * text other than spaces, tabs and carriage returns on both sides of it on its line (a no-break space is text: Node
 * keeps it) — or undefined when there is none. Every Node this project supports drops each carriage return, a lone one too, and reads the text on either side as one line: in a
 * file saved with old Mac line endings (CR alone) the second setting becomes part of the first one's value
 * (`KEY=sk\rCAP=5` gives KEY the value `skCAP=5`, and no CAP). One that ends a line (before a line break, before more
 * of them that do, or at the end of the text) or opens one, with only spaces or tabs between, parts nothing, and Node loses
 * nothing there: `A=1\r` at the end, `A=1\r\r\nB=2`, `A=1\r \nB=2` and `A=1\n\rB=2` are read as written.
 * So is a quoted value spanning lines whose lines end so: `A="x\r\r\ny"` is `x`, a line break, `y` (as `A="x\r\ny"`).
 */
export function firstCarriageReturnInsideALine(text: string): number | undefined {
  const at = text.search(/[^\r\n \t][ \t\r]*\r[ \t\r]*[^\r\n \t]/);
  return at === -1 ? undefined : text.slice(0, at).split('\n').length;
}

/**
 * The number (from 1) of the first line of a `.env` text on which Node's loader (`process.loadEnvFile`, whose parser is
 * `util.parseEnv`) would lose or merge a setting, or undefined when there is none. The rules are Node 20's, the oldest
 * parser this project supports, as measured in test/core/config.test.ts (Node 22 and 24 read more of these lines as
 * written: they trim tabs too and skip a line with no `=`). Node skips an empty line and one with `#` first, and drops
 * every carriage return (`loadDotEnv` first refuses one inside a line: `firstCarriageReturnInsideALine`) and the
 * spaces that open the text (a first line of spaces, an indented first comment). It reads a line holding an `=` as a
 * setting whose name is the text before the `=` with its spaces trimmed and an `export ` before it dropped; any such
 * name is taken (`1FOO=a`, `Daily cap=5`, `# A=1` after spaces or tabs): one no program reads is harmless. Refused are
 * the lines on which Node would:
 * - merge lines: it reads a line with no `=` (an indented comment, a line of spaces or tabs) from its start to the next
 *   `=` as one name, swallowing the lines in between;
 * - stop: at a line with no name (`=5`) it reads nothing more;
 * - keep a blank in the name: a tab or another blank that is not a space at its ends, or a second blank after `export`,
 *   is part of the name Node gives, so the setting the line spells is lost (a comment's, `\t# A=1`, spells none);
 * - drop the value: a quote that opens a value and never closes, on the last line with no line break after it.
 * The first two lose nothing when no later line holds an `=` (a last line of spaces, say), and are then taken. A value
 * opening a quote spans the lines up to the one that closes it, as Node reads it.
 */
export function firstLineNotASetting(text: string): number | undefined {
  return settingLinesOf(text).find((line) =>
    line.setting
      ? // Blanks alone before the = (`\t=5`) spell no setting to lose, and nor does a comment, however indented (`\t# A=1`).
        (line.written !== '' && !line.written.startsWith('#') && line.name !== line.written) || line.lastLineQuoteNeverClosed
      : line.equalsAfter,
  )?.number;
}

/**
 * The names a `.env` text that `firstLineNotASetting` takes sets on more than one line, each with its lines' numbers
 * (from 1) in order; Node's loader reads them all and keeps the last. The lines are the ones `firstLineNotASetting`
 * walks as settings (`settingLinesOf`): lines inside a quoted value spanning lines are part of that value, not
 * settings. An indented comment holding an `=` (`  # A=1`) is left out: Node 20 takes its name, `# A`, which no
 * program reads, and Node 22 and later read it as the comment it is.
 */
export function repeatedSettings(text: string): { name: string; lines: number[] }[] {
  const linesOf = new Map<string, number[]>();
  for (const line of settingLinesOf(text)) {
    if (line.setting && !line.name.startsWith('#')) linesOf.set(line.name, [...(linesOf.get(line.name) ?? []), line.number]);
  }
  return [...linesOf].filter(([, numbers]) => numbers.length > 1).map(([name, numbers]) => ({ name, lines: numbers }));
}

/**
 * A line of a `.env` text at which Node's loader starts reading something (its number from 1): a setting, with the name
 * Node gives it and the name a person reads in it, and whether it is the last line and opens a quote it never closes
 * (Node drops that setting); or a line with no `=`, or none before a name, with whether a later line holds an `=`.
 */
type SettingLine =
  | { number: number; setting: true; name: string; written: string; lastLineQuoteNeverClosed: boolean }
  | { number: number; setting: false; equalsAfter: boolean };

/**
 * The lines of a `.env` text as Node's loader walks them (Node 20's rules, see `firstLineNotASetting`), in order:
 * every line but an empty one, one with `#` first, and the lines inside a quoted value spanning lines (a value opening
 * a quote spans the lines up to the one holding the closing quote, as Node reads it; with no closing quote anywhere,
 * Node takes the line as it is). The one walk `firstLineNotASetting` and `repeatedSettings` share, so that a line one
 * takes as a setting is a setting for the other too.
 */
function settingLinesOf(text: string): SettingLine[] {
  const lines = text.replace(/\r/g, '').replace(/^ +/, '').split('\n');
  const equalsAfter = (i: number): boolean => lines.some((later, j) => j > i && later.includes('='));
  const walked: SettingLine[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    // Only at the start of the line: Node reads an indented comment with no =, or a line of spaces, with the next line as a name.
    if (line === '' || line.startsWith('#')) continue;
    const equals = line.indexOf('=');
    const name = equals === -1 ? '' : nodeNameOf(line.slice(0, equals));
    if (name === '') {
      walked.push({ number: i + 1, setting: false, equalsAfter: equalsAfter(i) });
      continue;
    }
    const closing = lineClosingQuote(lines, i, equals);
    walked.push({
      number: i + 1,
      setting: true,
      name,
      written: writtenNameOf(line.slice(0, equals)),
      lastLineQuoteNeverClosed: closing === -1 && i === lines.length - 1,
    });
    if (closing !== undefined && closing !== -1) i = closing;
  }
  return walked;
}

/**
 * For line `i` of `lines` (its `=` at `equals`): undefined when its value opens no quote or closes the one it opens on
 * that line, else the index of the later line holding the closing quote — the value spans the lines up to it, as Node
 * reads it — or -1 when no later line does.
 */
function lineClosingQuote(lines: string[], i: number, equals: number): number | undefined {
  const line = lines[i]!;
  const opening = equals + 1 + /^ */.exec(line.slice(equals + 1))![0].length;
  const quote = line[opening];
  if (quote === undefined || !QUOTES.has(quote) || line.indexOf(quote, opening + 1) !== -1) return undefined;
  return lines.findIndex((later, j) => j > i && later.includes(quote));
}

/** The name Node gives the text before a line's `=`: its spaces (only spaces) trimmed, an `export ` before it dropped. */
function nodeNameOf(beforeEquals: string): string {
  const name = beforeEquals.replace(/^ +| +$/g, '');
  return name.startsWith('export ') ? name.slice('export '.length) : name;
}

/** The name a person reads in the text before a line's `=`: blanks of any kind at its ends, and `export` with the blanks after it, dropped. */
function writtenNameOf(beforeEquals: string): string {
  return beforeEquals.trim().replace(/^export\s+(?=\S)/, '');
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
