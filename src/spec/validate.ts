import type { z } from 'zod';
import { ValidationError } from '../core/errors.js';
import {
  ALLOWED,
  EditImagesSchema,
  EditRequestSchema,
  GenerationRequestSchema,
  type EditRequest,
  type GenerationRequest,
  type ImageRequest,
} from './request-schemas.js';
import { ruleOf } from './validation-rules.js';

/** `['image', 2]` → `image[2]`; `['size']` → `size`. */
export function paramOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/** Turns zod's issues into one ValidationError that names the field, what it accepts and the rule it broke. */
export function toValidationError(error: z.ZodError): ValidationError {
  const issues = error.issues.map((issue) => {
    let param = paramOf(issue.path);
    if (issue.code === 'unrecognized_keys') param = issue.keys[0] ?? param;
    return { param: param || 'request', message: issue.message };
  });
  const first = issues[0] ?? { param: 'request', message: 'the request is invalid' };
  const field = first.param.replace(/\[\d+\].*$/, '').split('.')[0] ?? first.param;
  const allowed = ALLOWED[field];
  const message = issues.length > 1 ? `${first.message} (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : first.message;
  const rule = error.issues[0] === undefined ? undefined : ruleOf(error.issues[0], field);
  return new ValidationError(first.param, message, { ...(allowed ? { allowed } : {}), ...(rule ? { rule } : {}), issues });
}

function parseWith<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw toValidationError(result.error);
  return result.data;
}

/**
 * The requests these parsers made, frozen: the client sends one of them as it
 * is instead of parsing it again (a request is parsed once on its way to the
 * service). A copy or a changed request is not among them, and is parsed.
 */
const parsed = new WeakSet<object>();

function markParsed<T extends ImageRequest>(request: T): T {
  if ('image' in request) Object.freeze(request.image);
  parsed.add(Object.freeze(request));
  return request;
}

/** Whether `value` is a request one of the parsers below made (it is then valid as it is). */
export function isParsedRequest(value: unknown): value is ImageRequest {
  return typeof value === 'object' && value !== null && parsed.has(value);
}

/** Validates a generation request and fills in the spec's defaults; throws ValidationError. */
export function parseGenerationRequest(input: unknown): GenerationRequest {
  return markParsed(parseWith(GenerationRequestSchema, input));
}

/** Validates an edit request (images checked by content) and fills in defaults; throws ValidationError. */
export function parseEditRequest(input: unknown): EditRequest {
  return markParsed(parseWith(EditRequestSchema, input));
}

/**
 * An edit of `fields` — a generation request already parsed, whose fields an
 * edit shares — with `images`, which alone are checked here (by content):
 * the fields are not parsed again. Throws ValidationError naming `image[n]`.
 */
export function editRequestOf(fields: GenerationRequest, images: unknown): EditRequest {
  if (!isParsedRequest(fields) || 'image' in fields) return parseEditRequest({ ...fields, image: images });
  const { image } = parseWith(EditImagesSchema, { image: images });
  return markParsed({ ...fields, image });
}
