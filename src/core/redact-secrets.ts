/**
 * Redaction: what an error message, a header echoed by a service or a line of service text shows instead of a secret.
 */

/**
 * Secret values (API keys) that must never appear in an error. A client
 * registers its key here when it is made and again with each request (so a
 * key in use stays among the most recently registered, below), so an error
 * built anywhere in the process — even from a server that echoes the key
 * back — is scrubbed. Each is
 * looked for as written, JSON-escaped, URL-encoded (any case of hex, any
 * character escaped: see `addPercentEncodedSpans`) and in base64 (standard or
 * URL-safe, at any of the three alignments it can have inside a longer
 * base64 text such as `Basic` credentials of `user:key`), and the whole token
 * it is part of goes with it (see `KEY_CHARACTER`). A piece of it is hidden too,
 * as written, when it is `MIN_PIECE_LENGTH` characters or more (a server that
 * echoes the first half of the key, or its end: see `addPieceSpans`).
 *
 * The registry is the process's, on purpose: a secret registered by one client, logger or bot (`registerSecret`,
 * `createLogger({ secrets })`, `scrubSecrets`) is hidden in every error and log line of the process from then on, those
 * of every other client and logger too (a library user with two clients hides both keys in both: one key echoed in the
 * other's error is still a leak), and stays hidden after its bot has stopped or its client is gone (a test file of the
 * same worker sees the secrets earlier files registered). Registering a secret again adds nothing (one entry a secret,
 * however many loggers or runs name it) but makes it the most recent; the registry keeps the `MAX_KNOWN_SECRETS` most
 * recently registered (each costs memory, about 3 kB for a key of 48 characters, most of it the hashes of its pieces,
 * and a look through every text redacted), so a process handed ever new keys (a client made for each of its users'
 * keys) does not grow without end: past that many, the least recently registered is forgotten, and hidden then only
 * where its shape or field says it is a credential (below).
 */
interface KnownSecret {
  /** The secret as written and JSON-escaped: the token around one is made of `KEY_CHARACTER`s. */
  written: string[];
  /** The base64 of the secret at each alignment: the text around one is made of `BASE64_CHARACTER`s. */
  base64: string[];
  /** The secret's UTF-8 bytes, one character each, as a percent-decoded text shows them. */
  bytes: string;
  /** The hashes of its pieces as written (`MIN_PIECE_LENGTH` characters each, those that read as a word left out: see `pieceHashes`). */
  pieces: number[];
  /** Each character of its forms that have pieces, once (see `pieceCharacters`). */
  characters: string;
}
const knownSecrets = new Map<string, KnownSecret>();

/**
 * How long a run of a registered secret's characters must be to be hidden on its own: a service may echo only a part of
 * the key (`Incorrect API key provided: img_live_4f9a8b7c…`), and 12 characters of a key are no one's words. A piece
 * that reads as a word (letters only, in one case or capitalised) is not looked for: a key holding `Organization` must
 * not hide our own.
 */
const MIN_PIECE_LENGTH = 12;
const READS_AS_A_WORD = /^(?:[A-Z]?[a-z]+|[A-Z]+)$/;
/**
 * The hash of every piece of the registered secrets (`KnownSecret.pieces`), with how many of them hold it: a text is
 * read once, the runs of it that may hold a piece hashed as it goes (`eachHeldPiece`), however many secrets there are,
 * and only a piece whose hash is here is looked for in them. Numbers, not the pieces: a key of 48 characters has 37.
 */
const pieceHashes = new Map<number, number>();
const PIECE_BASE = 257;
/** `PIECE_BASE` to the power `MIN_PIECE_LENGTH − 1` (modulo 2^32): the weight of the character a piece's hash lets go of. */
const PIECE_TOP = Array.from({ length: MIN_PIECE_LENGTH - 1 }).reduce<number>((top) => Math.imul(top, PIECE_BASE), 1);

/** The hash of the `MIN_PIECE_LENGTH` characters of `text` at `at`, in 32-bit integer steps (see `pieceHash`). */
function windowHashAt(text: string, at: number): number {
  let hash = 0;
  for (let i = at; i < at + MIN_PIECE_LENGTH; i++) hash = (Math.imul(hash, PIECE_BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

/** A piece's hash as `pieceHashes` keeps it: its window's hash kept to 30 bits, a small integer. */
function pieceHash(windowHash: number): number {
  return windowHash & 0x3fffffff;
}

/** Counts `hash` as held by one more secret (`by` 1) or one fewer (`by` −1) in `pieceHashes`. */
function countPieceHash(hash: number, by: 1 | -1): void {
  const holders = (pieceHashes.get(hash) ?? 0) + by;
  if (holders > 0) pieceHashes.set(hash, holders);
  else pieceHashes.delete(hash);
}

/**
 * How many registered secrets hold each character (a UTF-16 unit, as `charCodeAt` reads it) in a form that has pieces
 * (`KnownSecret.characters`). A piece is made of these alone, so a text is hashed only inside its runs of
 * `MIN_PIECE_LENGTH` of them or more (`eachHeldPiece`): for the service's keys they are some of the letters, digits, `-`
 * and `_`, and prose, mostly short words between spaces and signs, has few such runs. A key with other characters (a
 * `.`, a letter beyond ASCII) has its pieces found all the same.
 */
const pieceCharacters = new Map<number, number>();
/** Whether each ASCII character is one of `pieceCharacters` (1) or not (0): one look into an array for most of a text. */
const asciiPieceCharacters = new Uint8Array(128);

/** Counts `characters` (a registered secret's) as held by one more secret (`by` 1) or one fewer (`by` −1). */
function countPieceCharacters(characters: string, by: 1 | -1): void {
  for (let i = 0; i < characters.length; i++) {
    const code = characters.charCodeAt(i);
    const holders = (pieceCharacters.get(code) ?? 0) + by;
    if (holders > 0) pieceCharacters.set(code, holders);
    else pieceCharacters.delete(code);
    if (code < 128) asciiPieceCharacters[code] = holders > 0 ? 1 : 0;
  }
}

/**
 * Tells `found` where each piece a registered secret may hold starts in `text`, in one pass over it: a run of
 * `pieceCharacters` is counted as it goes, and once it is `MIN_PIECE_LENGTH` long its last `MIN_PIECE_LENGTH` characters
 * are hashed, a rolling hash for the rest of the run (the steps of `windowHashAt`); a hash that is a piece's
 * (`pieceHashes`) is told. Shorter runs, most of prose, are not hashed.
 */
function eachHeldPiece(text: string, found: (at: number) => void): void {
  let run = 0;
  let hash = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 128 ? asciiPieceCharacters[code] === 0 : !pieceCharacters.has(code)) {
      run = 0;
      continue;
    }
    run++;
    if (run < MIN_PIECE_LENGTH) continue;
    const at = i - MIN_PIECE_LENGTH + 1;
    hash = run === MIN_PIECE_LENGTH ? windowHashAt(text, at) : (Math.imul((hash - Math.imul(text.charCodeAt(at - 1), PIECE_TOP)) | 0, PIECE_BASE) + code) | 0;
    if (pieceHashes.has(pieceHash(hash))) found(at);
  }
}

/** What this module shows instead of a credential. */
const REDACTED = '[redacted]';

/**
 * Keys shorter than this are not scrubbed by value: a short one is too likely to be part of our own words (a key
 * `error` or `pict` would eat every "error" or "pictor" of every message, even as a whole word). Such a key is hidden
 * only where its field or scheme says it is a credential (`Authorization: Bearer …`, `api_key=…`, `"apiKey":"…"`, see
 * `redactSecrets`); the service's keys are far longer.
 */
const MIN_SECRET_LENGTH = 6;

/** How many secrets the registry keeps: the most recently registered (see `KnownSecret`). */
export const MAX_KNOWN_SECRETS = 1000;

/**
 * The characters of the token a registered secret may begin or be part of (`sk-test` in `sk-test-0123456789`, the
 * characters of an `sk-` key's body): the whole token is hidden, whichever rule finds it first.
 */
const KEY_CHARACTER = /[A-Za-z0-9_-]/;
/** The characters of a base64 text (standard or URL-safe) around a secret found in it; `=` padding only after it. */
const BASE64_CHARACTER = /[A-Za-z0-9+/_-]/;
/** A `%XX` escape. */
const PERCENT_ESCAPE = /^%[0-9A-Fa-f]{2}$/;

/** Hides `secret` in every error and log line of the process from now on (see `KnownSecret`); one shorter than 6 characters is not hidden by value. */
export function registerSecret(secret: string | undefined): void {
  // `[redacted]` (or a part of it) is what a hidden secret is shown as: showing it hides nothing more.
  if (!secret || secret.length < MIN_SECRET_LENGTH || REDACTED.includes(secret)) return;
  const known = knownSecrets.get(secret);
  if (known) {
    // Most recent again: the last to be forgotten.
    knownSecrets.delete(secret);
    knownSecrets.set(secret, known);
    return;
  }
  const escaped = JSON.stringify(secret).slice(1, -1);
  const bytes = Buffer.from(secret, 'utf8');
  const base64 = new Set<string>();
  for (let offset = 0; offset < 3; offset++) {
    // Behind `offset` bytes, the characters that hold bits of the secret alone: from the first whole 6-bit group to the last.
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const inner = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
    if (inner.length >= MIN_SECRET_LENGTH) base64.add(inner).add(inner.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  base64.delete(secret);
  const written = escaped === secret ? [secret] : [secret, escaped];
  // A secret no longer than a piece is looked for whole.
  const pieceForms = written.filter((form) => form.length > MIN_PIECE_LENGTH);
  // Once each, split as `charCodeAt` reads them (UTF-16 units).
  const characters = [...new Set(pieceForms.join('').split(''))].join('');
  countPieceCharacters(characters, 1);
  const pieces = new Set<number>();
  for (const form of pieceForms) {
    for (let at = 0; at + MIN_PIECE_LENGTH <= form.length; at++) if (!READS_AS_A_WORD.test(form.slice(at, at + MIN_PIECE_LENGTH))) pieces.add(pieceHash(windowHashAt(form, at)));
  }
  for (const hash of pieces) countPieceHash(hash, 1);
  knownSecrets.set(secret, { written, base64: [...base64], bytes: bytes.toString('latin1'), pieces: [...pieces], characters });
  // A Map keeps the order of insertion: the first is the least recently registered.
  if (knownSecrets.size > MAX_KNOWN_SECRETS) forgetSecret(knownSecrets.keys().next().value!);
}

/** Forgets a registered secret, and its pieces and characters no other one holds. */
function forgetSecret(secret: string): void {
  const known = knownSecrets.get(secret);
  if (!known) return;
  for (const hash of known.pieces) countPieceHash(hash, -1);
  countPieceCharacters(known.characters, -1);
  knownSecrets.delete(secret);
}

/** Whether the three characters before `at` in `text` are a `%XX` escape. */
function afterEscape(text: string, at: number): boolean {
  return at >= 3 && text[at - 3] === '%' && PERCENT_ESCAPE.test(text.slice(at - 3, at));
}

/**
 * The span from `start` to `end` widened to the whole token around it: the `token` characters before it (never into a
 * `%XX` escape) and after it, and with `padding` the `=` after those.
 */
function widened(text: string, start: number, end: number, token: RegExp, padding: boolean): [number, number] {
  let from = start;
  while (from > 0 && token.test(text[from - 1] ?? '') && !afterEscape(text, from)) from--;
  let to = end;
  while (to < text.length && token.test(text[to] ?? '')) to++;
  if (padding) while (text[to] === '=') to++;
  return [from, to];
}

/** Adds the span of every `needle` in `text`, widened to its token, to `spans`. */
function addSpans(text: string, needle: string, token: RegExp, padding: boolean, spans: [number, number][]): void {
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) spans.push(widened(text, at, at + needle.length, token, padding));
}

/**
 * Adds the span of every registered secret written URL-encoded in `text` (`%2B` or `%2b`, `-` as `%2D`, …) to `spans`:
 * each run of text without a space that has a `%XX` escape is decoded, keeping where each of its characters came from.
 */
function addPercentEncodedSpans(text: string, spans: [number, number][]): void {
  let done = 0;
  for (let escape = text.indexOf('%'); escape !== -1; escape = text.indexOf('%', Math.max(escape + 1, done))) {
    if (!PERCENT_ESCAPE.test(text.slice(escape, escape + 3))) continue;
    let start = escape;
    while (start > done && !/\s/.test(text[start - 1] ?? '')) start--;
    let end = escape;
    while (end < text.length && !/\s/.test(text[end] ?? '')) end++;
    done = end;
    let decoded = '';
    const from: number[] = [];
    for (let i = start; i < end; ) {
      from.push(i);
      if (text[i] === '%' && PERCENT_ESCAPE.test(text.slice(i, i + 3))) {
        decoded += String.fromCharCode(parseInt(text.slice(i + 1, i + 3), 16));
        i += 3;
      } else {
        decoded += text[i];
        i++;
      }
    }
    from.push(end);
    for (const secret of knownSecrets.values()) {
      for (let at = decoded.indexOf(secret.bytes); at !== -1; at = decoded.indexOf(secret.bytes, at + 1)) {
        spans.push(widened(text, from[at] ?? start, from[at + secret.bytes.length] ?? end, KEY_CHARACTER, false));
      }
    }
  }
}

/**
 * Adds the span of every piece of a registered secret (`MIN_PIECE_LENGTH` characters of it as written, not reading as a
 * word) in `text`, widened to its token, to `spans`: pieces next to each other join, so a half of a key echoed goes whole.
 */
function addPieceSpans(text: string, spans: [number, number][]): void {
  if (pieceHashes.size === 0) return;
  // Each form of every secret, listed once per text (not once per piece the hash found).
  let forms: string[] | undefined;
  eachHeldPiece(text, (at) => {
    // The hash found it: the piece itself is looked for in the secrets (another text may share a hash by chance).
    const piece = text.slice(at, at + MIN_PIECE_LENGTH);
    if (READS_AS_A_WORD.test(piece)) return;
    forms ??= [...knownSecrets.values()].flatMap((known) => known.written);
    if (!forms.some((form) => form.includes(piece))) return;
    spans.push(widened(text, at, at + MIN_PIECE_LENGTH, KEY_CHARACTER, false));
  });
}

/**
 * `text` with every registered secret hidden in any of its forms (see `KnownSecret`), and every piece of one as long as
 * `MIN_PIECE_LENGTH`, together with the token it is part of; where two of them touch or overlap, one `[redacted]` stands
 * for both.
 */
function redactKnownSecrets(text: string): string {
  if (knownSecrets.size === 0) return text;
  const spans: [number, number][] = [];
  for (const secret of knownSecrets.values()) {
    for (const needle of secret.written) addSpans(text, needle, KEY_CHARACTER, false, spans);
    for (const needle of secret.base64) addSpans(text, needle, BASE64_CHARACTER, true, spans);
  }
  if (text.includes('%')) addPercentEncodedSpans(text, spans);
  addPieceSpans(text, spans);
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [start, end] of spans) {
    const last = merged.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  let out = '';
  let kept = 0;
  for (const [start, end] of merged) {
    out += `${text.slice(kept, start)}${REDACTED}`;
    kept = end;
  }
  return out + text.slice(kept);
}

/**
 * Anything shaped like a credential, even one never registered: `Bearer <token>` (a quoted token whole, spaces and
 * all), `Basic <base64 of user:password>` (both also in URL-encoded text, see `BEARER`), `sk-…` style keys, the token
 * shapes of known services (see `TOKEN_SHAPES`), the password in a URL's user part (`scheme://user:password@`, see
 * `URL_USER_PASSWORD`), and the value of a credential field (`Authorization`, `x-api-key`, `api_key`, `api_token`,
 * `access_token`, `refresh_token`, `auth_token`, `id_token`, `token`, `password`, `passwd`, `passphrase`, `private_key`,
 * `client_secret`, `secret`, `secret_key`, `secret_access_key`, `Ocp-Apim-Subscription-Key`, the `_`
 * or `-` between the words optional — so that camelCase `apiKey`, `accessToken`, `clientSecret` count too — or
 * URL-encoded, `api%5Fkey`, followed by `:` or `=`), and a PEM private key block whole (see `PEM_PRIVATE_KEY`).
 * Secrecy wins over keeping words: a field's whole value goes, whatever it looks like, and only the words outside it
 * stay as written. A setting's name counts as a field too (`DISCORD_TOKEN: hunter` may be a compose file's line), so our
 * own sentences never put words after `…_TOKEN:`; they say `check DISCORD_TOKEN (…)` (every one is checked by a test).
 *
 * `BEARER`: `Bearer`, perhaps a `:` (`Bearer: <token>`, a common slip), then a space (`+` or `%20` in URL-encoded text) and a quoted string closed on its line or a
 * token (its base64 characters perhaps escaped: `%2B`, `%2F`, `%3D`). Only a name at the start of a word (or after a
 * `%XX` escape) counts, checked apart (see `startsWord`).
 */
const BEARER = /Bearer(:?\s+|:|\+|%20)(?:(["'])((?:\\.|(?!\2)[^\\\r\n])*)\2|(["'{]?)((?:[A-Za-z0-9._~+/=-]|%(?:2[BbFf]|3[Dd]))+))/gi;
/** `Basic`, then a space (`%20` in URL-encoded text) and base64 (its padding perhaps escaped: `%3D`), at the start of a word. */
const BASIC = /Basic(\s+|%20)([A-Za-z0-9+/]+(?:={1,2}|(?:%3[Dd]){1,2})?)(?![A-Za-z0-9+/=])/gi;
/** What may join the words of a field's name: `_`, `-`, the same URL-encoded (`%5F`, `%2D`), or nothing (camelCase). */
const JOIN = '(?:[_-]|%5F|%2D)?';
/**
 * A credential field's name and its separator (after the closing quote of a JSON key, if any); its value follows on the
 * same line (the spaces around the separator are spaces and tabs, never a line break: a field with nothing after it on
 * its line takes nothing from the next). Only a name at the start of a word counts, checked apart (see `startsWord`): a
 * pattern starting with a look-behind is tried at every position of the text, which costs on the error path.
 */
const CREDENTIAL_FIELD = new RegExp(
  String.raw`(authorization|ocp-apim-subscription-key|(?:x-)?api${JOIN}(?:key|token)|(?:(?:access|refresh)${JOIN})?token|pass(?:word|wd|phrase)|private${JOIN}key|(?:client${JOIN})?secret(?:(?:${JOIN}access)?${JOIN}key)?)(["']?[ \t]*[:=][ \t]*)`,
  'gi',
);
/**
 * Where an unquoted value after `=` ends in a URL query or a form body: at the `&` that starts the next `name=` (a `&`
 * inside a value is sent as `%26`).
 */
const NEXT_PARAMETER = /&(?=[A-Za-z0-9_.~%[\]-]+=)/;
/** A quoted value up to its matching closing quote on the same line (a backslash escapes one). */
const QUOTED_VALUE = /(["'])((?:\\.|(?!\1)[^\\\r\n])*)(\1)/y;
/**
 * A quoted value without a closing quote on its line: up to the end of its clause (`,` `;` `.` `!` `?` before a space),
 * an HTML tag or the end of the line. The words after it are the message's, not the value's.
 */
const UNCLOSED_VALUE = /(["'])((?:\\.|(?!<\/?[A-Za-z][^<>]{0,200}>)[^\\\r\n,;.!?]|[,;.!?](?=\S))*)()/y;
/** A word: characters up to a space, a quote, `,`, `}` or an HTML tag (`</p>` ends a word, it is not part of it). */
const WORD = String.raw`(?:(?!<\/?[A-Za-z][^<>]{0,200}>)[^\s"',}])+`;
/** A quoted string, closed on its line or (see `UNCLOSED_VALUE`) not. */
const QUOTED = String.raw`"(?:\\.|[^"\\\r\n])*"|'(?:\\.|[^'\\\r\n])*'|["'](?:\\.|(?!<\/?[A-Za-z][^<>]{0,200}>)[^\\\r\n,;.!?]|[,;.!?](?=\S))*`;
/** An unquoted first word of a value. */
const FIRST_WORD = new RegExp(WORD, 'y');
/** The word after a first word, on the same line: a quoted string or a plain word. The next line is never the value's. */
const NEXT_WORD = new RegExp(String.raw`([ \t]+)(${QUOTED}|${WORD})`, 'y');
/** An auth-param of RFC 9110 (`name=value`, `name="…"`). */
const AUTH_PARAM = String.raw`[!#$%&*+.^_\x60|~0-9A-Za-z-]+[ \t]*=[ \t]*(?:${QUOTED}|${WORD})`;
/**
 * The credentials after a scheme (RFC 9110), on its line (or an indented continuation line): a comma-separated list of
 * auth-params, or else one token68 (taken as any word, or a quoted string, so that odd characters are hidden too).
 * What follows them is no longer the field's.
 */
const AUTH_CREDENTIALS = new RegExp(String.raw`((?:\r?\n)?[ \t]+)(${AUTH_PARAM}(?:\s*,(?:\s*,)*\s*${AUTH_PARAM})*|${QUOTED}|${WORD})`, 'y');
/** Authorization schemes whose credential is the one word (or quoted string) after them (Discord's `Bot`, `Token`). */
const ONE_WORD_SCHEMES = new Set(['bearer', 'basic', 'token', 'bot']);
/** Other known schemes (RFC 9110 and common services): their auth-params or token68 are the credential. */
const OTHER_SCHEMES = new Set(['digest', 'negotiate', 'ntlm', 'apikey', 'dpop', 'oauth', 'hoba', 'mutual', 'vapid']);
/**
 * A value redacted already (perhaps quoted, its closing quote lost to a line end since): redacting it again hides no
 * more, though a message is redacted again once its lines are folded into one (an error built from service text).
 */
const ALREADY_REDACTED = /["']?\[redacted\](?=["'\s,;.!?]|$)/y;
/**
 * A placeholder standing for a credential in a message (`<API_KEY>`, `‹token›`), or one standing for a value hidden or
 * left out (`***`, as a Redis URL is shown; `…`), perhaps ending a sentence.
 */
const PLACEHOLDER = /^(?:<[^<>\s]+>|‹[^‹›\s]+›|\*{3,}|…)[.;:!?)`]*$/;
/**
 * `sk-` (any case: `SK-` too) at the start of a key and the characters of a key after it. Only a letter, digit, `_` or `-` before it makes it
 * part of a name (`risk-sk-levels`); after `/`, `+`, `%3D` or a quote it is a key.
 */
const SK_KEY = /sk-([A-Za-z0-9_-]+)/gi;
/**
 * A PEM private key block (`-----BEGIN PRIVATE KEY-----`, `-----BEGIN RSA PRIVATE KEY-----`, …), its lines and end
 * line, or up to the end of the text when its end is lost; whatever field holds it, on however many lines.
 */
const PEM_PRIVATE_KEY = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g;
/**
 * Tokens of known services by their shape, each at the start of a word (or after a `%XX` escape): Slack (`xoxb-`, `xwfp-` (a workflow step's),
 * `xoxp-`, `xapp-`, `xoxe.xoxp-`, … with a digit in what follows), GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`,
 * `github_pat_`, 20 characters or more after), Google API keys (`AIza` and 30 or more), Stripe secret and restricted
 * keys (`sk_live_`, `rk_live_`, `sk_test_`, `rk_test_`), AWS access key ids (`AKIA` or `ASIA` and 16 capitals or
 * digits), a JWT (`eyJ…` header, payload, signature) and a Discord bot token (three base64url parts joined by dots, the
 * first a user id: see `DISCORD_TOKEN_END`). The prefix stays so a reader knows which kind of token was hidden.
 */
const SHAPE_PREFIX = {
  slack: String.raw`(?:xoxe\.)?xox[a-z]-|xapp-|xoxe-|xwfp-`,
  github: 'gh[pousr]_|github_pat_',
  google: 'AIza',
  stripe: '[rs]k_(?:live|test)_',
  aws: 'AKIA|ASIA',
};
const TOKEN_SHAPES = new RegExp(
  [
    String.raw`(?<slack>${SHAPE_PREFIX.slack})(?<slackBody>[A-Za-z0-9-]+)`,
    String.raw`(?<github>${SHAPE_PREFIX.github})(?<githubBody>[A-Za-z0-9_]{20,})`,
    String.raw`(?<google>${SHAPE_PREFIX.google})[0-9A-Za-z_-]{30,}`,
    String.raw`(?<stripe>${SHAPE_PREFIX.stripe})[0-9A-Za-z]{8,}`,
    String.raw`(?<aws>${SHAPE_PREFIX.aws})[0-9A-Z]{16}(?![A-Za-z0-9])`,
    String.raw`(?<jwt>eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*)`,
  ].join('|'),
  'g',
);
/** The prefix of a token of a known shape at the start of a value; what follows it is `[redacted]` once it is shown redacted. */
const SHAPE_AT_START = new RegExp(String.raw`^(?:${Object.values(SHAPE_PREFIX).join('|')})`);
/**
 * The second and third parts of a Discord bot token (a timestamp, an HMAC); the first part, before them, is the bot's
 * user id (a snowflake of 17 to 20 digits) in base64url: 20 to 30 characters, found by looking back from here.
 */
const DISCORD_TOKEN_END = /\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,}/g;
/** `Bot <token>` outside a credential field (Discord's scheme): a word of 20 characters or more with a digit or a dot. */
const BOT = /\bBot(\s+)([A-Za-z0-9._~+/=-]{20,})/g;
/**
 * The user part of a URL with a password (`scheme://user:password@host`, the user name perhaps empty): the password runs
 * to the last `@` before the host, so one with an unescaped `@` goes whole. Starts with its literal `://` (the scheme
 * before it is checked apart, see `redactUrlPassword`); `[` `]` are not part of a user part, so a template
 * (`redis://[user:password@]host`) is not one.
 */
const URL_USER_PASSWORD = /:\/\/([^\s/?#@:"'<>[\]]*):([^\s/?#"'<>[\]]+)@/g;

const ALNUM = /[A-Za-z0-9]/;
/** What `\b` counts as part of a word. */
const WORD_CHARACTER = /\w/;
const BASE64URL = /[A-Za-z0-9_-]/;

/** A bearer token, not a word: it has a digit or punctuation in it, or is longer than any English word. */
function looksLikeToken(value: string): boolean {
  return /[0-9._~+/=-]/.test(value) || value.length >= 24;
}

/** Matches `pattern` (sticky) at `at` in `text`. */
function matchAt(pattern: RegExp, text: string, at: number): RegExpExecArray | null {
  pattern.lastIndex = at;
  return pattern.exec(text);
}

/** The inside of a quoted field value, redacted: a known scheme and a lone placeholder stay, everything else goes. */
function redactQuotedValue(inside: string): string {
  const trimmed = inside.trim();
  if (trimmed === '' || PLACEHOLDER.test(trimmed) || ONE_WORD_SCHEMES.has(trimmed.toLowerCase()) || OTHER_SCHEMES.has(trimmed.toLowerCase())) return inside;
  const scheme = /^(\S+)(\s+)(.*)$/s.exec(inside);
  if (scheme) {
    const [, first = '', space = '', rest = ''] = scheme;
    const name = first.toLowerCase();
    if (ONE_WORD_SCHEMES.has(name) && name !== 'basic' && PLACEHOLDER.test(rest.trim())) return inside;
    if (ONE_WORD_SCHEMES.has(name) || OTHER_SCHEMES.has(name)) return `${first}${space}[redacted]`;
  }
  return hiddenValue(inside);
}

/**
 * The value of a credential field starting at `at`, redacted: where it ends and what is shown instead, or nothing
 * when it holds no credential. A quoted value goes up to its closing quote (see `UNCLOSED_VALUE` without one); after
 * `Bearer`, `Basic`, `Token` or `Bot` the one word (or quoted string) after the scheme goes; after another known scheme
 * its auth-params or token68 go (see `AUTH_CREDENTIALS`); any other first word goes with the word after it, or with the
 * auth-params after it in an `Authorization` field. The words after that stay. On an environment-style line
 * (`toLineEnd`, see `startsEnvironmentLine`) an unquoted value is the rest of the line, spaces and all.
 */
function redactedFieldValue(text: string, at: number, authorization: boolean, toLineEnd: boolean): { end: number; shown: string } | undefined {
  if (matchAt(ALREADY_REDACTED, text, at)) return undefined;
  const quoted = matchAt(QUOTED_VALUE, text, at) ?? matchAt(UNCLOSED_VALUE, text, at);
  if (quoted) {
    const [whole, open = '', inside = '', close = ''] = quoted;
    return { end: at + whole.length, shown: `${open}${redactQuotedValue(inside)}${close}` };
  }
  const word = matchAt(FIRST_WORD, text, at);
  if (!word || PLACEHOLDER.test(word[0])) return undefined;
  if (toLineEnd) {
    const value = /^[^\r\n]*/.exec(text.slice(at))![0].trimEnd();
    return { end: at + value.length, shown: hiddenValue(value) };
  }
  const parameterEnd = text[at - 1] === '=' ? word[0].search(NEXT_PARAMETER) : -1;
  if (parameterEnd > 0) return { end: at + parameterEnd, shown: hiddenValue(word[0].slice(0, parameterEnd)) };
  const first = word[0];
  const scheme = first.toLowerCase();
  const afterFirst = at + first.length;
  if (ONE_WORD_SCHEMES.has(scheme) || (authorization && OTHER_SCHEMES.has(scheme))) {
    const next = matchAt(ONE_WORD_SCHEMES.has(scheme) ? NEXT_WORD : AUTH_CREDENTIALS, text, afterFirst);
    if (!next) return undefined;
    const [whole, space = '', value = ''] = next;
    if (scheme !== 'basic' && PLACEHOLDER.test(value)) return undefined;
    return { end: afterFirst + whole.length, shown: `${first}${space}${REDACTED}` };
  }
  const next = matchAt(authorization ? AUTH_CREDENTIALS : NEXT_WORD, text, afterFirst);
  if (next && PLACEHOLDER.test(next[2] ?? '')) return undefined;
  return { end: afterFirst + (next?.[0].length ?? 0), shown: next ? REDACTED : hiddenValue(first) };
}

/**
 * Whether the field `name` at `at` in `text`, with `separator` after it, is an environment variable set at the start of a
 * line (`PASSPHRASE=…`, `SLACK_SIGNING_SECRET=…`, `export API_KEY=…`): the name in capitals, digits and `_`, before an
 * `=`. Its value, as a shell or a `.env` file reads it, runs to the end of the line.
 */
function startsEnvironmentLine(text: string, at: number, name: string, separator: string): boolean {
  if (!/^[ \t]*=[ \t]*$/.test(separator) || !/^[A-Z0-9_]+$/.test(name)) return false;
  let start = at;
  while (start > 0 && /[A-Z0-9_]/.test(text[start - 1] ?? '')) start--;
  const from = Math.max(0, start - 40);
  const indent = /[ \t]*(?:export[ \t]+)?$/.exec(text.slice(from, start));
  const lineStart = from + (indent?.index ?? start - from);
  return lineStart === 0 || text[lineStart - 1] === '\n' || text[lineStart - 1] === '\r';
}

/** `text` with the value of every credential field redacted (see `redactedFieldValue`). */
function redactCredentialFields(text: string): string {
  let out = '';
  let kept = 0;
  CREDENTIAL_FIELD.lastIndex = 0;
  for (let field = CREDENTIAL_FIELD.exec(text); field !== null; field = CREDENTIAL_FIELD.exec(text)) {
    if (ALNUM.test(text[field.index - 1] ?? '')) {
      // Inside a word (`xclient_secret=`), a name may still start later (`secret=`).
      CREDENTIAL_FIELD.lastIndex = field.index + 1;
      continue;
    }
    const at = field.index + field[0].length;
    const name = field[1] ?? '';
    const value = redactedFieldValue(text, at, name.toLowerCase() === 'authorization', startsEnvironmentLine(text, field.index, name, field[2] ?? ''));
    if (!value) continue;
    out += text.slice(kept, at) + value.shown;
    kept = value.end;
    CREDENTIAL_FIELD.lastIndex = value.end;
  }
  return out + text.slice(kept);
}

/**
 * What follows `sk-` is a key, not a name, when a hyphen-separated part of it with a digit is 4 characters or more
 * (`sk-ant-api03-…`, `sk-abc123`) or the whole of it is 16 or more. `sk-guidelines-v2` is a name.
 */
function looksLikeKeyBody(body: string): boolean {
  return body.split('-').some((part) => part.length >= 4 && /[0-9]/.test(part)) || body.length >= 16;
}

/** Whether what is at `at` in `text` starts a word: nothing before it but a character other than `word`, or a `%XX` escape. */
function startsWord(text: string, at: number, word: RegExp): boolean {
  return at === 0 || !word.test(text[at - 1] ?? '') || (at >= 3 && /^%[0-9A-Fa-f]{2}$/.test(text.slice(at - 3, at)));
}

/** A token of a known service shown redacted (see `TOKEN_SHAPES`), or as it was when it is not one after all. */
function redactTokenShape(whole: string, ...rest: unknown[]): string {
  const shape = rest.at(-1) as Record<string, string | undefined>;
  const at = rest.at(-3) as number;
  const text = rest.at(-2) as string;
  if (!startsWord(text, at, ALNUM)) return whole;
  if (shape.slack !== undefined) return /[0-9]/.test(shape.slackBody ?? '') ? `${shape.slack}${REDACTED}` : whole;
  if (shape.jwt !== undefined) return REDACTED;
  return `${shape.github ?? shape.google ?? shape.stripe ?? shape.aws ?? ''}${REDACTED}`;
}

/**
 * What a field's hidden value is shown as: `[redacted]`, or the same with its service's prefix when the value is one
 * token of a known shape (`"token":"xoxb-[redacted]"`), as it is shown outside a field.
 */
function hiddenValue(value: string): string {
  const prefix = SHAPE_AT_START.exec(value)?.[0];
  if (prefix === undefined) return REDACTED;
  const shown = `${prefix}${REDACTED}`;
  return value === shown || value.replace(TOKEN_SHAPES, redactTokenShape) === shown ? shown : REDACTED;
}

/** `text` with every Discord bot token redacted (see `DISCORD_TOKEN_END`). */
function redactDiscordTokens(text: string): string {
  let out = '';
  let kept = 0;
  DISCORD_TOKEN_END.lastIndex = 0;
  for (let end = DISCORD_TOKEN_END.exec(text); end !== null; end = DISCORD_TOKEN_END.exec(text)) {
    let start = end.index;
    while (start > kept && end.index - start <= 30 && BASE64URL.test(text[start - 1] ?? '')) start--;
    const first = text.slice(start, end.index);
    if (first.length < 20 || first.length > 30 || (start > 0 && /[A-Za-z0-9_.-]/.test(text[start - 1] ?? ''))) continue;
    if (!/^[0-9]{17,20}$/.test(Buffer.from(first, 'base64url').toString('latin1'))) continue;
    out += text.slice(kept, start) + REDACTED;
    kept = end.index + end[0].length;
  }
  return out + text.slice(kept);
}

/**
 * A URL's password shown redacted, its scheme and user name kept (`redis://default:[redacted]@host`); a password that is
 * a placeholder (`***`, as a Redis URL is shown; `<password>`, `…`) stays, and so does what follows no scheme.
 */
function redactUrlPassword(whole: string, user: string, password: string, at: number, text: string): string {
  if (at === 0 || !/[A-Za-z0-9+.-]/.test(text[at - 1] ?? '') || PLACEHOLDER.test(password)) return whole;
  return `://${user}:${REDACTED}@`;
}

/**
 * A `Bearer` token outside a field shown redacted (see `BEARER`): a quoted one when a word in it looks like a token
 * (`"abc 123 def"`), its quotes kept; an unquoted one when it looks like a token. A lone placeholder stays.
 */
function redactBearer(
  whole: string,
  space: string,
  quote: string | undefined,
  quoted: string | undefined,
  open: string | undefined,
  value: string | undefined,
  at: number,
  text: string,
): string {
  if (!startsWord(text, at, WORD_CHARACTER)) return whole;
  const scheme = whole.slice(0, 6);
  if (quote !== undefined) {
    const inside = quoted ?? '';
    if (PLACEHOLDER.test(inside.trim()) || !inside.split(/\s+/).some(looksLikeToken)) return whole;
    return `${scheme}${space}${quote}${REDACTED}${quote}`;
  }
  return looksLikeToken(value ?? '') ? `${scheme}${space}${open ?? ''}${REDACTED}` : whole;
}

/** Basic credentials are base64 of `user:password`: decoded, printable text with a colon. */
function looksLikeBasicCredentials(encoded: string): boolean {
  const value = encoded.replace(/%3D/gi, '=');
  if (value.length < 4 || value.replace(/=+$/, '').length % 4 === 1) return false;
  const decoded = Buffer.from(value, 'base64').toString('latin1');
  return decoded.includes(':') && /^[\x20-\x7e]+$/.test(decoded);
}

/** Replaces registered secrets and anything credential-shaped with `[redacted]`. */
export function redactSecrets(text: string): string {
  // A registered secret first, with the whole token it is part of: a rule below finds no key in what is left of one.
  let out = redactKnownSecrets(text);
  if (out.includes('-----BEGIN ')) out = out.replace(PEM_PRIVATE_KEY, REDACTED);
  // In a credential field the whole value goes; elsewhere only what looks like a credential.
  const shapes = redactCredentialFields(out)
    .replace(BEARER, redactBearer)
    .replace(BASIC, (whole: string, space: string, value: string, at: number, all: string) =>
      startsWord(all, at, WORD_CHARACTER) && looksLikeBasicCredentials(value) ? `${whole.slice(0, 5)}${space}[redacted]` : whole,
    )
    .replace(SK_KEY, (whole: string, body: string, at: number, all: string) =>
      startsWord(all, at, BASE64URL) && looksLikeKeyBody(body) ? `${whole.slice(0, 3)}${REDACTED}` : whole,
    )
    .replace(BOT, (whole: string, space: string, value: string) => (/[0-9.]/.test(value) ? `Bot${space}${REDACTED}` : whole))
    .replace(URL_USER_PASSWORD, redactUrlPassword)
    .replace(TOKEN_SHAPES, redactTokenShape);
  return redactDiscordTokens(shapes);
}
