import type { webApi } from '@slack/bolt';
import { LIMITS, MIME_TYPES } from 'pictor';
import type { ImagesToFetch, InputImage } from '../runner/index.js';
import { downloadSlackFile } from './download-slack-file.js';
import type { FileHost } from './file-hosts.js';
import { fileSize, words } from '../runner/index.js';
import { nameValues } from './download-slack-file.js';
import { SlackInputError } from './SlackInputError.js';

/** The fields of a Slack file object the bot uses. */
export interface SlackFileRef {
  id: string;
  name?: string | undefined;
  mimetype?: string | undefined;
  size?: number | undefined;
  url_private?: string | undefined;
}

const ACCEPTED_MIME = new Set<string>([...Object.values(MIME_TYPES), 'image/jpg']);

/** The image files among a message's (or a form's) files; other files are left out. Deleted files too. */
export function imageFilesOf(files: unknown): SlackFileRef[] {
  if (!Array.isArray(files)) return [];
  const out: SlackFileRef[] = [];
  for (const raw of files as Record<string, unknown>[]) {
    if (!raw || typeof raw.id !== 'string' || raw.mode === 'tombstone') continue;
    const mimetype = typeof raw.mimetype === 'string' ? raw.mimetype.toLowerCase() : undefined;
    if (mimetype !== undefined && !mimetype.startsWith('image/')) continue;
    out.push({
      id: raw.id,
      name: typeof raw.name === 'string' ? raw.name : undefined,
      mimetype,
      size: typeof raw.size === 'number' ? raw.size : undefined,
      url_private: typeof raw.url_private === 'string' ? raw.url_private : undefined,
    });
  }
  return out;
}

/**
 * Checks count, declared size and declared type before any download, so bad
 * input is refused at once; the real type is then checked by content.
 */
export function checkImageFiles(files: readonly SlackFileRef[], maxImages: number = LIMITS.editImagesMax): void {
  if (files.length === 0) {
    throw new SlackInputError('no_images', words('slack.input.no_images'));
  }
  if (files.length > maxImages) {
    throw new SlackInputError('too_many_images', words('slack.input.too_many', { count: files.length, max: maxImages }), { allowed: `1-${maxImages}` });
  }
  for (const file of files) {
    const name = nameValues(file.name, 'image');
    if (file.size !== undefined && file.size >= LIMITS.editImageMaxBytes) {
      throw new SlackInputError('file_too_large', words('slack.input.too_large', { ...name, size: fileSize(file.size), max: fileSize(LIMITS.editImageMaxBytes) }));
    }
    if (file.mimetype !== undefined && !ACCEPTED_MIME.has(file.mimetype)) {
      throw new SlackInputError('file_not_image', words('slack.input.wrong_type', { ...name, type: file.mimetype }), { allowed: 'png, jpeg, webp' });
    }
  }
}

export interface DownloadImagesOptions {
  client: webApi.WebClient;
  token: string;
  allowedHosts: readonly FileHost[];
  maxImages?: number | undefined;
}

/**
 * An edit's Slack files as the runner's intake takes them: checked (count, declared size and type) at once — a
 * SlackInputError, before anything is asked of the runner — then room held in the queue for the sizes Slack
 * reported, and downloaded once the job is admitted (`downloadImages`).
 */
export function imagesOf(files: readonly SlackFileRef[], options: DownloadImagesOptions): ImagesToFetch {
  checkImageFiles(files, options.maxImages);
  return { declaredBytes: files.reduce((sum, file) => sum + (file.size ?? 0), 0), fetch: () => downloadImages(files, options) };
}

/** Checks, then downloads every file (asking Slack for a file's address and size when the payload had none). */
export async function downloadImages(files: readonly SlackFileRef[], options: DownloadImagesOptions): Promise<InputImage[]> {
  checkImageFiles(files, options.maxImages);
  const resolved = await Promise.all(files.map((file) => (file.url_private ? file : fileInfo(options.client, file))));
  checkImageFiles(resolved, options.maxImages);
  return downloadAll(resolved, options);
}

async function downloadAll(resolved: readonly SlackFileRef[], options: DownloadImagesOptions): Promise<InputImage[]> {
  const out: InputImage[] = new Array<InputImage>(resolved.length);
  let next = 0;
  const worker = async () => {
    while (next < resolved.length) {
      const index = next++;
      const file = resolved[index]!;
      const { data } = await downloadSlackFile(file.url_private ?? '', { token: options.token, allowedHosts: options.allowedHosts, name: file.name, size: file.size });
      out[index] = { data, filename: file.name };
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, resolved.length) }, worker));
  return out;
}

async function fileInfo(client: webApi.WebClient, file: SlackFileRef): Promise<SlackFileRef> {
  let info: Record<string, unknown> | undefined;
  try {
    info = (await client.files.info({ file: file.id })).file as Record<string, unknown> | undefined;
  } catch (cause) {
    throw new SlackInputError('file_download_failed', words('slack.input.gone', nameValues(file.name, 'image')), { cause });
  }
  const [ref] = imageFilesOf(info ? [info] : []);
  if (!ref?.url_private) {
    throw new SlackInputError('file_download_failed', words('slack.input.gone', nameValues(file.name, 'image')));
  }
  return ref;
}
