import { setMaxListeners } from 'node:events';
import { type IDataObject, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';
import {
  PictorClient,
  type LoggerLike,
  type ImageEventStream,
  imagesOfFailure,
  resultFromCompleted,
  type ImageJobResult,
  type RequestWatch,
  isCompletedEvent,
  parseEditRequest,
  parseGenerationRequest,
  type CompletedEvent,
  type EditRequest,
  type GenerationRequest,
} from 'pictor';
import { SpendGuard, chargedOf, ledgerKindOf, waitAtMost, type JobSettlement, type RedisUnavailableError, type SpendWatch } from 'pictor/internal';
import { readInputImages } from './input-images.js';
import { readItemParameters, type ItemParameters } from './item-parameters.js';
import { limiterFor } from './limiter-registry.js';
import { codeOf, credentialNodeError, notStoredNodeError, toNodeError, withNotStored, type NodeError } from './node-errors.js';
import { answerForAgent } from './agent-answer.js';
import { toOutputItems } from './output-items.js';
import { CREDENTIAL_NAME, credentialProblem, credentialsOf, ledgerOf, type CredentialProblem, type PictorCredentials } from './pictor-credentials.js';
import { jobLedgerFor, needsLedger, type LedgerKey } from './spend-registry.js';

/** One item, checked and ready to send. */
interface PreparedItem {
  itemIndex: number;
  params: ItemParameters;
  request: GenerationRequest | EditRequest;
}

type Outcome = { itemIndex: number; items: INodeExecutionData[] } | { itemIndex: number; error: NodeError; items?: INodeExecutionData[] };

/** A request that failed after some of its images had arrived: they were made and are charged, so they are output too. */
class FailedAfterImages {
  constructor(
    readonly error: unknown,
    readonly arrived: ImageJobResult,
  ) {}
}

/**
 * The node's `execute()`: reads and validates every item first (so bad input
 * fails before any money is spent), then sends every request through the
 * process-wide limiter for its account, and returns the items in input order.
 */
export async function runPictorImage(ctx: IExecuteFunctions): Promise<INodeExecutionData[][]> {
  const inputs = ctx.getInputData();
  const node = ctx.getNode();
  const continueOnFail = ctx.continueOnFail();
  const outcomes: Outcome[] = [];
  const prepared: PreparedItem[] = [];

  for (let itemIndex = 0; itemIndex < inputs.length; itemIndex++) {
    let params: ItemParameters | undefined;
    try {
      params = readItemParameters(ctx, itemIndex);
      prepared.push({ itemIndex, params, request: await validate(ctx, itemIndex, params) });
    } catch (error) {
      const nodeError = toNodeError(node, error, itemIndex, params?.inputBinaryFields);
      if (!continueOnFail) throw nodeError;
      outcomes.push({ itemIndex, error: nodeError });
    }
  }

  if (prepared.length > 0) {
    const credentials = credentialsOf(await ctx.getCredentials<PictorCredentials>(CREDENTIAL_NAME));
    const problem = credentialProblem(credentials);
    const key = problem ? undefined : ledgerOf(credentials);
    // Asked once, before any item is reserved (items are reserved in item order): a Pictor emulator (it says so, at a
    // loopback address or with its own key) has its jobs in the emulator's ledger, never the account's.
    const ledger = key && needsLedger(key) ? { ...key, ledger: await ledgerKindOf({ baseURL: credentials.baseUrl, apiKey: credentials.apiKey }) } : key;
    const stopAll = new AbortController();
    // Every request of this execution listens to it: no leak warning for 30 items.
    setMaxListeners(0, stopAll.signal);
    const cancel = ctx.getExecutionCancelSignal();
    const onCancel = () => stopAll.abort(cancel?.reason);
    if (cancel?.aborted) onCancel();
    else cancel?.addEventListener('abort', onCancel, { once: true });
    let firstFailure: NodeError | undefined;
    // Without On Error, the first failure fails the node: the items not yet sent are stopped, while the ones whose
    // request is at the service finish (they are paid; the ledger counts them) before the node fails.
    const unsent = new Set<AbortController>();

    try {
      const settled = await Promise.all(
        prepared.map(async (job): Promise<Outcome> => {
          const own = new AbortController();
          const stopOwn = () => own.abort(stopAll.signal.reason);
          if (stopAll.signal.aborted) stopOwn();
          else stopAll.signal.addEventListener('abort', stopOwn, { once: true });
          unsent.add(own);
          const sending: Sending = {
            signal: own.signal,
            // Its turn came (again on a retry): a failure elsewhere stops it unsent, before the ledger marks it sent.
            beforeSend: async () => {
              if (firstFailure) own.abort(firstFailure);
              own.signal.throwIfAborted();
            },
            // The ledger has marked it sent (items wait their turn there): a failure elsewhere in that wait still stops
            // it, by aborting it before any byte leaves (the client then sends nothing and the ledger releases it).
            // From here on it is at the service and finishes.
            leaving: () => {
              if (firstFailure) own.abort(firstFailure);
              unsent.delete(own);
            },
            // Waiting to be sent again: nothing of it is at the service, so a failure elsewhere may stop it.
            onRetry: () => {
              unsent.add(own);
            },
          };
          const shape = {
            itemIndex: job.itemIndex,
            operation: job.params.operation,
            prompt: job.request.prompt,
            binaryPropertyName: job.params.binaryPropertyName,
            allImagesOnOneItem: job.params.allImagesOnOneItem,
          };
          try {
            if (problem) throw credentialNodeError(node, problem, job.itemIndex);
            const result = await send(ctx, credentials, ledger!, job, sending);
            if (result instanceof FailedAfterImages) {
              // The images that came are output before the error's item (On Error → Continue); they are charged.
              // Without On Error it fails the node (below, at once); with it, its item waits for what was charged.
              if (!continueOnFail) throw result.error;
              // Those n8n could not store are counted on the error's item, which keeps the request's own code.
              const output = await toOutputItems(ctx, result.arrived, shape);
              const nodeError = toNodeError(node, result.error, job.itemIndex, job.params.inputBinaryFields, job.params.maxRetries);
              withNotStored(nodeError, output);
              return { itemIndex: job.itemIndex, error: await withCharged(nodeError, sending), items: answerForAgent(ctx, output.items) };
            }
            const output = await toOutputItems(ctx, result, shape);
            if (output.notStored === 0) return { itemIndex: job.itemIndex, items: answerForAgent(ctx, output.items) };
            // Paid images n8n could not store: the others are output, then an item saying how many (or, without On Error, the node fails saying so).
            const notStored = notStoredNodeError(node, output, job.itemIndex, continueOnFail);
            if (!continueOnFail) throw notStored;
            return { itemIndex: job.itemIndex, error: await withCharged(notStored, sending), items: answerForAgent(ctx, output.items) };
          } catch (error) {
            const missing = missingDatabaseOf(error);
            const nodeError = missing ? credentialNodeError(node, missing, job.itemIndex) : toNodeError(node, error, job.itemIndex, job.params.inputBinaryFields, job.params.maxRetries);
            if (!continueOnFail && !firstFailure) {
              // One failure fails the node: stop the requests still queued, never one already at the service — at once,
              // and without waiting for what the ledger charged this one: only an error's item (On Error) says `charged`.
              firstFailure = nodeError;
              for (const waiting of unsent) waiting.abort(nodeError);
            }
            return { itemIndex: job.itemIndex, error: continueOnFail ? await withCharged(nodeError, sending) : nodeError };
          } finally {
            unsent.delete(own);
            stopAll.signal.removeEventListener('abort', stopOwn);
          }
        }),
      );
      if (firstFailure) throw withPaid(firstFailure, settled.filter((outcome) => !('error' in outcome)).length);
      outcomes.push(...settled);
    } finally {
      cancel?.removeEventListener('abort', onCancel);
    }
  }

  outcomes.sort((a, b) => a.itemIndex - b.itemIndex);
  const { onError } = node;
  return [outcomes.flatMap((outcome) => ('error' in outcome ? [...(outcome.items ?? []), failedItem(outcome.error, outcome.itemIndex, onError)] : outcome.items))];
}

async function validate(ctx: IExecuteFunctions, itemIndex: number, params: ItemParameters): Promise<GenerationRequest | EditRequest> {
  if (params.operation === 'edit') {
    const image = await readInputImages(ctx, itemIndex, params.inputBinaryFields);
    return parseEditRequest({ ...params.fields, stream: params.stream, image });
  }
  return parseGenerationRequest({ ...params.fields, stream: params.stream });
}

/**
 * A Redis URL naming a database its server does not have: the credential's value is wrong (Redis itself answered), so
 * the item fails like any bad credential field, `validation_error` naming `redisUrl`; undefined for any other error.
 */
function missingDatabaseOf(error: unknown): CredentialProblem | undefined {
  if (!(error instanceof Error) || error.name !== 'RedisUnavailableError') return undefined;
  const { database, reason } = error as RedisUnavailableError;
  if (typeof database !== 'number') return undefined;
  const why = /\(([^()]*)\)/.exec(reason)?.[1];
  return {
    field: 'redisUrl',
    message: `Pictor API credential: the Redis URL names database ${database}, but that Redis server has fewer databases${why ? ` (${why})` : ''}; use a database number below its "databases" setting (e.g. /0), or leave the Redis URL empty to limit this n8n process on its own`,
  };
}

/**
 * How one item's request is sent: its own stop signal, and what it is told before each send (when its turn comes, and
 * after the spend guard has marked it sent: the last moment before the body leaves) and before a retry.
 */
interface Sending {
  signal: AbortSignal;
  beforeSend: () => Promise<void>;
  leaving: () => void;
  onRetry: () => void;
  /** The spend guard's watch of its job, once the ledger reserved it (the item has a ledger): its `settled` says how the ledger ended it. */
  watch?: SpendWatch | undefined;
}

/**
 * How long a failed item waits for the ledger to say what its job was charged (`charged`): the node's own promise,
 * "within 5 seconds" in nodes/README.md (the `charged` field of an error's item). The result is handed over before the
 * settle; only an error's item (On Error) waits, and past this says `charged: null` (not taken yet; the ledger keeps trying).
 */
const CHARGED_WAIT_MS = 5_000;

/**
 * How the ledger ended a failed item's job, waited for at most CHARGED_WAIT_MS: its settlement, or undefined when it
 * has not answered by then (`chargedOf` says null for that). Asked once the client has handed over the failure: it has
 * ended the watch by then. Only for a job the ledger reserved (`sending.watch`).
 */
async function endedOf(settled: Promise<JobSettlement>): Promise<JobSettlement | undefined> {
  let ended: JobSettlement | undefined;
  await waitAtMost(settled.then((settlement) => (ended = settlement)), CHARGED_WAIT_MS);
  return ended;
}

/** The request's watch (the spend guard's, or none), told last of its `beforeSend` what `leaving` is told. */
function leavingLast(watch: RequestWatch | undefined, leaving: () => void): RequestWatch {
  const before = watch?.beforeSend?.bind(watch);
  return {
    beforeSend: async () => {
      await before?.();
      leaving();
    },
    onRetry: watch?.onRetry?.bind(watch),
    onImage: watch?.onImage?.bind(watch),
    end: watch?.end?.bind(watch),
  };
}

/**
 * A failed item's error with what the ledger charged its job (`charged`), as the CLI's `--json` failure line says it: the
 * images that came plus the estimate of each that did not when the service may have made them, 0 when nothing can have
 * been billed, null when the ledger has not taken the settle yet or not answered within CHARGED_WAIT_MS. Left out when
 * the job never reached the ledger.
 */
async function withCharged(error: NodeError, sending: Sending): Promise<NodeError> {
  const settled = sending.watch?.settled;
  if (settled) error.context.charged = chargedOf(await endedOf(settled));
  return error;
}

/**
 * The first failure of a node without On Error, saying what became of the other items that got their images (before
 * it, or after it, having been at the service already): they are paid, but n8n outputs nothing from a node that failed.
 */
function withPaid(error: NodeError, succeeded: number): NodeError {
  if (succeeded === 0) return error;
  const one = succeeded === 1;
  const images = `${succeeded} other item${one ? '' : 's'} got ${one ? 'its' : 'their'} images from the service: ${one ? 'it is' : 'they are'} paid (counted in the ledger when the credential has one), but n8n outputs nothing from a node that failed. Set On Error to Continue to get the images of the items that succeed.`;
  error.description = error.description ? `${error.description} ${images}` : images;
  return error;
}

async function send(
  ctx: IExecuteFunctions,
  credentials: PictorCredentials,
  ledger: LedgerKey,
  job: PreparedItem,
  sending: Sending,
): Promise<ImageJobResult | FailedAfterImages> {
  const { params, request } = job;
  const logger = loggerOf(ctx);
  const { redis } = ledger;
  // Shared through the credential's Redis when it has one; RedisUnavailableError becomes the item's error.
  const limiter = await limiterFor(
    { baseURL: credentials.baseUrl, apiKey: credentials.apiKey, imagesPerMinute: params.imagesPerMinute, maxConcurrent: params.maxConcurrent, redis, ledger: ledger.ledger },
    { logger },
  );
  const common = { apiKey: credentials.apiKey, baseURL: credentials.baseUrl, limiter, maxRetries: params.maxRetries, logger };
  // Through the account's spend guard (the same ledger as the CLI and the bots): reserved at its highest price before it
  // is sent, refused with BudgetExceededError (nothing sent) over a cap, settled at its real cost. The guard is the
  // item's (it tells this item how its job ended); the job ledger under it is the process's one for this store, so a
  // settle an earlier item's store did not take is waited for, or tried again, before this item is reserved (at most
  // 1 s in all: past it, this item is decided on the reservations still held).
  const jobs = needsLedger(ledger) ? await jobLedgerFor(ledger, { logger }) : undefined;
  const guard = jobs
    ? new SpendGuard({
        store: jobs.store,
        ledger: jobs,
        limits: ledger.limits,
        userKey: `n8n:${workflowIdOf(ctx)}`,
        scopeKey: 'n8n',
      })
    : undefined;
  const client = new PictorClient({ ...common, onRequest: async (hooked) => {
      const watch = await guard?.onRequest(hooked);
      // Its `settled` is how the ledger ended the job (what a failed item was charged), as the CLI learns it.
      sending.watch = watch;
      return leavingLast(watch, sending.leaving);
    },
  });
  const options = { signal: sending.signal, beforeSend: sending.beforeSend, onRetry: sending.onRetry };
  const meta = { operation: 'image' in request ? ('edit' as const) : ('generate' as const), size: request.size, quality: request.quality };
  const completed: CompletedEvent[] = [];
  let stream: ImageEventStream | undefined;
  const attempt = async (): Promise<ImageJobResult> => {
    if (!request.stream) return 'image' in request ? client.edit(request, options) : client.generate(request, options);
    stream = 'image' in request ? client.editStream(request, options) : client.generateStream(request, options);
    for await (const event of stream) if (isCompletedEvent(event)) completed.push(event);
    return resultFromCompleted(completed, meta, stream.requestId);
  };
  // A failure with images that arrived before it keeps them (they are delivered and charged); without any, it is the item's error.
  return attempt().catch((error: unknown) => {
    const arrived = request.stream ? completed : imagesOfFailure(error);
    if (arrived.length === 0) return Promise.reject(error);
    return new FailedAfterImages(error, resultFromCompleted(arrived, meta, stream?.requestId ?? (error as { requestId?: string }).requestId));
  });
}

/**
 * The item a failed request leaves when the node's On Error setting continues.
 *
 * n8n 2.8 (WorkflowExecute) replaces the JSON of every output item that carries
 * an `error` property with `{ error: message }`, which would drop `code`,
 * `description`, `field` and `itemIndex`. So:
 * - *Continue* (regular output): the item has no `error` property, only the
 *   fields in its JSON, and goes on to the next node as it is.
 * - *Continue (using error output)*: n8n picks the items for the error output
 *   by their `error` property, then passes on copies made with object spread
 *   (`{ ...item, json: { ...inputItem.json, ...item.json } }`). The property is
 *   set non-enumerable: n8n still finds it, the copy leaves it behind, and the
 *   JSON (the input item's fields plus these) reaches the error output intact.
 * The real-n8n end-to-end test (test/nodes/e2e) checks both modes.
 */
export function failedItem(error: NodeError, itemIndex: number, onError: string | undefined): INodeExecutionData {
  const json: IDataObject = { error: error.message };
  const code = codeOf(error);
  if (code) json.code = code;
  if (error.description) json.description = error.description;
  if (typeof error.context.parameter === 'string') json.field = error.context.parameter;
  // A budget refusal (its code names the cap) says the cap, what is left and when it resets, for an IF node to route on.
  for (const key of ['limitUsd', 'leftUsd', 'resetsAt'] as const) {
    const value = error.context[key];
    if (typeof value === 'string' || typeof value === 'number') json[key] = value;
  }
  // What the ledger charged the job: the images output before this item cost less when the job was charged for more.
  // How many images of the request, made and paid for, n8n's binary data store refused (output_not_written, or the
  // request's own code when it failed too).
  const { imagesNotStored } = error.context;
  if (typeof imagesNotStored === 'number') json.imagesNotStored = imagesNotStored;
  const { charged } = error.context;
  if (typeof charged === 'number' || charged === null) json.charged = charged;
  json.itemIndex = itemIndex;
  const item: INodeExecutionData = { json, pairedItem: { item: itemIndex } };
  if (onError === 'continueErrorOutput') Object.defineProperty(item, 'error', { value: error, enumerable: false, configurable: true, writable: true });
  return item;
}

/** The workflow's id, under which the ledger counts what it spent (`n8n:<id>`). */
function workflowIdOf(ctx: IExecuteFunctions): string {
  const id = ctx.getWorkflow().id;
  return typeof id === 'string' && id !== '' ? id : 'unsaved';
}

/** n8n's logger in the call shape the core client uses; the client never logs secrets. */
function loggerOf(ctx: IExecuteFunctions): LoggerLike {
  const { logger } = ctx;
  return {
    debug: (obj, msg) => logger.debug(msg ?? 'pictor', obj as IDataObject),
    info: (obj, msg) => logger.info(msg ?? 'pictor', obj as IDataObject),
    warn: (obj, msg) => logger.warn(msg ?? 'pictor', obj as IDataObject),
    error: (obj, msg) => logger.error(msg ?? 'pictor', obj as IDataObject),
  };
}
