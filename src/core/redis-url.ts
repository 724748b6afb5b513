/**
 * Query parameters that carry a credential. The Redis client takes any option from the query (`?password=…` works as
 * well as `user:password@`, and so do `sentinelPassword`, `sentinelUsername` and TLS options), so their values are as
 * secret as the password before the host: every name holding `password`, `passphrase`, `secret`, `token`, `key` or
 * `username`, and `user` and `pass` themselves. Compared ignoring case.
 */
const SECRET_QUERY_NAME = /password|passphrase|secret|token|key|username|^user$|^pass$/i;

/** One `name=value` piece of a query: as written, and as the Redis client decodes it. */
interface QueryPiece {
  raw: string;
  rawValue: string;
  name: string;
  value: string;
}

function queryPieces(search: string): QueryPiece[] {
  return search
    .replace(/^\?/, '')
    .split('&')
    .filter((raw) => raw.length > 0)
    .map((raw) => {
      const [name = '', value = ''] = [...new URLSearchParams(raw)][0] ?? [];
      const equals = raw.indexOf('=');
      return { raw, rawValue: equals === -1 ? '' : raw.slice(equals + 1), name, value };
    });
}

function isSecretPiece(piece: QueryPiece): boolean {
  return SECRET_QUERY_NAME.test(piece.name);
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The parts of a parsed Redis URL that are secret, and the URL with them hidden: the user name and the password before
 * the host, the value of every credential query parameter (user names among them), and the fragment, which a password
 * holding an unescaped `#` spills into. One rule for all, so what the shown URL hides is exactly what is scrubbed from
 * text that quotes the URL.
 */
function secretParts(parsed: URL): { secrets: string[]; shown: string } {
  const secrets: string[] = [];
  for (const part of [parsed.username, parsed.password, parsed.hash.replace(/^#/, '')]) if (part) secrets.push(part, decoded(part));
  const pieces = queryPieces(parsed.search);
  for (const piece of pieces.filter(isSecretPiece)) secrets.push(piece.rawValue, piece.value, decoded(piece.rawValue));

  const shown = new URL(parsed.href);
  if (shown.username) shown.username = '***';
  if (shown.password) shown.password = '***';
  shown.hash = '';
  if (pieces.some(isSecretPiece)) {
    const name = (piece: QueryPiece) => piece.raw.split('=', 1)[0];
    shown.search = pieces.map((piece) => (isSecretPiece(piece) ? `${name(piece)}=***` : piece.raw)).join('&');
  }
  return { secrets: [...new Set(secrets)].filter((s) => s.length > 0), shown: shown.toString() };
}

/** Hides the secret parts of a Redis URL (see `secretParts`), so the URL can be logged or shown. */
export function redactRedisUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '[a Redis URL that does not parse]';
  }
  return secretParts(parsed).shown;
}

/** The secret parts of a Redis URL, as written and decoded, to scrub from any text (an error of the Redis client). */
export function redisUrlSecrets(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  return secretParts(parsed).secrets;
}

/** Secrets shorter than this are scrubbed only where they stand as a whole word, not inside other words. */
const MIN_SUBSTRING_SECRET_LENGTH = 4;

/**
 * `text` (an error of the Redis client) with every secret of a Redis URL (see `redisUrlSecrets`) replaced by `***`.
 * A secret of 4 characters or more goes wherever it appears; a shorter one only as a whole word, so a password `x` or
 * a user `ab` does not eat every "x" or "ab" of the reason. Longer secrets go first, so no piece of one is left over.
 */
export function scrubRedisSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length >= MIN_SUBSTRING_SECRET_LENGTH) out = out.split(secret).join('***');
    else if (secret.length > 0) out = out.replace(new RegExp(`(?<![A-Za-z0-9_])${secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9_])`, 'g'), '***');
  }
  return out;
}
