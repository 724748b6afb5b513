/**
 * Where the bot token may be sent to download a file: Slack's own file hosts,
 * plus whatever the operator configures (another Slack instance, a test fake).
 */
export const DEFAULT_FILE_HOSTS = ['files.slack.com', 'files.slack-gov.com'] as const;

export interface FileHost {
  protocol: 'https:' | 'http:';
  /** Host name, and port when it is not the protocol's default (as `URL.host` gives it). */
  host: string;
}

/**
 * `files.slack.com` (https only) or a full origin such as `http://127.0.0.1:8080`.
 * Throws a plain Error saying what is wrong.
 */
export function parseFileHost(entry: string): FileHost {
  const text = entry.trim();
  if (text.includes('://')) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new Error(`${JSON.stringify(text)} is not a host name or an origin such as https://files.example.com`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${JSON.stringify(text)} must use https (or http)`);
    if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.username || url.password) {
      throw new Error(`${JSON.stringify(text)} must be an origin only (scheme, host and port)`);
    }
    return { protocol: url.protocol, host: url.host };
  }
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(text)) {
    throw new Error(`${JSON.stringify(text)} is not a host name such as files.slack.com`);
  }
  return { protocol: 'https:', host: text.toLowerCase() };
}

/** Whether the token may go to this URL: same scheme and host (and port) as an allowed host, no user info. */
export function isAllowedFileUrl(url: URL, hosts: readonly FileHost[]): boolean {
  if (url.username || url.password) return false;
  return hosts.some((h) => h.protocol === url.protocol && h.host === url.host);
}
