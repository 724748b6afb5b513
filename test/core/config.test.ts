import { describe, expect, it, onTestFinished } from 'vitest';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { parseEnv } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstLineNotASetting, firstCarriageReturnInsideALine, loadDotEnv, loadDotEnvOrExit, MAX_TIMEOUT_SECONDS, readCoreConfig, repeatedSettings } from '../../src/config.js';
import { PictorClient, ValidationError } from '../../src/index.js';

/** src/config.ts: the core's settings, read once at an entry point. */
describe('core config', () => {
  const base = { PICTOR_BASE_URL: 'https://images.example.com', PICTOR_API_KEY: 'sk-test-0123456789' };

  it('takes the longest timeout a timer can hold', () => {
    expect(readCoreConfig({ ...base, PICTOR_TIMEOUT_SECONDS: String(MAX_TIMEOUT_SECONDS) }).timeoutMs).toBeLessThanOrEqual(2 ** 31 - 1);
  });

  it.each(['2147484', '1e12', 'Infinity'])('refuses PICTOR_TIMEOUT_SECONDS=%s, which a timer cannot hold, naming the variable', (value) => {
    expect(() => readCoreConfig({ ...base, PICTOR_TIMEOUT_SECONDS: value })).toThrow(ValidationError);
    expect(() => readCoreConfig({ ...base, PICTOR_TIMEOUT_SECONDS: value })).toThrow(expect.objectContaining({ param: 'PICTOR_TIMEOUT_SECONDS' }));
  });

  it.each([
    ['a line break inside', 'sk-abc\ndef-0123456789'],
    ['a space inside', 'sk-abc def-0123456789'],
    ['a non-ASCII character', 'sk-abcé-0123456789'],
    ['a NUL byte', 'sk-abc\u0000def-0123456789'],
  ])('refuses a PICTOR_API_KEY with %s, naming the variable and not the key', (_what, key) => {
    let error: unknown;
    try {
      readCoreConfig({ ...base, PICTOR_API_KEY: key });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ code: 'validation_error', param: 'PICTOR_API_KEY' });
    expect((error as Error).message).not.toContain('0123456789');
  });

  it('turns metrics on only with PICTOR_METRICS_PORT, on loopback unless PICTOR_METRICS_HOST says otherwise', () => {
    expect(readCoreConfig(base).metrics).toBeUndefined();
    expect(readCoreConfig({ ...base, PICTOR_METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464, host: '127.0.0.1' });
    expect(readCoreConfig({ ...base, PICTOR_METRICS_PORT: '9464', PICTOR_METRICS_HOST: '0.0.0.0' }).metrics).toEqual({ port: 9464, host: '0.0.0.0' });
  });

  it.each([
    [{ PICTOR_METRICS_PORT: '70000' }, 'PICTOR_METRICS_PORT'],
    [{ PICTOR_METRICS_PORT: 'metrics' }, 'PICTOR_METRICS_PORT'],
    [{ PICTOR_METRICS_PORT: '9464', PICTOR_METRICS_HOST: 'http://0.0.0.0/' }, 'PICTOR_METRICS_HOST'],
  ])('refuses the metrics setting %o, naming %s', (env, variable) => {
    expect(() => readCoreConfig({ ...base, ...env })).toThrow(expect.objectContaining({ code: 'validation_error', param: variable }));
  });

  it('still tolerates a trailing line break (as a file read with a newline has)', () => {
    expect(readCoreConfig({ ...base, PICTOR_API_KEY: 'sk-test-0123456789\n' }).apiKey).toBe('sk-test-0123456789');
  });
});

describe('client options checked like the config', () => {
  it('refuses a key a header cannot carry', () => {
    expect(() => new PictorClient({ baseURL: 'http://127.0.0.1:1', apiKey: 'sk-a\nb-0123456789' })).toThrow(expect.objectContaining({ code: 'validation_error', param: 'apiKey' }));
  });

  it('refuses a timeout a timer cannot hold', () => {
    expect(() => new PictorClient({ baseURL: 'http://127.0.0.1:1', apiKey: 'k', timeoutMs: 2 ** 31 })).toThrow(expect.objectContaining({ param: 'timeoutMs' }));
  });

  it('says a .env that is a folder is a folder, not a file, naming it (Node 20 would say only ERR_INVALID_ARG_TYPE)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-env-'));
    try {
      await mkdir(join(dir, '.env'));
      expect(() => loadDotEnv(join(dir, '.env'))).toThrow(ValidationError);
      expect(() => loadDotEnv(join(dir, '.env'))).toThrow(`.env: ${join(dir, '.env')} is a folder, not a file`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads no .env when there is none', () => {
    expect(() => loadDotEnv(join(tmpdir(), 'pictor-no-such-folder', '.env'))).not.toThrow();
  });
});

/** A name that is a comment as a person reads it (`# NAME`, however indented): no setting. */
const isComment = (name: string): boolean => name.trim().startsWith('#');

/**
 * The settings a .env text's NAME= lines write, by name as a person reads them — the text before the first `=`, blanks
 * at its ends and an `export` before it aside — comments and those inside a quoted value (as Node reads it) aside, sorted.
 */
function writtenNames(text: string): string[] {
  const namesIn = (lines: string): string[] =>
    [...lines.matchAll(/^([^=\n]*)=/gm)]
      .map((m) => m[1]!.replace(/\r/g, '').trim().replace(/^export\s+(?=\S)/, ''))
      .filter((name) => name !== '' && !isComment(name));
  const quoted = new Set(Object.values(parseEnv(text)).flatMap((value) => namesIn(value ?? '')));
  return namesIn(text)
    .filter((name) => !quoted.has(name))
    .sort();
}

/** The settings Node's parser gives for a .env text, by name, sorted: a name that is a comment (Node 20 gives `# NAME` for an indented one) aside. */
function nodeSettings(text: string): string[] {
  return Object.keys(parseEnv(text))
    .filter((name) => !isComment(name))
    .sort();
}

/**
 * Node 20's parser, the oldest this project supports and the one `firstLineNotASetting` follows. Node 22 and 24 read
 * more of what it refuses as written (they trim tabs too, and skip a line without `=`), so what a text makes Node lose
 * is Node 20's.
 */
const NODE_20 = process.versions.node.startsWith('20.');

/** The line `loadDotEnv` refuses a .env text at, its checks in its order (undefined: it loads it). */
const lineRefused = (text: string): number | undefined => firstCarriageReturnInsideALine(text) ?? firstLineNotASetting(text);
const NODE_22_OR_LATER = Number(process.versions.node.split('.')[0]) >= 22;

describe('a .env line that is not a setting', () => {
  async function dotEnv(text: string | Buffer): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-env-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, '.env'), text);
    return join(dir, '.env');
  }

  /** What loading `path` throws: a settings error naming `.env`, whatever else it says. */
  function refusalOf(path: string): Error {
    let error: unknown;
    try {
      loadDotEnv(path);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'validation_error', param: '.env' });
    return error as Error;
  }

  it('stops the start naming the file and the line number, not the line, and loads nothing of the file', async () => {
    const path = await dotEnv('DOTENV_TEST_FIRST=1\nDaily cap for the team sk-secret-words\nDOTENV_TEST_CAP=0.01\n');
    const error = refusalOf(path);
    expect(error.message).toContain(path);
    expect(error.message).toMatch(/\bline 2\b/);
    expect(error.message).not.toContain('sk-secret-words');
    expect(process.env.DOTENV_TEST_FIRST).toBeUndefined();
    expect(process.env.DOTENV_TEST_CAP).toBeUndefined();
  });

  const NOT_SETTINGS = [
    ['a line without =', 'A=1\nDaily cap for the team\nB=2', 2],
    ['a line with no name before =', 'A=1\n=5\nB=2', 2],
    ['a line of a tab (Node 20 reads it and the next line as one name)', 'A=1\n\t\nB=2', 2],
    ['an indented comment', 'A=1\n  # the cap\nB=2', 2],
    ['a line of spaces', 'A=1\n   \nB=2', 2],
    ['a quoted value spanning lines after a tab (Node 20 takes it unquoted)', 'A=\t"x\ny"\nB=2', 2],
    ['the line after a quoted value closed', 'A="x\ny"\nnot a setting\nB=2', 3],
    ['a line of a CRLF file', 'A=1\r\nnot a setting\r\nB=2\r\n', 2],
    ['a first line of a tab (Node 20 drops only the spaces that open the text)', '\t\nB=2', 1],
    ['an indented comment after a first line of spaces', '   \n  # the cap\nB=2', 2],
    ['a line whose next = is in a comment', 'A=1\nnot a setting\n# c=d\nB=2', 2],
    ['a name after a tab', 'A=1\n\tC=3\nB=2', 2],
    ['a name before a tab', 'A=1\nC\t=3\nB=2', 2],
    ['a name ending in a no-break space', 'A=1\nC\u00a0=3\nB=2', 2],
    ['export and two spaces before a name', 'A=1\nexport  C=3\nB=2', 2],
    ['export and a tab before a name', 'A=1\nexport\tC=3\nB=2', 2],
    ['a last line opening a quote it never closes, with no line break after it', 'A=1\nB="x', 2],
  ] as const;

  it.each(NOT_SETTINGS)('finds %s', (_what, text, line) => {
    expect(firstLineNotASetting(text)).toBe(line);
  });

  it.runIf(NODE_20).each(NOT_SETTINGS)('finds %s, on which Node 20 loses a setting', (_what, text) => {
    expect(nodeSettings(text)).not.toEqual(writtenNames(text));
  });

  it.each([
    ['comments, empty lines and indented names', '# caps\n\n# the team\n  A=1\nB = 2\n\nC=\n'],
    ['export before a name', 'export A=1\nB=2'],
    ['values spanning lines in each kind of quote', 'A="x\ny"\nB=\'x\n\ny = z\'\nC=`x\n#y`\nD=4'],
    ['a quoted value after a space', 'A= "x\ny"\nB=2'],
    ['a value with an unclosed quote (the line as it is)', 'A="x\nB=2'],
    ['names with dots and dashes', 'a.b=1\nc-d=2'],
    ['a CRLF file', 'A=1\r\n\r\n# c\r\nB="x\r\ny"\r\nC=3\r\n'],
    ['a last line of spaces', 'DOTENV_TEST_A=1\n  '],
    ['a last line of a tab', 'DOTENV_TEST_A=1\n\t\n'],
    ['a first line of spaces', '   \nDOTENV_TEST_B=2'],
    ['an indented comment on the first line', '  # caps\nDOTENV_TEST_B=2'],
    ['lines that are not settings with no = after them', 'A=1\nsome closing words\n  # and an indented note\n'],
    ['a name starting with a digit', 'A=1\n1FOO=a\nB=2'],
    ['a name with a space in it', 'A=1\nDaily cap=5\nB=2'],
    ['names with other signs', 'A=1\nC:D=3\n"E"=4\n$F=5\nG;H=6\nB=2'],
    ['a name with a tab inside it', 'A=1\nDaily\tcap=5\nB=2'],
    ['export alone as a name', 'A=1\nexport =3\nB=2'],
    ['an indented comment holding an =', 'A=1\n  # C=3\nB=2'],
    ['a comment holding an = after a tab', 'A=1\n\t# C=3\nB=2'],
    ['a comment holding an = after a tab, with a tab before its =', 'A=1\n\t# C\t=3\nB=2'],
    ['a last line with no name', 'A=1\n=5\n'],
    ['a quote never closed before a line break', 'A=1\nB="x\n'],
    ['a last line ending in a carriage return, with no line break after it', 'A=1\nB=2\r'],
    ['lines ending in two carriage returns and a line break', 'A=1\r\r\nB=2\r\r\n'],
    ['a last quoted value ending in a carriage return, with no line break after it', 'A=1\nB="x"\r'],
    ['lines opening with a carriage return (LF then CR line endings)', 'A=1\n\rB=2\n\r'],
    ['a line ending in a carriage return and a space', 'A=1\r \nB=2'],
  ])('takes %s, every setting under the name it is written with', async (_what, text) => {
    expect(firstCarriageReturnInsideALine(text)).toBeUndefined();
    expect(firstLineNotASetting(text)).toBeUndefined();
    // On any Node: each setting of a text the checks took is one Node's own parser gives, by its written name, and no other.
    expect(nodeSettings(text)).toEqual(writtenNames(text));
  });

  // Measured with util.parseEnv, the parser of process.loadEnvFile, next to what the check says: a Node 20 that reads one
  // of these another way fails here, and the check is to be measured against it again.
  it.runIf(NODE_20).each([
    ['a name starting with a digit', 'A=1\n1FOO=a\nB=2', { A: '1', '1FOO': 'a', B: '2' }, undefined],
    ['a name with a space in it', 'A=1\nDaily cap=5\nB=2', { A: '1', 'Daily cap': '5', B: '2' }, undefined],
    ['an indented comment holding an =', 'A=1\n  # C=3\nB=2', { A: '1', '# C': '3', B: '2' }, undefined],
    ['a comment after a tab holding an = as a name with the tab', 'A=1\n\t# C=3\nB=2', { A: '1', '\t# C': '3', B: '2' }, undefined],
    ['export and a space before a name', 'A=1\nexport C=3\nB=2', { A: '1', C: '3', B: '2' }, undefined],
    ['a last line opening a quote, with a line break after it', 'A=1\nB="x\n', { A: '1', B: '"x' }, undefined],
    ['a line without = and the next line as one name', 'A=1\nDaily cap for the team\nB=2', { A: '1', 'Daily cap for the team\nB': '2' }, 2],
    ['a line of spaces and the next line as one name', 'A=1\n   \nB=2', { A: '1', '\nB': '2' }, 2],
    ['nothing after a line with no name', 'A=1\n=5\nB=2', { A: '1' }, 2],
    ['a tab before a name as part of it', 'A=1\n\tC=3\nB=2', { A: '1', '\tC': '3', B: '2' }, 2],
    ['a tab after a name as part of it', 'A=1\nC\t=3\nB=2', { A: '1', 'C\t': '3', B: '2' }, 2],
    ['the second space after export as part of the name', 'A=1\nexport  C=3\nB=2', { A: '1', ' C': '3', B: '2' }, 2],
    ['export and a tab as part of the name', 'A=1\nexport\tC=3\nB=2', { A: '1', 'export\tC': '3', B: '2' }, 2],
    ['no setting from a last line opening a quote it never closes, with no line break after it', 'A=1\nB="x', { A: '1' }, 2],
    ['a last line ending in a carriage return without it', 'A=1\r', { A: '1' }, undefined],
    ['lines ending in two carriage returns and a line break without them', 'A=1\r\r\nB=2\r\r\n', { A: '1', B: '2' }, undefined],
    ['a last quoted value ending in a carriage return without it', 'A="x"\r', { A: 'x' }, undefined],
    ['the lines a carriage return alone parts as one', 'A=1\rB=2\n', { A: '1B=2' }, 1],
  ])('Node 20 reads %s, and the check agrees', (_what, text, node20Reads, line) => {
    expect({ ...parseEnv(text) }).toEqual(node20Reads);
    expect(lineRefused(text)).toBe(line);
  });

  // Every Node this project supports drops each carriage return, a lone one too: the text it parted is read as one line.
  it.each([
    ['lines ending in a carriage return alone (old Mac line endings)', 'PICTOR_API_KEY=sk-secret-words\rPICTOR_ACCOUNT_DAILY_USD=5\r', { PICTOR_API_KEY: 'sk-secret-wordsPICTOR_ACCOUNT_DAILY_USD=5' }, 1],
    ['one line ending in a carriage return alone, in a file of line breaks', 'A=1\nB=2\rC=3\n', { A: '1', B: '2C=3' }, 2],
    ['a carriage return alone in a quoted value', 'A=1\nB="x\ry"\nC=3', { A: '1', B: 'xy', C: '3' }, 2],
    ['two carriage returns between two settings, after lines ending in carriage returns', 'A=1\r\r\nB=2\r\rC=3\r\n', { A: '1', B: '2C=3' }, 2],
    ['a carriage return between spaces, parting two settings', 'A=1\nB=2 \r C=3\n', { A: '1', B: '2  C=3' }, 2],
    ['a carriage return before a no-break space, parting two settings', 'A=1\nB=2\r\u00a0C=3\n', { A: '1', B: '2\u00a0C=3' }, 2],
  ])('finds a carriage return inside a line, text on both sides of it: %s, which Node drops, joining the text it parts', (_what, text, nodeReads, line) => {
    expect({ ...parseEnv(text) }).toEqual(nodeReads);
    expect(firstCarriageReturnInsideALine(text)).toBe(line);
  });

  it('stops the start of a file with a carriage return alone, naming the file and the line, not the line, and loads nothing of it', async () => {
    const path = await dotEnv('DOTENV_TEST_FIRST=1\nDOTENV_TEST_KEY=sk-secret-words\rDOTENV_TEST_CAP=0.01\r');
    const error = refusalOf(path);
    expect(error.message).toContain(`line 2 of ${path} has a carriage return (CR) inside it, text on both sides of it`);
    expect(error.message).not.toContain('sk-secret-words');
    expect(process.env.DOTENV_TEST_FIRST).toBeUndefined();
    expect(process.env.DOTENV_TEST_KEY).toBeUndefined();
  });

  // Node 22 and later read more as written; the check still refuses what Node 20 would lose, on every Node.
  it.runIf(NODE_22_OR_LATER).each([
    ['an indented comment holding an = as a comment', 'A=1\n  # C=3\nB=2', { A: '1', B: '2' }, undefined],
    ['a comment after a tab holding an = as a comment', 'A=1\n\t# C=3\nB=2', { A: '1', B: '2' }, undefined],
    ['a name after a tab without the tab', 'A=1\n\tC=3\nB=2', { A: '1', C: '3', B: '2' }, 2],
    ['a line without = as nothing', 'A=1\nDaily cap for the team\nB=2', { A: '1', B: '2' }, 2],
  ])('Node 22 and later read %s, and the check says what Node 20 would', (_what, text, laterNodesRead, line) => {
    expect({ ...parseEnv(text) }).toEqual(laterNodesRead);
    expect(firstLineNotASetting(text)).toBe(line);
  });

  // A file edited on Windows by a tool that turned its CRLF endings into CR CR LF: inside a value spanning lines, as at the
  // end of one, every Node this project supports drops each carriage return, so \r\r\n is one line break, as \r\n is.
  it('loads a quoted value spanning lines whose lines end in \\r\\r\\n as Node reads it, one line break each, and the settings after it', async () => {
    const text = 'DOTENV_TEST_PEM="-----BEGIN KEY-----\r\r\nAbCd\r\r\n-----END KEY-----"\r\r\nDOTENV_TEST_AFTER_PEM=2\r\r\n';
    const path = await dotEnv(text);
    onTestFinished(() => ['DOTENV_TEST_PEM', 'DOTENV_TEST_AFTER_PEM'].forEach((name) => delete process.env[name]));
    loadDotEnv(path);
    const read = { DOTENV_TEST_PEM: '-----BEGIN KEY-----\nAbCd\n-----END KEY-----', DOTENV_TEST_AFTER_PEM: '2' };
    expect({ ...parseEnv(text) }).toEqual(read);
    expect({ DOTENV_TEST_PEM: process.env.DOTENV_TEST_PEM, DOTENV_TEST_AFTER_PEM: process.env.DOTENV_TEST_AFTER_PEM }).toEqual(read);
  });

  it('loads names no program reads, as Node takes them, with the settings around them', async () => {
    const names = ['DOTENV_TEST_BEFORE', '1DOTENV_TEST', 'DOTENV_TEST daily cap', 'DOTENV_TEST_AFTER'];
    const path = await dotEnv(`${names.map((name, i) => `${name}=${i}`).join('\n')}\n`);
    onTestFinished(() => names.forEach((name) => delete process.env[name]));
    loadDotEnv(path);
    expect(names.map((name) => process.env[name])).toEqual(['0', '1', '2', '3']);
  });

  it('stops the start of a file saved with a byte-order mark, saying so (Node reads the mark into the first name)', async () => {
    const path = await dotEnv('\uFEFFDOTENV_TEST_BOM=1\n');
    expect(Object.keys(parseEnv('\uFEFFDOTENV_TEST_BOM=1\n'))).toEqual(['\uFEFFDOTENV_TEST_BOM']);
    const error = refusalOf(path);
    expect(error.message).toContain(`${path} was saved with a byte-order mark (BOM)`);
    expect(error.message).toContain('save it as UTF-8 without a BOM');
    expect(error.message).not.toMatch(/\bline 1\b/);
    expect(process.env.DOTENV_TEST_BOM).toBeUndefined();
  });

  // Windows Notepad's "Unicode" and PowerShell 5's `>` save UTF-16: read as UTF-8, its first name would carry the mark's
  // bytes and every other one NUL bytes, so no setting (a cap) would be read, without a word.
  it.each([
    ['little-endian with a byte-order mark and LF endings', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('DOTENV_TEST_UTF16=1\n', 'utf16le')])],
    ['little-endian with a byte-order mark and CRLF endings', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('DOTENV_TEST_UTF16=1\r\n', 'utf16le')])],
    ['big-endian with a byte-order mark', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('DOTENV_TEST_UTF16=1\n', 'utf16le').swap16()])],
    ['little-endian without a byte-order mark (NUL bytes)', Buffer.from('DOTENV_TEST_UTF16=1\n', 'utf16le')],
  ])('stops the start of a file saved as UTF-16 (%s), saying so, and loads nothing of it', async (_how, bytes) => {
    const path = await dotEnv(bytes);
    const error = refusalOf(path);
    expect(error.message).toContain(`${path} was saved as UTF-16`);
    expect(error.message).toContain('save it as UTF-8');
    expect(error.message).not.toMatch(/carriage return|\bline \d/);
    expect(process.env.DOTENV_TEST_UTF16).toBeUndefined();
  });

  it('warns once of a name set on two lines, naming it and both lines, not the values, and takes the later one as Node does', async () => {
    const text = 'DOTENV_TEST_DUP=sk-first-value\nDOTENV_TEST_OTHER=1\nDOTENV_TEST_DUP=\n';
    const path = await dotEnv(text);
    onTestFinished(() => ['DOTENV_TEST_DUP', 'DOTENV_TEST_OTHER'].forEach((name) => delete process.env[name]));
    expect(parseEnv(text).DOTENV_TEST_DUP).toBe('');
    const warnings = loadDotEnv(path);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`DOTENV_TEST_DUP is set on lines 1 and 3 of ${path}`);
    expect(warnings[0]).toContain('the last one (line 3) is read');
    expect(warnings[0]).not.toContain('sk-first-value');
    expect(process.env.DOTENV_TEST_DUP).toBe('');
  });

  it('warns of a name set on two lines that the environment already sets, saying the environment\'s value is used, not either line', async () => {
    const text = 'DOTENV_TEST_DUP_ENV=1\nDOTENV_TEST_DUP_ENV=2\n';
    const path = await dotEnv(text);
    process.env.DOTENV_TEST_DUP_ENV = 'from-the-environment';
    onTestFinished(() => void delete process.env.DOTENV_TEST_DUP_ENV);
    const warnings = loadDotEnv(path);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`DOTENV_TEST_DUP_ENV is set on lines 1 and 2 of ${path}`);
    expect(warnings[0]).toContain("the environment's value is used (it wins over .env)");
    expect(warnings[0]).not.toContain('is read');
    expect(process.env.DOTENV_TEST_DUP_ENV).toBe('from-the-environment');
  });

  it('names every line of a name set three times, counts lines as Node reads them (a quoted value spanning lines), and does not warn of a name set once', async () => {
    const text = 'DOTENV_TEST_DUP3=1\nDOTENV_TEST_PEM="a\nDOTENV_TEST_DUP3=inside the quotes\nb"\nexport DOTENV_TEST_DUP3=2\n# DOTENV_TEST_DUP3=3\nDOTENV_TEST_DUP3 = 4\n';
    const path = await dotEnv(text);
    onTestFinished(() => ['DOTENV_TEST_DUP3', 'DOTENV_TEST_PEM'].forEach((name) => delete process.env[name]));
    expect(parseEnv(text).DOTENV_TEST_DUP3).toBe('4');
    expect(loadDotEnv(path)).toEqual([expect.stringContaining(`DOTENV_TEST_DUP3 is set on lines 1, 5 and 7 of ${path}`)]);
    expect(process.env.DOTENV_TEST_DUP3).toBe('4');
  });

  /**
   * The numbers of the lines Node's parser reads as a setting of `name`: each line spelling it before its `=` is renamed
   * in turn, and it is one when Node then gives the new name (a line inside a quoted value changes that value instead).
   */
  function nodeLinesSetting(name: string, text: string): number[] {
    const lines = text.split('\n');
    return lines.flatMap((line, i) => {
      const equals = line.indexOf('=');
      if (equals === -1 || line.slice(0, equals).trim().replace(/^export\s+/, '') !== name) return [];
      const renamed = `${name}_ON_LINE_${i + 1}`;
      const text2 = lines.map((other, j) => (j === i ? other.slice(0, equals).replace(name, renamed) + other.slice(equals) : other)).join('\n');
      return Object.keys(parseEnv(text2)).includes(renamed) ? [i + 1] : [];
    });
  }

  // The lines the warning names are the lines the check walks as settings, which are the lines Node reads as settings.
  it.each([
    ['a quoted value spanning lines holding NAME= on a line of its own', 'A="x\nA=1\n"\nA=2\n'],
    ['a quoted value spanning lines closing on a line holding NAME=', 'B="x\nA=1\n"A=2\nA=3'],
    ['export before the name, and a single-quoted value spanning lines', "A='x\n\nA = z'\nexport A=1\nA=2"],
    ['a backquoted value holding a commented NAME=, and an indented name', 'A=`x\n#A=1\n`\n  A=2\nexport A=3\n'],
    ['a value quoted and closed on its line, with NAME= after the quote', 'A="x" A=1\nA=2'],
    ['a quote never closed before a line break (the line as it is)', 'A="x\nA=1\n'],
    ['an indented comment between the lines', 'A=1\n  # A=2\nA="y\nz"\nA=3\n'],
  ])('names the lines of a name set twice as Node reads them: %s', (_what, text) => {
    expect(lineRefused(text)).toBeUndefined();
    const nodeLines = nodeLinesSetting('A', text);
    expect(repeatedSettings(text).find(({ name }) => name === 'A')?.lines ?? []).toEqual(nodeLines.length > 1 ? nodeLines : []);
  });
});

describe('loadDotEnvOrExit: the .env of every program that reads one (npm start, npm run discord:deploy)', () => {
  /** What the program would write on stderr, and the code it would exit with (undefined: it went on), for `path` as its `.env`. */
  function programWith(path: string): { exitCode: number | undefined; stderr: string[] } {
    const stderr: string[] = [];
    let exitCode: number | undefined;
    const exited = new Error('exited');
    try {
      loadDotEnvOrExit('pictor: ', {
        path,
        stderr: (line) => stderr.push(line),
        exit: (code) => {
          exitCode = code;
          throw exited;
        },
      });
    } catch (error) {
      if (error !== exited) throw error;
    }
    return { exitCode, stderr };
  }

  async function folder(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-env-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    return dir;
  }

  it.each([
    ['a folder', (path: string) => mkdir(path), 'is a folder, not a file'],
    ['a line that is not NAME=value', (path: string) => writeFile(path, 'DOTENV_TEST_A=1\nthe team cap\nDOTENV_TEST_B=2\n'), 'line 2 of'],
    ['lines ending in a carriage return alone', (path: string) => writeFile(path, 'DOTENV_TEST_A=1\rDOTENV_TEST_B=2\r'), 'line 1 of'],
    ['a file it cannot read (a link to itself)', (path: string) => symlink(path, path), 'cannot read'],
  ])('ends the program with exit 2 and one line, its own words then what to fix, for %s', async (_, make, says) => {
    const path = join(await folder(), '.env');
    await make(path);
    const { exitCode, stderr } = programWith(path);
    expect(exitCode).toBe(2);
    expect(stderr).toHaveLength(1);
    expect(stderr[0]).toMatch(/^pictor: \.env: /);
    expect(stderr[0]).toContain(path);
    expect(stderr[0]).toContain(says);
  });

  it('lets the program go on with a .env whose lines end in carriage returns Node drops, loading every setting', async () => {
    const path = join(await folder(), '.env');
    await writeFile(path, 'DOTENV_TEST_CR_A=1\r\r\nDOTENV_TEST_CR_B=2\r');
    onTestFinished(() => ['DOTENV_TEST_CR_A', 'DOTENV_TEST_CR_B'].forEach((name) => delete process.env[name]));
    expect(programWith(path)).toEqual({ exitCode: undefined, stderr: [] });
    expect([process.env.DOTENV_TEST_CR_A, process.env.DOTENV_TEST_CR_B]).toEqual(['1', '2']);
  });

  it('lets the program go on with a .env that sets a name twice, writing one warning line naming it', async () => {
    const path = join(await folder(), '.env');
    await writeFile(path, 'DOTENV_TEST_TWICE=0.01\nDOTENV_TEST_TWICE=\n');
    onTestFinished(() => void delete process.env.DOTENV_TEST_TWICE);
    const { exitCode, stderr } = programWith(path);
    expect(exitCode).toBeUndefined();
    expect(stderr).toEqual([expect.stringMatching(/^pictor: warning: \.env: DOTENV_TEST_TWICE is set on lines 1 and 2 of /)]);
    expect(stderr[0]).not.toContain('0.01');
  });

  it('loads a .env of settings and lets the program go on', async () => {
    const path = join(await folder(), '.env');
    await writeFile(path, 'DOTENV_TEST_LOADED=1\n');
    onTestFinished(() => void delete process.env.DOTENV_TEST_LOADED);
    expect(programWith(path)).toEqual({ exitCode: undefined, stderr: [] });
    expect(process.env.DOTENV_TEST_LOADED).toBe('1');
  });
});
