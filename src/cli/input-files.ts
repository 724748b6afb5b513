import { open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { ValidationError } from '../core/errors.js';
import { describeFileError } from '../core/system-errors.js';
import { LIMITS } from '../spec/constants.js';

/**
 * Reads one `--image` file, bounded: it must be a regular file (not a
 * directory, FIFO or device such as /dev/zero), at most `maxBytes` by its size,
 * and never more than `maxBytes + 1` bytes are read even if it grows meanwhile.
 * `path` is absolute; errors name it.
 */
export async function readImageFile(path: string, maxBytes: number = LIMITS.editImageMaxBytes): Promise<{ data: Uint8Array; filename: string }> {
  const cannot = (why: string) => new ValidationError('image', `--image: cannot read ${path} (${why})`);
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw cannot(describeFileError(error));
  });
  if (!info.isFile()) throw cannot(info.isDirectory() ? 'a directory, not a file' : 'not a regular file');
  if (info.size > maxBytes) throw tooLarge(path, maxBytes);
  const handle = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    throw cannot(describeFileError(error));
  });
  try {
    // Read until the end, but stop one byte past the limit: a file that grew since `stat` is still bounded.
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, maxBytes + 1 - length));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      length += bytesRead;
      if (length > maxBytes) throw tooLarge(path, maxBytes);
    }
    return { data: new Uint8Array(Buffer.concat(chunks, length)), filename: basename(path) };
  } finally {
    await handle.close();
  }
}

function tooLarge(path: string, maxBytes: number): ValidationError {
  return new ValidationError('image', `--image: ${path} is larger than ${Math.round(maxBytes / 1024 / 1024)} MB, the most one input image may be`);
}
