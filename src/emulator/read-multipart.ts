import { createHash } from 'node:crypto';
import busboy from 'busboy';
import { boundedChunks } from '../core/read-bounded.js';
import { resetOnBrokenBody } from './faults.js';

/** One file part read whole (or as far as a limit allowed). */
export interface FilePart {
  field: string;
  filename: string | undefined;
  contentType: string;
  size: number;
  sha256: string;
  bytes: Buffer;
}

export interface MultipartLimits {
  /** Largest body; more is refused as soon as it arrives. */
  maxBodyBytes: number;
  /** Largest file part; more is refused as soon as it arrives. */
  maxFileBytes: number;
  /** Largest text part. */
  maxFieldBytes: number;
  /** File parts read at most (more are skipped, and counted in `skippedFiles`). */
  maxFiles: number;
  /** Whether a file part is kept; the others are skipped unread (listed in `otherFiles`). */
  keepFile(field: string): boolean;
  /**
   * Called with each kept file part once it has arrived whole, one at a time in
   * order, while the rest of the body streams in; it may replace `bytes` (with
   * something smaller) so that a large upload is never held whole.
   */
  onFile?(part: FilePart, index: number): Promise<void>;
  /** Checked when a kept file part starts; a failure ends the reading. */
  checkFile?(part: { field: string; contentType: string; index: number }): Response | undefined;
}

export type LimitBreach =
  | { kind: 'body'; bytes: number }
  | { kind: 'file'; index: number; field: string }
  | { kind: 'field'; field: string }
  | { kind: 'malformed' };

export interface MultipartRead {
  text: [string, string][];
  files: FilePart[];
  otherFiles: string[];
  skippedFiles: number;
  /** Why reading stopped early, if it did. */
  breach: LimitBreach | undefined;
  /** The answer `checkFile` gave, if it stopped the reading. */
  refused: Response | undefined;
}

/**
 * Reads a multipart body chunk by chunk, keeping only the file parts asked
 * for; stops reading the moment a limit is passed (the rest of the body is
 * never read) or `checkFile` refuses a part.
 */
export async function readMultipart(request: Request, contentType: string, limits: MultipartLimits): Promise<MultipartRead> {
  const out: MultipartRead = { text: [], files: [], otherFiles: [], skippedFiles: 0, breach: undefined, refused: undefined };
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      limits: { fileSize: limits.maxFileBytes, files: limits.maxFiles, fieldSize: limits.maxFieldBytes, fields: 1000, parts: 2000 },
    });
  } catch {
    out.breach = { kind: 'malformed' };
    return out;
  }
  const stopped = () => out.breach !== undefined || out.refused !== undefined;
  let processing: Promise<void> = Promise.resolve();
  let processingFailed: unknown;

  parser.on('field', (name, value, info) => {
    if (info.valueTruncated) out.breach ??= { kind: 'field', field: name };
    else out.text.push([name, value]);
  });
  parser.on('filesLimit', () => {
    out.skippedFiles += 1;
  });
  parser.on('file', (field, stream, info) => {
    // Ending the reading early destroys the part being read with an error; it is expected.
    stream.on('error', () => undefined);
    if (!limits.keepFile(field) || stopped()) {
      if (!limits.keepFile(field)) out.otherFiles.push(field);
      stream.resume();
      return;
    }
    const index = out.files.length;
    const part: FilePart = { field, filename: info.filename || undefined, contentType: info.mimeType, size: 0, sha256: '', bytes: Buffer.alloc(0) };
    out.files.push(part);
    const refused = limits.checkFile?.({ field, contentType: info.mimeType, index });
    if (refused) {
      out.refused ??= refused;
      stream.resume();
      return;
    }
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => {
      part.size += chunk.length;
      if (stopped()) return;
      hash.update(chunk);
      chunks.push(chunk);
    });
    stream.on('limit', () => {
      out.breach ??= { kind: 'file', index, field };
      chunks.length = 0;
    });
    stream.on('end', () => {
      if (stopped()) return;
      part.sha256 = hash.digest('hex');
      part.bytes = Buffer.concat(chunks);
      chunks.length = 0;
      const onFile = limits.onFile;
      if (onFile) {
        processing = processing.then(() => (stopped() || processingFailed ? undefined : onFile(part, index))).catch((err: unknown) => {
          processingFailed ??= err;
        });
      }
    });
  });

  const finished = new Promise<void>((resolve) => {
    parser.on('close', resolve);
    parser.on('error', () => {
      out.breach ??= { kind: 'malformed' };
      resolve();
    });
  });

  const chunks = boundedChunks(request, limits.maxBodyBytes, resetOnBrokenBody);
  let received = 0;
  try {
    while (!stopped()) {
      const next = await chunks.next();
      if (next.done) {
        if (next.value === 'too_large') out.breach ??= { kind: 'body', bytes: received };
        break;
      }
      received += next.value.byteLength;
      if (!parser.write(next.value)) await drained(parser);
    }
  } finally {
    await chunks.return('ok');
  }
  if (stopped()) {
    parser.destroy();
    await processing;
    for (const file of out.files) file.bytes = Buffer.alloc(0);
    return out;
  }
  parser.end();
  await finished;
  await processing;
  if (processingFailed) throw processingFailed;
  return out;
}

function drained(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      stream.off('error', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
    stream.on('error', done);
  });
}
