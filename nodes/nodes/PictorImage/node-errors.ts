import { NodeApiError, NodeOperationError, type INode, type JsonObject } from 'n8n-workflow';
import { APIError, ValidationError, isPictorError, type PictorErrorCode } from 'pictor';
import { RedisUnavailableError, BudgetExceededError, errorCodeOf, LedgerBusyError, LedgerUnreadableError, OUTPUT_NOT_WRITTEN_CODE } from 'pictor/internal';
import { FIELD_PARAMETERS, type SpecField } from './node-properties.js';
import type { OutputItems } from './output-items.js';
import type { CredentialProblem } from './pictor-credentials.js';

export type NodeError = NodeOperationError | NodeApiError;

/** What to tell the user to do, by the core's error code. */
const HINTS: Partial<Record<PictorErrorCode, string>> = {
  authentication_failed: 'The service refused the API key. Check the API key and base URL of the Pictor API credential.',
  permission_denied: 'The key is valid but may not use this model or operation. Check the account on the service.',
  moderation_blocked: 'The prompt or an input image was refused by moderation. Change the prompt or the images; this is never retried.',
  quota_exhausted: 'The account is out of credit. Add credit on the service; this is never retried.',
  rate_limited:
    'The service still answered "rate limit exceeded" after every retry. Set Images per Minute to your account limit, or raise Max Retries.',
  server_error: 'The service failed repeatedly. Try again later.',
  connection_failed: 'Check the base URL of the Pictor API credential and that the service is reachable from n8n.',
  timeout:
    'The service took too long after the request had reached it, so it may already be billed and was not sent again. High quality images can take minutes: lower the quality, or check the service before running it again.',
  stream_broken: 'The answer broke off after the job had started; it may already be billed, so it was not sent again.',
  // The error's own message says the job may have been billed and was not sent again.
  bad_response: 'The service answered with something that is not the images asked for (wrong count, not an image of the requested format). Check the service before running it again.',
  aborted: 'The execution was cancelled.',
  not_found: 'The base URL of the Pictor API credential does not point at the image service.',
};

/**
 * What to tell the user of a failure the node sends again (an answer with an HTTP status), by how many times the
 * client sent it (`attempts`), the item's Max Retries, and why the client stopped before Max Retries ran out when it
 * did (`stoppedFor`): the wait before the next send was longer than the time left of the request, and that wait was
 * either the one the service asked for or, when it named none, the client's own backoff (the message says how long).
 */
function retriedHint(error: APIError, maxRetries: number | undefined): string | undefined {
  const { code, attempts, stoppedFor } = error;
  if (maxRetries === undefined || attempts === undefined) return HINTS[code];
  const times = attempts > 1 ? ` ${attempts} times in a row` : '';
  const stopped =
    stoppedFor === 'service_wait'
      ? `asked to wait longer than the time left of the request, so it was not sent again though Max Retries is ${maxRetries}`
      : stoppedFor === 'backoff'
        ? `named no wait; the wait before sending it again was longer than the time left of the request, so it was not sent again though Max Retries is ${maxRetries}`
        : undefined;
  if (code === 'server_error') {
    if (maxRetries === 0) return 'The service failed, and Max Retries is 0, so it was not sent again. Try again later, or raise Max Retries.';
    if (stopped) return `The service failed${times}, and ${stopped}. Try again later.`;
    return `The service failed ${attempts} times in a row (Max Retries is ${maxRetries}). Try again later.`;
  }
  if (code === 'rate_limited') {
    if (maxRetries === 0) {
      return 'The service answered "rate limit exceeded", and Max Retries is 0, so it was not sent again. Set Images per Minute to your account limit, or raise Max Retries.';
    }
    if (stopped) return `The service answered "rate limit exceeded"${times}, and ${stopped}. Set Images per Minute to your account limit.`;
  }
  return HINTS[code];
}

/**
 * An error event in a streamed answer (it has no HTTP status) is never retried,
 * so the hints above that speak of retries do not fit it.
 */
const STREAM_EVENT_HINTS: Partial<Record<PictorErrorCode, string>> = {
  server_error: 'The service reported a failure in the middle of its streamed answer; such a failure is not retried. Try again later.',
  rate_limited:
    'The service reported "rate limit exceeded" in the middle of its streamed answer; this is not retried. Set Images per Minute to your account limit.',
};

/** What to tell the user of an error event in a streamed answer: its own hint, else the code's. */
function streamEventHint(code: PictorErrorCode): string | undefined {
  return STREAM_EVENT_HINTS[code] ?? HINTS[code];
}

/** Names the node parameter behind a spec field or path (`output_format`, `image[2]`). */
export function parameterOf(param: string, inputBinaryFields: readonly string[] = []): { displayName: string; detail: string | undefined } {
  const field = param.replace(/\[\d+\].*$/, '').split('.')[0] as SpecField;
  const known = FIELD_PARAMETERS[field] as (typeof FIELD_PARAMETERS)[SpecField] | undefined;
  const index = /^\w+\[(\d+)\]/.exec(param)?.[1];
  const binaryField = field === 'image' && index !== undefined ? inputBinaryFields[Number(index)] : undefined;
  return {
    displayName: known?.displayName ?? param,
    detail: binaryField !== undefined ? `binary field "${binaryField}"` : undefined,
  };
}

/**
 * Turns anything one item's request threw into an n8n error carrying the item's
 * index: bad input names the parameter at fault; the service's answers keep
 * their status and code. `maxRetries` (the item's Max Retries, once it was sent) words the hint of a failure it retries.
 */
export function toNodeError(node: INode, error: unknown, itemIndex: number, inputBinaryFields: readonly string[] = [], maxRetries?: number): NodeError {
  if (error instanceof NodeApiError) return error;
  if (error instanceof NodeOperationError) {
    // The node's own checks of an item (and n8n's, e.g. a binary field it cannot read) are about the input: a failed
    // item is promised a stable code, so one without its own is bad input.
    if (codeOf(error) === undefined) error.context.code = 'validation_error';
    return error;
  }
  if (error instanceof ValidationError) {
    const { displayName, detail } = parameterOf(error.param, inputBinaryFields);
    const more = error.issues.length > 1 ? ` Also: ${error.issues.slice(1).map((i) => `${parameterOf(i.param).displayName}: ${i.message}`).join('; ')}.` : '';
    const nodeError = new NodeOperationError(node, `${displayName}: ${detail ? `${detail}: ` : ''}${error.issues[0]?.message ?? error.message}`, {
      itemIndex,
      description: `${error.allowed ? `${displayName} accepts ${error.allowed}.` : ''}${more}`.trim() || undefined,
    });
    Object.assign(nodeError.context, { parameter: error.param, code: error.code });
    return nodeError;
  }
  if (error instanceof APIError) {
    const response: JsonObject = {
      message: error.message,
      code: error.code,
      serviceCode: error.serviceCode ?? null,
      serviceType: error.serviceType ?? null,
      param: error.param ?? null,
      requestId: error.requestId ?? null,
    };
    const nodeError = new NodeApiError(node, response, {
      itemIndex,
      message: error.message,
      description: (error.status === undefined ? streamEventHint(error.code) : retriedHint(error, maxRetries)) ?? (error.param ? `The service rejected ${parameterOf(error.param, inputBinaryFields).displayName}.` : undefined),
      ...(error.status !== undefined ? { httpCode: String(error.status) } : {}),
    });
    // The field the service named (its `param`) is the item's `field`, as for bad input the node caught itself.
    Object.assign(nodeError.context, { code: error.code, requestId: error.requestId, ...(error.param ? { parameter: error.param } : {}) });
    return nodeError;
  }
  if (isRedisUnavailable(error)) return redisNodeError(node, error, itemIndex);
  if (error instanceof BudgetExceededError) {
    const nodeError = new NodeOperationError(node, error.message, {
      itemIndex,
      description:
        'Nothing was sent. The caps are the Account Daily/Monthly Cap of the Pictor API credential (and, through a shared Redis, the ledger the bots count in too).',
    });
    Object.assign(nodeError.context, { code: error.code, limitUsd: error.limitUsd, leftUsd: error.leftUsd, resetsAt: new Date(error.resetsAt).toISOString() });
    return nodeError;
  }
  if (error instanceof LedgerUnreadableError) {
    const nodeError = new NodeOperationError(node, error.message, {
      itemIndex,
      description: 'Nothing was sent: the node will not spend without knowing what was already spent. Set the Ledger Folder of the Pictor API credential to change where it is kept.',
    });
    Object.assign(nodeError.context, { code: error.code });
    return nodeError;
  }
  if (error instanceof LedgerBusyError) {
    const nodeError = new NodeOperationError(node, error.message, {
      itemIndex,
      // How long it waited is the message's (the lock's own error): written once, there.
      description:
        'Nothing was sent, so nothing was charged: another process held the spend ledger for the whole wait (the message says which, and how long). ' +
        "The item can be sent again as it is once that process lets go: run it again, or, with On Error set to Continue, route the items with code ledger_busy back to this node (n8n's Retry On Fail re-runs every item, paid ones included).",
    });
    Object.assign(nodeError.context, { code: error.code });
    return nodeError;
  }
  if (isPictorError(error)) {
    const nodeError = new NodeOperationError(node, error.message, { itemIndex, description: HINTS[error.code] });
    Object.assign(nodeError.context, { code: error.code });
    return nodeError;
  }
  // Any other error of the project keeps its own code (e.g. `quota_store_closed`); one that is not the project's is
  // `internal_error`, as in the CLI's --json lines and the chat bots: a failed item always has a stable code.
  const nodeError = new NodeOperationError(node, error instanceof Error ? error : String(error), { itemIndex });
  nodeError.context.code = errorCodeOf(error);
  return nodeError;
}

/**
 * A credential value that cannot work (an empty key, a cap of "$5", a bad Redis URL): bad input like a bad
 * parameter, so `validation_error`, with `field` the credential field at fault (`accountDailyUsd`, …).
 */
export function credentialNodeError(node: INode, problem: CredentialProblem, itemIndex: number): NodeOperationError {
  const nodeError = new NodeOperationError(node, problem.message, {
    itemIndex,
    description: 'Nothing was sent. Correct the field in the Pictor API credential.',
  });
  Object.assign(nodeError.context, { parameter: problem.field, code: 'validation_error' });
  return nodeError;
}

/** What became of a request's images in n8n's binary data store: how many it made, how many n8n refused, and why. */
export type NotStored = Pick<OutputItems, 'made' | 'notStored' | 'storeError'>;

function notStoredSentence({ made, notStored, storeError }: NotStored): string {
  const why = storeError instanceof Error ? storeError.message : storeError === undefined ? undefined : String(storeError);
  const which = notStored === made ? (made === 1 ? 'the image' : `all ${made} images`) : `${notStored} of the ${made} images`;
  return `n8n could not store ${which} the service made for this item${why ? ` (${why})` : ''}; the service made ${notStored === 1 ? 'it, so it is' : 'them, so they are'} paid for`;
}

/**
 * n8n's binary data store refused images the service made (a full disk, a binary data mode error): they are paid for,
 * so the item fails with `output_not_written` (the CLI's code for images it could not write) and says how many, while
 * every image n8n stored is output before it (On Error → Continue). Without On Error n8n outputs nothing of the node.
 */
export function notStoredNodeError(node: INode, what: NotStored, itemIndex: number, continueOnFail: boolean): NodeOperationError {
  const nodeError = new NodeOperationError(node, notStoredSentence(what), {
    itemIndex,
    description: continueOnFail
      ? "The images n8n stored are output before this item. Free space for n8n's binary data (or check its binary data mode); running the item again is charged again."
      : "n8n outputs nothing from a node that failed, so the images it stored are lost to the workflow too, though paid. Set On Error to Continue to get them; free space for n8n's binary data (or check its binary data mode).",
  });
  Object.assign(nodeError.context, { code: OUTPUT_NOT_WRITTEN_CODE, imagesNotStored: what.notStored });
  return nodeError;
}

/**
 * The error of a request that failed after some images came, when n8n could not store some of those either: it keeps
 * the service's code (the request's own failure), and says how many paid images n8n could not store.
 */
export function withNotStored(error: NodeError, what: NotStored): NodeError {
  if (what.notStored === 0) return error;
  const sentence = `${notStoredSentence(what)}.`;
  error.description = error.description ? `${error.description} ${sentence}` : sentence;
  error.context.imagesNotStored = what.notStored;
  return error;
}

function isRedisUnavailable(error: unknown): error is RedisUnavailableError {
  return error instanceof RedisUnavailableError || (error instanceof Error && error.name === 'RedisUnavailableError');
}

/**
 * The credential's Redis could not be reached when the shared limiter was
 * made. The core's `reason` and `url` already hide the password; its message's
 * advice names environment variables, so the node gives its own around the reason.
 */
function redisNodeError(node: INode, error: RedisUnavailableError, itemIndex: number): NodeOperationError {
  const where = error.url ?? 'the Redis URL';
  const reason = typeof error.reason === 'string' && error.reason !== '' ? error.reason : undefined;
  const nodeError = new NodeOperationError(node, `cannot reach Redis at ${where} — check the Redis URL of the Pictor API credential`, {
    itemIndex,
    description:
      `${reason ? `Cause: ${reason}. ` : ''}The node shares the account's rate limit through this Redis with other n8n processes and Pictor bots. ` +
      'Start Redis, correct the Redis URL (host, port, password), or empty it to limit this n8n process on its own. Nothing was sent to the image service; the next execution connects again.',
  });
  Object.assign(nodeError.context, { code: error.code });
  return nodeError;
}


/** The core's code for an error, when it has one (`validation_error`, `rate_limited`, …). */
export function codeOf(error: NodeError): string | undefined {
  const code = error.context.code;
  return typeof code === 'string' ? code : undefined;
}
