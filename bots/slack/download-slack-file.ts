import { LIMITS, sniffImageType, type OutputFormat } from '../../src/index.js';
import { isAllowedFileUrl, type FileHost } from './file-hosts.js';
import { SlackInputError } from './SlackInputError.js';

export interface DownloadOptions {
  /** The bot token: sent only to an allowed file host. */
  token: string;
  allowedHosts: readonly FileHost[];
  /** Largest file accepted. Default: the spec's edit input limit. */
  maxBytes?: number | undefined;
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
  const name = options.name ? `*${options.name}*` : 'A file';
  const doFetch = options.fetch ?? fetch;
  const signal = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  let target = parseUrl(url, name);
  for (let hop = 0; ; hop++) {
    if (!isAllowedFileUrl(target, options.allowedHosts)) {
      throw new SlackInputError(
        'file_host_not_allowed',
        `${name} is stored on ${target.host || 'an unknown host'}, which is not one of Slack's file hosts, so I did not download it.`,
      );
    }
    let response: Response;
    try {
      response = await doFetch(target, { headers: { authorization: `Bearer ${options.token}` }, redirect: 'manual', signal });
    } catch (cause) {
      throw new SlackInputError('file_download_failed', `${name} could not be downloaded from Slack; try again.`, { cause });
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      const location = response.headers.get('location');
      if (!location || hop >= MAX_REDIRECTS) {
        throw new SlackInputError('file_download_failed', `${name} could not be downloaded from Slack (too many redirects); try again.`);
      }
      target = parseUrl(new URL(location, target).toString(), name);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new SlackInputError('file_download_failed', `${name} could not be downloaded from Slack (status ${response.status}); try again.`);
    }
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared >= maxBytes) {
      await response.body?.cancel();
      throw tooLarge(name, declared, maxBytes);
    }
    const data = await readCapped(response, maxBytes, name);
    const format = sniffImageType(data);
    if (!format) {
      const looksLikeHtml = /^\s*<(!doctype|html)/i.test(data.subarray(0, 64).toString('latin1'));
      throw new SlackInputError(
        looksLikeHtml ? 'file_download_failed' : 'file_not_image',
        looksLikeHtml
          ? `Slack answered with a sign-in page instead of ${options.name ? `*${options.name}*` : 'the file'}: the app needs the files:read scope (reinstall it from its manifest).`
          : `${name} is not a PNG, JPEG or WebP image (checked by its content).`,
      );
    }
    return { data, format };
  }
}

function parseUrl(url: string, name: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new SlackInputError('file_download_failed', `${name} has no address I can download it from.`);
  }
}

function tooLarge(name: string, bytes: number, maxBytes: number): SlackInputError {
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
  return new SlackInputError('file_too_large', `${name} is ${mb(bytes)}; each image must be under ${mb(maxBytes)}.`);
}

async function readCapped(response: Response, maxBytes: number, name: string): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total >= maxBytes) {
        await reader.cancel();
        throw tooLarge(name, total, maxBytes);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof SlackInputError) throw error;
    throw new SlackInputError('file_download_failed', `${name} could not be downloaded from Slack; try again.`, { cause: error });
  }
  return Buffer.concat(chunks);
}
