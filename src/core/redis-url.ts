/** Hides the password (and a user name given without one) of a Redis URL, so the URL can be logged or shown. */
export function redactRedisUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '[a Redis URL that does not parse]';
  }
  if (parsed.password) parsed.password = '***';
  else if (parsed.username) parsed.username = '***';
  return parsed.toString();
}

/** The secret parts of a Redis URL (password, or a user name used as one), to scrub from any text. */
export function redisUrlSecrets(url: string): string[] {
  try {
    const parsed = new URL(url);
    return [parsed.password || parsed.username].filter((s) => s.length > 0).flatMap((s) => [s, decodeURIComponent(s)]);
  } catch {
    return [];
  }
}
