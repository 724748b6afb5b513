import type { ImageJob } from './respond-images.js';

/** One file part of an edit, as received. */
export interface ReceivedImagePart {
  /** The multipart field name (`image[]`, `image`, …). */
  field: string;
  filename: string | undefined;
  contentType: string;
  bytes: Uint8Array;
}

/**
 * What reading a request's body gave: a job to answer, or the error answer.
 * `fields` are the fields as received (JSON body, or multipart text parts
 * converted with `fromFormFields`), kept for `emulator.requests`.
 */
export type ParsedCall =
  | { ok: true; job: ImageJob; fields: Record<string, unknown>; images: ReceivedImagePart[] }
  | { ok: false; response: Response; fields: Record<string, unknown> | undefined; images: ReceivedImagePart[] };
