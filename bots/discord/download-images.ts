import { LIMITS, sniffImageType } from 'pictor';
import { DownloadTooLargeError, readDownload } from '../read-download.js';
import type { InputImage } from '../runner/types.js';
import { fileSize, InputRefusedError, words, type Words } from '../runner/index.js';
import { codeSpan } from './text.js';

/** One attachment to fetch: what Discord told us about it, and how the user knows it. */
export interface AttachmentSource {
  /** The option or position it came from, as the user knows it (`image2`, `image 3 of that message`). */
  label: string;
  filename: string;
  url: string;
  /** Size Discord reported (checked before downloading; the real size is checked while downloading). */
  size?: number | null | undefined;
}

export interface DownloadPolicy {
  /** Hosts (`host` or `host:port`) images may come from. Plain http only for loopback hosts (test doubles). */
  allowedHosts: readonly string[];
  /** Each image must be under this many bytes. */
  maxBytes: number;
  /** At most this many images. */
  maxCount: number;
  timeoutMs: number;
}

export const INPUT_REFUSAL_CODES = ['no_images', 'too_many_images', 'host_not_allowed', 'image_too_large', 'not_an_image', 'download_failed'] as const;
export type InputRefusalCode = (typeof INPUT_REFUSAL_CODES)[number];

/** An input image was refused before anything was spent (the member's: `InputRefusedError`). Its words name the image. */
export class InputImageError extends InputRefusedError<InputRefusalCode> {
  readonly label: string | undefined;

  constructor(code: InputRefusalCode, what: Words, label?: string, options?: { cause?: unknown }) {
    super(code, what, options);
    this.label = label;
  }
}

export function defaultDownloadPolicy(allowedHosts: readonly string[]): DownloadPolicy {
  return { allowedHosts, maxBytes: LIMITS.editImageMaxBytes, maxCount: LIMITS.editImagesMax, timeoutMs: 30_000 };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether a URL points at an allowed host over an allowed protocol (never with credentials in it). */
export function isAllowedImageUrl(raw: string, allowedHosts: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.username || url.password) return false;
  if (!allowedHosts.map((h) => h.toLowerCase()).includes(url.host.toLowerCase())) return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
}

/**
 * Checks what Discord reported of input images — count, host, size — before
 * anything is asked of the runner or downloaded; throws InputImageError.
 */
export function checkSources(sources: readonly AttachmentSource[], policy: DownloadPolicy): void {
  if (sources.length === 0) throw new InputImageError('no_images', words('discord.input.no_images'));
  if (sources.length > policy.maxCount) {
    throw new InputImageError('too_many_images', words('discord.input.too_many', { max: policy.maxCount, count: sources.length }));
  }
  for (const source of sources) {
    if (!isAllowedImageUrl(source.url, policy.allowedHosts)) {
      throw new InputImageError('host_not_allowed', words('discord.input.host_not_allowed', { label: source.label }), source.label);
    }
    if (typeof source.size === 'number' && source.size >= policy.maxBytes) {
      throw new InputImageError('image_too_large', tooLarge(source, source.size, policy), source.label);
    }
  }
}

/** The bytes of images as reported before they are fetched (an unknown size counts as 0: the real bytes are checked once they are here). */
export function declaredBytesOf(images: readonly { size?: number | null | undefined; bytes?: number | undefined }[]): number {
  return images.reduce((sum, img) => sum + (img.size ?? img.bytes ?? 0), 0);
}

/**
 * Checks (`checkSources`) and downloads input images: the real bytes are
 * capped while reading, their type checked by magic bytes. Refuses with
 * InputImageError before anything is spent. Downloads run in parallel; the
 * first refusal stops the others.
 */
export async function downloadImages(sources: readonly AttachmentSource[], policy: DownloadPolicy): Promise<InputImage[]> {
  checkSources(sources, policy);
  const group = new AbortController();
  try {
    return await Promise.all(sources.map((source) => downloadOne(source, policy, group.signal)));
  } finally {
    group.abort();
  }
}

function tooLarge(source: AttachmentSource, bytes: number, policy: DownloadPolicy): Words {
  return words('discord.input.too_large', { label: source.label, file: codeSpan(source.filename), size: fileSize(bytes), max: fileSize(policy.maxBytes) });
}

async function downloadOne(source: AttachmentSource, policy: DownloadPolicy, stop: AbortSignal): Promise<InputImage> {
  const failed = (cause?: unknown) =>
    new InputImageError('download_failed', words('discord.input.download_failed', { label: source.label, file: codeSpan(source.filename) }), source.label, { cause });
  let response: Response;
  try {
    response = await fetch(source.url, { redirect: 'error', signal: AbortSignal.any([stop, AbortSignal.timeout(policy.timeoutMs)]) });
  } catch (error) {
    throw failed(error);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel().catch(() => {});
    throw failed(new Error(`HTTP ${response.status}`));
  }
  const contentLength = response.headers.get('content-length');
  const declared = contentLength === null ? undefined : Number(contentLength);
  if (declared !== undefined && Number.isFinite(declared) && declared >= policy.maxBytes) {
    await response.body.cancel().catch(() => {});
    throw new InputImageError('image_too_large', tooLarge(source, declared, policy), source.label);
  }
  let data: Buffer;
  try {
    // One buffer of the size Discord reported (or the response says), filled as the chunks arrive.
    data = await readDownload(response.body as unknown as AsyncIterable<Uint8Array>, { announced: [source.size, declared], maxBytes: policy.maxBytes });
  } catch (error) {
    if (error instanceof DownloadTooLargeError) {
      await response.body.cancel().catch(() => {});
      const why = error.limitBytes >= policy.maxBytes - 1 ? 'limit' : 'announced';
      throw new InputImageError('image_too_large', words('discord.input.too_large_read', { label: source.label, file: codeSpan(source.filename), why, max: fileSize(policy.maxBytes) }), source.label);
    }
    throw failed(error);
  }
  if (data.length === 0 || sniffImageType(data) === null) {
    throw new InputImageError('not_an_image', words('discord.input.not_an_image', { label: source.label, file: codeSpan(source.filename) }), source.label);
  }
  return { data, filename: source.filename };
}
