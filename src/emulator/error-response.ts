import type { ValidationError } from '../core/errors.js';

/** The service's error body (wire-format.md): `{"error": {"message", "type", "param", "code"}}`. */
export interface ServiceError {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const text = JSON.stringify(body);
  return new Response(text, {
    status,
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      ...headers,
    },
  });
}

export function errorResponse(status: number, error: ServiceError, headers: Record<string, string> = {}): Response {
  return jsonResponse(status, { error }, headers);
}

const invalid = (message: string, param: string | null, code: string | null): ServiceError => ({
  message,
  type: 'invalid_request_error',
  param,
  code,
});

export function notFound(method: string, path: string): Response {
  return errorResponse(404, invalid(`Invalid URL (${method} ${path})`, null, 'unknown_url'));
}

export function methodNotAllowed(method: string, path: string): Response {
  return errorResponse(405, invalid(`Method ${method} is not allowed on ${path}; use POST`, null, 'method_not_allowed'), { allow: 'POST' });
}

/** 401. The message never repeats the key that was sent. */
export function invalidApiKey(reason: 'missing' | 'invalid'): Response {
  const message =
    reason === 'missing'
      ? 'You did not provide an API key. Send it in the Authorization header as "Bearer <API_KEY>".'
      : 'Incorrect API key provided.';
  return errorResponse(401, invalid(message, null, 'invalid_api_key'));
}

export function badRequest(message: string, param: string | null, code: string | null): Response {
  return errorResponse(400, invalid(message, param, code));
}

export function payloadTooLarge(message: string, param: string | null, code = 'file_too_large'): Response {
  return errorResponse(413, invalid(message, param, code));
}

export function unsupportedMimetype(param: string, contentType: string): Response {
  return badRequest(
    `Invalid file ${param}: unsupported mimetype (${JSON.stringify(contentType || 'none')}). Supported file formats are image/png, image/jpeg and image/webp.`,
    param,
    'unsupported_file_mimetype',
  );
}

/**
 * A ValidationError from the spec's schemas as the service's 400. The code says
 * what kind of problem it is: a field the schema does not know, a field that is
 * missing, or a value that is not allowed.
 */
export function validationErrorResponse(err: ValidationError, knownFields: readonly string[], presentFields: ReadonlySet<string>): Response {
  const field = err.param.replace(/\[\d+\].*$/, '').split('.')[0] ?? err.param;
  let code: string;
  if (!knownFields.includes(field)) {
    code = 'unknown_parameter';
  } else if (!presentFields.has(field)) {
    code = 'missing_required_parameter';
  } else {
    code = 'invalid_value';
  }
  return badRequest(err.message, err.param, code);
}

/** Spec §1: images come back only as base64; `response_format` is refused whatever else the request holds. */
export function responseFormatUnsupported(): Response {
  return badRequest(
    'response_format is not supported for gpt-image-2: images are always returned as base64 (b64_json).',
    'response_format',
    'unknown_parameter',
  );
}

export function moderationBlocked(): Response {
  return errorResponse(400, {
    message: 'Your request was rejected by the safety system. Your prompt may contain text that is not allowed.',
    type: 'image_generation_user_error',
    param: null,
    code: 'moderation_blocked',
  });
}

export function insufficientQuota(): Response {
  return errorResponse(429, {
    message: 'You exceeded your current quota, please check your plan and billing details.',
    type: 'insufficient_quota',
    param: null,
    code: 'insufficient_quota',
  });
}

export function rateLimitExceeded(limit: number | undefined, retryAfterMs: number): Response {
  const per = limit === undefined ? '' : ` Limit ${limit} images per minute.`;
  return tooManyRequests(`Rate limit reached for images.${per}`, retryAfterMs);
}

/** 429 for a request beyond the requests the emulator answers at once (`maxRequestsInFlight`). */
export function tooManyRequestsInFlight(max: number, retryAfterMs: number): Response {
  return tooManyRequests(`Too many requests at once: at most ${max} are answered at a time.`, retryAfterMs);
}

/** The service's 429 (`rate_limit_exceeded`): what was reached, the wait in its words, and in both retry headers. */
function tooManyRequests(reached: string, retryAfterMs: number): Response {
  return errorResponse(
    429,
    { message: `${reached} Please try again in ${formatSeconds(retryAfterMs)}.`, type: 'requests', param: null, code: 'rate_limit_exceeded' },
    retryAfterHeaders(retryAfterMs),
  );
}

export function serverError(): Response {
  return errorResponse(500, {
    message: 'The server had an error while processing your request. Sorry about that!',
    type: 'server_error',
    param: null,
    code: 'server_error',
  });
}

export function serviceUnavailable(retryAfterMs: number): Response {
  return errorResponse(
    503,
    {
      message: 'The server is overloaded or not ready yet. Please try again later.',
      type: 'server_error',
      param: null,
      code: 'service_unavailable',
    },
    retryAfterHeaders(retryAfterMs),
  );
}

export const BAD_GATEWAY_HTML =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

/** What a proxy in front of the service answers when the service is down: HTML, not JSON. */
export function htmlBadGateway(): Response {
  return new Response(BAD_GATEWAY_HTML, {
    status: 502,
    headers: { 'content-type': 'text/html', 'content-length': String(Buffer.byteLength(BAD_GATEWAY_HTML)) },
  });
}

/** `retry-after` in whole seconds (rounded up) and `retry-after-ms` exactly. */
export function retryAfterHeaders(retryAfterMs: number): Record<string, string> {
  const ms = Math.max(0, Math.ceil(retryAfterMs));
  return { 'retry-after': String(Math.ceil(ms / 1000)), 'retry-after-ms': String(ms) };
}

/**
 * The wait in the service's own style, as its 429 message says it ("… Limit: 60 / min. Please try again in 1s."): the
 * emulated service's words, read by clients as the service's, not Pictor's, so not `describeDuration`'s.
 */
function formatSeconds(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  return s < 10 ? `${s.toFixed(3).replace(/\.?0+$/, '')}s` : `${Math.ceil(s)}s`;
}
