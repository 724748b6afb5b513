import type { z } from 'zod';
import { ValidationError } from '../core/errors.js';
import {
  ALLOWED,
  EditRequestSchema,
  GenerationRequestSchema,
  type EditRequest,
  type GenerationRequest,
} from './request-schemas.js';

/** `['image', 2]` → `image[2]`; `['size']` → `size`. */
export function paramOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/** Turns zod's issues into one ValidationError that names the field and what it accepts. */
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
  return new ValidationError(first.param, message, { ...(allowed ? { allowed } : {}), issues });
}

function parseWith<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw toValidationError(result.error);
  return result.data;
}

/** Validates a generation request and fills in the spec's defaults; throws ValidationError. */
export function parseGenerationRequest(input: unknown): GenerationRequest {
  return parseWith(GenerationRequestSchema, input);
}

/** Validates an edit request (images checked by content) and fills in defaults; throws ValidationError. */
export function parseEditRequest(input: unknown): EditRequest {
  return parseWith(EditRequestSchema, input);
}
