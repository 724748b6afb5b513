import type { webApi } from '@slack/bolt';

export interface FileToUpload {
  data: Buffer;
  filename: string;
  title?: string | undefined;
  altText?: string | undefined;
}

export interface UploadedFile {
  id: string;
  name: string;
}

const UPLOAD_TIMEOUT_MS = 120_000;

/** The name of a preview Pictor posts in a job's thread: `pictor-<job>-<image>-preview-<n>.<ext>`. */
export function previewFileName(jobId: string | undefined, imageIndex: number, partialIndex: number, ext: string): string {
  return `pictor-${jobId}-${imageIndex + 1}-preview-${partialIndex + 1}.${ext}`;
}

export function isPreviewFileName(name: string | undefined): boolean {
  return name !== undefined && /^pictor-.+-preview-\d+\.\w+$/.test(name);
}

/**
 * Slack's upload flow: `files.getUploadURLExternal` for each file, the bytes
 * POSTed to the URL Slack gave (pre-signed: no token goes with them), then one
 * `files.completeUploadExternal` that shares them all in the channel (and
 * thread) with a comment. Only that last call is a write to the channel.
 */
export async function uploadFiles(
  client: webApi.WebClient,
  input: { channelId: string; threadTs?: string | undefined; files: FileToUpload[]; initialComment?: string | undefined },
): Promise<UploadedFile[]> {
  const uploaded = await Promise.all(
    input.files.map(async (file) => {
      const target = await client.files.getUploadURLExternal({
        filename: file.filename,
        length: file.data.length,
        ...(file.altText ? { alt_text: file.altText } : {}),
      });
      if (!target.upload_url || !target.file_id) throw new Error('files.getUploadURLExternal gave no upload URL');
      const response = await fetch(target.upload_url, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: file.data,
        signal: AbortSignal.timeout(UPLOAD_TIMEOUT_MS),
      });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`the upload of ${file.filename} was refused with status ${response.status}`);
      return { id: target.file_id, name: file.filename, title: file.title ?? file.filename };
    }),
  );
  const [first, ...rest] = uploaded;
  if (!first) return [];
  await client.files.completeUploadExternal({
    files: [{ id: first.id, title: first.title }, ...rest.map((f) => ({ id: f.id, title: f.title }))],
    channel_id: input.channelId,
    ...(input.threadTs ? { thread_ts: input.threadTs } : {}),
    ...(input.initialComment ? { initial_comment: input.initialComment } : {}),
  });
  return uploaded.map(({ id, name }) => ({ id, name }));
}
