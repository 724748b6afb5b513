import { LIMITS, sniffImageType, type OutputFormat } from 'pictor';
import { DownloadTooLargeError, readDownload } from '../read-download.js';
import { isAllowedFileUrl, type FileHost } from './file-hosts.js';
import { fileSize, words, type MessageValues } from '../runner/index.js';
import { SlackInputError } from './SlackInputError.js';

export interface DownloadOptions {
  /** The bot token: sent only to an allowed file host. */
  token: string;
  allowedHosts: readonly FileHost[];
  /** Largest file accepted. Default: the spec's edit input limit. */
  maxBytes?: number | undefined;
  /** The file's size as Slack reported it (`size`): the download is read into one buffer of it, and refused past it. */
  size?: number | undefined;
  /** Per file. Default 60 s. */
  timeoutMs?: number | undefined;
  /** For the file's name in messages. */
  name?: string | undefined;
  fetch?: typeof fetch | undefined;
}

const MAX_REDIRECTS = 3;
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * Downloads a Slack file (`url_private`) with the bot token and checks that it
 * is a PNG, JPEG or WebP by its bytes. The token goes only to an allowed file
 * host, redirects included; anything else is refused before a request is made.
 * Throws SlackInputError.
 */
export async function downloadSlackFile(url: string, options: DownloadOptions): Promise<{ data: Buffer; format: OutputFormat }> {
  const maxBytes = options.maxBytes ?? LIMITS.editImageMaxBytes;
  const name = nameValues(options.name, 'file');
  const doFetch = options.fetch ?? fetch;
  const signal = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  let target = parseUrl(url, name);
  for (let hop = 0; ; hop++) {
    if (!isAllowedFileUrl(target, options.allowedHosts)) {
      throw new SlackInputError('file_host_not_allowed', words('slack.input.host_not_allowed', { ...name, host: target.host || '-' }));
    }
    let response: Response;
    try {
      response = await doFetch(target, { headers: { authorization: `Bearer ${options.token}` }, redirect: 'manual', signal });
    } catch (cause) {
      throw new SlackInputError('file_download_failed', words('slack.input.download_failed', { ...name, reason: 'other', status: 0 }), { cause });
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      const location = response.headers.get('location');
      if (!location || hop >= MAX_REDIRECTS) {
        throw new SlackInputError('file_download_failed', words('slack.input.download_failed', { ...name, reason: 'redirects', status: 0 }));
      }
      target = parseUrl(new URL(location, target).toString(), name);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new SlackInputError('file_download_failed', words('slack.input.download_failed', { ...name, reason: 'status', status: response.status }));
    }
    const contentLength = response.headers.get('content-length');
    const declared = contentLength === null ? undefined : Number(contentLength);
    if (declared !== undefined && Number.isFinite(declared) && declared >= maxBytes) {
      await response.body?.cancel();
      throw tooLarge(name, declared, maxBytes);
    }
    const data = await readHeld(response, { announced: [options.size, declared], maxBytes }, name);
    const format = sniffImageType(data);
    if (!format) {
      const looksLikeHtml = /^\s*<(!doctype|html)/i.test(data.subarray(0, 64).toString('latin1'));
      throw new SlackInputError(looksLikeHtml ? 'file_download_failed' : 'file_not_image', words(looksLikeHtml ? 'slack.input.sign_in_page' : 'slack.input.not_an_image', name));
    }
    return { data, format };
  }
}

/** How a message names a file: `*name.png*`, or "a file"/"an image" when Slack gave no name. */
export function nameValues(name: string | undefined, what: 'file' | 'image'): MessageValues {
  return { named: name ? 'yes' : 'no', name: name ? `*${name}*` : '', what };
}

function parseUrl(url: string, name: MessageValues): URL {
  try {
    return new URL(url);
  } catch {
    throw new SlackInputError('file_download_failed', words('slack.input.no_address', name));
  }
}

function tooLarge(name: MessageValues, bytes: number, maxBytes: number): SlackInputError {
  return new SlackInputError('file_too_large', words('slack.input.too_large', { ...name, size: fileSize(bytes), max: fileSize(maxBytes) }));
}

/** The body in one buffer of the size Slack reported (or the response says): `readDownload`. */
async function readHeld(response: Response, bounds: { announced: (number | undefined)[]; maxBytes: number }, name: MessageValues): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  try {
    return await readDownload(response.body as unknown as AsyncIterable<Uint8Array>, bounds);
  } catch (error) {
    if (error instanceof DownloadTooLargeError) {
      await response.body.cancel().catch(() => {});
      if (error.limitBytes >= bounds.maxBytes - 1) throw tooLarge(name, error.receivedBytes, bounds.maxBytes);
      throw new SlackInputError('file_download_failed', words('slack.input.larger_than_said', name), { cause: error });
    }
    throw new SlackInputError('file_download_failed', words('slack.input.download_failed', { ...name, reason: 'other', status: 0 }), { cause: error });
  }
}
