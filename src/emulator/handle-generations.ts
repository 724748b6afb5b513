import { ValidationError } from '../core/errors.js';
import { GenerationRequestSchema, LIMITS, parseGenerationRequest } from '../spec/index.js';
import { badRequest, payloadTooLarge, responseFormatUnsupported, validationErrorResponse } from './error-response.js';
import type { ParsedCall } from './parsed-call.js';
import { declaredLength, readBounded } from '../core/read-bounded.js';
import { resetOnBrokenBody } from './faults.js';

const GENERATION_FIELDS: readonly string[] = Object.keys(GenerationRequestSchema.shape);

/**
 * The largest generation body accepted: the longest prompt, every character
 * JSON-escaped (`\uXXXX`, 6 bytes), plus room for the other fields.
 */
export const MAX_GENERATION_BODY_BYTES = LIMITS.promptMaxChars * 6 + 64 * 1024;

const fail = (response: Response): ParsedCall => ({ ok: false, response, fields: undefined, images: [] });

/**
 * Reads and validates the JSON body of `POST /v1/images/generations` with the
 * spec's schema. The body must say it is JSON, and is read only up to
 * `MAX_GENERATION_BODY_BYTES` (refused before reading when its declared length is larger).
 */
export async function parseGenerationCall(request: Request): Promise<ParsedCall> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(contentType.trim())) {
    return fail(
      badRequest(
        `Unsupported content type: ${JSON.stringify(contentType || 'none')}. This endpoint only accepts application/json requests.`,
        null,
        'unsupported_content_type',
      ),
    );
  }
  const tooLarge = () =>
    fail(payloadTooLarge(`The request body is too large; a generation takes at most ${MAX_GENERATION_BODY_BYTES} bytes.`, null, 'request_too_large'));
  if ((declaredLength(request) ?? 0) > MAX_GENERATION_BODY_BYTES) return tooLarge();
  const raw = await readBounded(request, MAX_GENERATION_BODY_BYTES, resetOnBrokenBody);
  if (raw === 'too_large') return tooLarge();
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return fail(badRequest('We could not parse the JSON body of your request. Send a JSON object with Content-Type: application/json.', null, 'invalid_json'));
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return fail(badRequest('The request body must be a JSON object.', null, 'invalid_json'));
  }
  const fields = body as Record<string, unknown>;
  if ('response_format' in fields) return { ok: false, response: responseFormatUnsupported(), fields, images: [] };
  try {
    const parsed = parseGenerationRequest(fields);
    return { ok: true, job: { kind: 'generation', request: parsed, inputImageTokens: 0 }, fields, images: [] };
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return { ok: false, response: validationErrorResponse(err, GENERATION_FIELDS, new Set(Object.keys(fields))), fields, images: [] };
  }
}
