import sharp from 'sharp';
import { ValidationError } from '../core/errors.js';
import { EDIT_FILE_FIELD_ALIASES, EditRequestSchema, LIMITS, MIME_TYPES, fromFormFields, parseEditRequest } from '../spec/index.js';
import { badRequest, payloadTooLarge, responseFormatUnsupported, unsupportedMimetype, validationErrorResponse } from './error-response.js';
import type { ParsedCall, ReceivedImagePart } from './parsed-call.js';
import { inputImageTokens } from './usage.js';

const EDIT_FIELDS: readonly string[] = Object.keys(EditRequestSchema.shape);
const FILE_FIELDS: readonly string[] = EDIT_FILE_FIELD_ALIASES;
const ACCEPTED_MIME_TYPES: readonly string[] = Object.values(MIME_TYPES);
/** Room for the text parts and multipart framing on top of the images. */
const FORM_OVERHEAD_BYTES = 1024 * 1024;

/**
 * Reads `POST /v1/images/edits` (multipart): file parts under `image[]` (or
 * `image`), text parts converted with `fromFormFields`, then validated with the
 * spec's edit schema. Checks on top of the schema: each file part's declared
 * content type, its size against `maxImageBytes`, and that it decodes.
 */
export async function parseEditCall(request: Request, options: { maxImageBytes: number }): Promise<ParsedCall> {
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
  const declaredLength = Number(request.headers.get('content-length') ?? Number.NaN);
  const maxBody = maxEditBodyBytes(options.maxImageBytes);
  if (Number.isFinite(declaredLength) && declaredLength > maxBody) {
    return fail(payloadTooLarge(`The request is ${declaredLength} bytes; an edit takes at most ${maxBody} bytes.`, 'image'));
  }

  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    return fail(badRequest('The multipart body could not be read.', null, 'invalid_multipart'));
  }

  const text: Record<string, string> = {};
  const images: ReceivedImagePart[] = [];
  const imageEntries: unknown[] = [];
  const otherFiles: Record<string, string> = {};
  for (const [field, value] of form) {
    if (typeof value === 'string') {
      if (FILE_FIELDS.includes(field)) imageEntries.push(value);
      else text[field] = value;
      continue;
    }
    const bytes = new Uint8Array(await value.arrayBuffer());
    if (FILE_FIELDS.includes(field)) {
      const part: ReceivedImagePart = { field, filename: value.name || undefined, contentType: value.type, bytes };
      images.push(part);
      imageEntries.push({ data: bytes, ...(part.filename ? { filename: part.filename } : {}) });
    } else {
      otherFiles[field] = `file ${value.name}`;
    }
  }
  const fields = fromFormFields(text);
  if ('response_format' in fields) return fail(responseFormatUnsupported(), fields, images);

  for (const [i, part] of images.entries()) {
    const param = `image[${i}]`;
    const mime = part.contentType.split(';')[0]!.trim().toLowerCase();
    if (!ACCEPTED_MIME_TYPES.includes(mime)) return fail(unsupportedMimetype(param, part.contentType), fields, images);
    if (part.bytes.byteLength > options.maxImageBytes) {
      return fail(
        payloadTooLarge(`${param} is ${part.bytes.byteLength} bytes; each image must be at most ${options.maxImageBytes} bytes.`, param),
        fields,
        images,
      );
    }
  }

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
  for (const [i, part] of images.entries()) {
    try {
      const meta = await sharp(part.bytes).metadata();
      imageTokens += inputImageTokens(meta.width ?? 1024, meta.height ?? 1024);
    } catch {
      return fail(badRequest(`image[${i}] could not be read as an image.`, `image[${i}]`, 'invalid_image_file'), fields, images);
    }
  }

  return {
    ok: true,
    job: { kind: 'edit', request: parsed, inputs: images.map((p) => p.bytes), inputImageTokens: imageTokens },
    fields,
    images,
  };
}

/** The largest edit body accepted: every image at its limit, plus the text parts. */
export function maxEditBodyBytes(maxImageBytes: number): number {
  return maxImageBytes * LIMITS.editImagesMax + FORM_OVERHEAD_BYTES;
}
