import type { ImageJob } from './respond-images.js';

/** One file part of an edit, as received: what it was, not (unless asked) its bytes. */
export interface ReceivedImagePart {
  /** The multipart field name (`image[]`, `image`, …). */
  field: string;
  filename: string | undefined;
  contentType: string;
  /** Bytes received for this part (when it was refused as too large: as far as it was read). */
  size: number;
  /** SHA-256 of the bytes, hex ('' when the part was not read to its end). */
  sha256: string;
  /** The bytes themselves, only with the `recordImageBytes` setting (the log would hold every edit's images otherwise). */
  bytes?: Uint8Array;
}

/**
 * What reading a request's body gave: a job to answer, or the error answer.
 * `fields` are the fields as received (JSON body, or multipart text parts
 * converted with `fromFormFields`), kept for `emulator.requests`.
 */
export type ParsedCall =
  | { ok: true; job: ImageJob; fields: Record<string, unknown>; images: ReceivedImagePart[] }
  | { ok: false; response: Response; fields: Record<string, unknown> | undefined; images: ReceivedImagePart[] };
