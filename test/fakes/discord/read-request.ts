import type { IncomingMessage } from 'node:http';

/** A file part of a multipart request (`files[n]`). */
export interface ReceivedFile {
  field: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export interface ReadBody {
  /** The JSON body, or the multipart `payload_json` part. */
  json: Record<string, unknown> | undefined;
  files: ReceivedFile[];
  multipart: boolean;
  /** The body's size in bytes as it came (multipart boundaries and `payload_json` included): what Discord's request size limit counts. */
  bytes: number;
}

/** Reads a request body the way Discord does: JSON, or multipart with `payload_json` and `files[n]` parts. */
export async function readRequest(req: IncomingMessage): Promise<ReadBody> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return parseBody(req.headers['content-type'] ?? '', Buffer.concat(chunks));
}

/**
 * A body of content type `type` as it came (`raw`), read the way Discord does: multipart with `payload_json` and
 * `files[n]` parts, else JSON (none when empty); its size kept for the request size limit.
 */
export async function parseBody(type: string, raw: Buffer): Promise<ReadBody> {
  if (type.startsWith('multipart/form-data')) {
    const form = await new Request('http://fake.discord/upload', { method: 'POST', headers: { 'content-type': type }, body: raw }).formData();
    const files: ReceivedFile[] = [];
    let json: Record<string, unknown> | undefined;
    for (const [field, value] of form.entries()) {
      if (typeof value === 'string') {
        if (field === 'payload_json') json = JSON.parse(value) as Record<string, unknown>;
        continue;
      }
      files.push({ field, filename: value.name, contentType: value.type, bytes: Buffer.from(await value.arrayBuffer()) });
    }
    return { json, files, multipart: true, bytes: raw.length };
  }
  if (raw.length === 0) return { json: undefined, files: [], multipart: false, bytes: 0 };
  return { json: JSON.parse(raw.toString('utf8')) as Record<string, unknown>, files: [], multipart: false, bytes: raw.length };
}
