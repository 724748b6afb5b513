import { ValidationError } from '../core/errors.js';
import { GenerationRequestSchema, parseGenerationRequest } from '../spec/index.js';
import { badRequest, responseFormatUnsupported, validationErrorResponse } from './error-response.js';
import type { ParsedCall } from './parsed-call.js';

const GENERATION_FIELDS: readonly string[] = Object.keys(GenerationRequestSchema.shape);

/** Reads and validates the JSON body of `POST /v1/images/generations` with the spec's schema. */
export async function parseGenerationCall(request: Request): Promise<ParsedCall> {
  const text = await request.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {
      ok: false,
      response: badRequest('We could not parse the JSON body of your request. Send a JSON object with Content-Type: application/json.', null, 'invalid_json'),
      fields: undefined,
      images: [],
    };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, response: badRequest('The request body must be a JSON object.', null, 'invalid_json'), fields: undefined, images: [] };
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
