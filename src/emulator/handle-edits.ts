import sharp from 'sharp';
import { withImageWork } from '../core/image-work.js';
import { ValidationError } from '../core/errors.js';
import { EDIT_FILE_FIELD_ALIASES, EditImageSchema, EditRequestSchema, LIMITS, MIME_TYPES, fromFormFields, parseEditRequest } from '../spec/index.js';
import { badRequest, payloadTooLarge, responseFormatUnsupported, unsupportedMimetype, validationErrorResponse } from './error-response.js';
import type { ParsedCall, ReceivedImagePart } from './parsed-call.js';
import { declaredLength } from '../core/read-bounded.js';
import { readMultipart } from './read-multipart.js';
import { inputImageTokens } from './usage.js';

const EDIT_FIELDS: readonly string[] = Object.keys(EditRequestSchema.shape);
const FILE_FIELDS: readonly string[] = EDIT_FILE_FIELD_ALIASES;
const ACCEPTED_MIME_TYPES: readonly string[] = Object.values(MIME_TYPES);
/** Room for the text parts and multipart framing on top of the images. */
const FORM_OVERHEAD_BYTES = 1024 * 1024;
/** Longest side kept of an input image (the largest output is 1536 px wide or high); larger uploads are shrunk as they arrive. */
const MAX_INPUT_SIDE = 1536;
/** File parts read beyond the images (a `mask`, say) before further ones are skipped. */
const EXTRA_FILE_PARTS = 4;

/**
 * Reads `POST /v1/images/edits` (multipart): file parts under `image[]` (or
 * `image`), text parts converted with `fromFormFields`, then validated with the
 * spec's edit schema. The body is read as it arrives and refused the moment a
 * limit is passed (the whole body, one file against `maxImageBytes`, a file's
 * declared content type); a declared length above the limit is refused unread.
 * Then each image must decode.
 */
export async function parseEditCall(
  request: Request,
  options: { maxImageBytes: number; recordImageBytes: boolean },
  signal?: AbortSignal,
): Promise<ParsedCall> {
  const fail = (response: Response, fields?: Record<string, unknown>, images: ReceivedImagePart[] = []): ParsedCall => ({
    ok: false,
    response,
    fields,
    images,
  });

  const contentType = request.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\b/i.test(contentType)) {
    return fail(badRequest('Edits are sent as multipart/form-data, with the images as image[] file parts.', null, 'invalid_content_type'));
  }
  const maxBody = maxEditBodyBytes(options.maxImageBytes);
  const length = declaredLength(request);
  if (length !== undefined && length > maxBody) {
    return fail(payloadTooLarge(`The request is ${length} bytes; an edit takes at most ${maxBody} bytes.`, 'image', 'request_too_large'));
  }

  const measured: (number | undefined)[] = [];
  const kept: Uint8Array[] = [];
  const read = await readMultipart(request, contentType, {
    maxBodyBytes: maxBody,
    maxFileBytes: options.maxImageBytes,
    maxFieldBytes: FORM_OVERHEAD_BYTES,
    // One more than allowed, so that too many images get the schema's error.
    maxFiles: LIMITS.editImagesMax + 1 + EXTRA_FILE_PARTS,
    keepFile: (field) => FILE_FIELDS.includes(field),
    onFile: async (part, index) => {
      const original = part.bytes;
      if (options.recordImageBytes) kept[index] = new Uint8Array(original);
      try {
        const meta = await withImageWork(() => sharp(original).metadata(), signal);
        measured[index] = inputImageTokens(meta.width ?? 1024, meta.height ?? 1024);
      } catch {
        signal?.throwIfAborted(); // Its caller has gone: its image work left the line.
        return; // Not an image: kept as received, so that validation reports it as before.
      }
      // The schema checks each image's own bytes; one it would refuse is kept as received so that it says why.
      if (!EditImageSchema.safeParse({ data: original, filename: part.filename }).success) return;
      // Drawing needs at most an output's worth of pixels: keep that, not the upload.
      try {
        part.bytes = await withImageWork(() =>
          sharp(original).rotate().resize(MAX_INPUT_SIDE, MAX_INPUT_SIDE, { fit: 'outside', withoutEnlargement: true }).png({ compressionLevel: 1 }).toBuffer(),
          signal,
        );
      } catch {
        signal?.throwIfAborted();
        // Its header reads but its pixels do not decode (garbage image data): refused as one that is not an image.
        measured[index] = undefined;
      }
    },
    checkFile: ({ contentType: type, index }) => {
      const mime = type.split(';')[0]!.trim().toLowerCase();
      return ACCEPTED_MIME_TYPES.includes(mime) ? undefined : unsupportedMimetype(`image[${index}]`, type);
    },
  });
  const images: ReceivedImagePart[] = read.files.map((part, i) => ({
    field: part.field,
    filename: part.filename,
    contentType: part.contentType,
    size: part.size,
    sha256: part.sha256,
    ...(options.recordImageBytes ? { bytes: kept[i] ?? new Uint8Array(part.bytes) } : {}),
  }));
  const text: Record<string, string> = {};
  const imageEntries: unknown[] = [];
  for (const [field, value] of read.text) {
    if (FILE_FIELDS.includes(field)) imageEntries.push(value);
    else text[field] = value;
  }
  const fields = fromFormFields(text);
  if (read.refused) return fail(read.refused, fields, images);
  const breach = read.breach;
  if (breach?.kind === 'malformed') return fail(badRequest('The multipart body could not be read.', null, 'invalid_multipart'), fields, images);
  if (breach?.kind === 'body') {
    return fail(payloadTooLarge(`The request is larger than ${maxBody} bytes, the most an edit takes.`, 'image', 'request_too_large'), fields, images);
  }
  if (breach?.kind === 'file') {
    const param = `image[${breach.index}]`;
    return fail(payloadTooLarge(`${param} is larger than ${options.maxImageBytes} bytes; each image must be at most ${options.maxImageBytes} bytes.`, param), fields, images);
  }
  if (breach?.kind === 'field') {
    return fail(payloadTooLarge(`${breach.field} is longer than ${FORM_OVERHEAD_BYTES} bytes.`, breach.field, 'request_too_large'), fields, images);
  }
  if ('response_format' in fields) return fail(responseFormatUnsupported(), fields, images);
  for (const part of read.files) imageEntries.push({ data: part.bytes, ...(part.filename ? { filename: part.filename } : {}) });
  for (let i = 0; i < read.skippedFiles; i++) imageEntries.push({ data: new Uint8Array(0) });
  const otherFiles = Object.fromEntries(read.otherFiles.map((field) => [field, `file ${field}`]));

  const present = new Set(Object.keys(fields));
  if (imageEntries.length > 0) present.add('image');
  let parsed;
  try {
    parsed = parseEditRequest({ ...fields, ...otherFiles, image: imageEntries });
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return fail(validationErrorResponse(err, EDIT_FIELDS, present), fields, images);
  }

  let imageTokens = 0;
  for (const [i] of read.files.entries()) {
    const tokens = measured[i];
    if (tokens === undefined) return fail(badRequest(`image[${i}] could not be read as an image.`, `image[${i}]`, 'invalid_image_file'), fields, images);
    imageTokens += tokens;
  }

  return {
    ok: true,
    job: { kind: 'edit', request: parsed, inputs: read.files.map((p) => p.bytes), inputImageTokens: imageTokens },
    fields,
    images,
  };
}

/** The largest edit body accepted: every image at its limit, plus the text parts. */
export function maxEditBodyBytes(maxImageBytes: number): number {
  return maxImageBytes * LIMITS.editImagesMax + FORM_OVERHEAD_BYTES;
}
