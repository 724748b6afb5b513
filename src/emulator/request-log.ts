import type { FaultName, Route } from './faults.js';
import type { ReceivedImagePart } from './parsed-call.js';

/** One request the emulator received, and how it answered. */
export interface ReceivedRequest {
  /** The `x-request-id` it was answered with. */
  id: string;
  /** When it arrived (ms since the epoch). */
  receivedAt: number;
  method: string;
  path: string;
  /** The route it matched, if any. */
  route: Route | undefined;
  /** Whether its API key was accepted (false when auth was not reached, e.g. unknown route). */
  authorized: boolean;
  /** The fields as received: the JSON body, or the multipart text parts converted with `fromFormFields`. */
  fields: Record<string, unknown> | undefined;
  /** The validated fields with the spec's defaults filled in (undefined when invalid). */
  parsed: Record<string, string | number | boolean> | undefined;
  /** For an edit, the file parts as received. */
  images: ReceivedImagePart[];
  stream: boolean;
  /** The injected fault this request got, if any. */
  fault: FaultName | undefined;
  /** The status answered; undefined while pending, 0 when the connection was reset or dropped without an answer. */
  status: number | undefined;
  /** For a JSON error answer, its `error` object's type, code and param. */
  error: { type: string | null; code: string | null; param: string | null } | undefined;
}

export interface EmulatorStats {
  /** Requests received, on any route. */
  requests: number;
  /** Answers by status (0 = reset without an answer). */
  byStatus: Record<number, number>;
  /** Final images delivered (non-streamed results and completed events). */
  imagesGenerated: number;
  /** Partial image events delivered. */
  partialImagesSent: number;
  /** 429 `rate_limit_exceeded` answers (token bucket or injected). */
  rateLimited: number;
  /** 429 `insufficient_quota` answers. */
  quotaRejected: number;
  /** Injected faults that were applied. */
  faultsApplied: number;
  /** Streamed bodies still open. */
  openStreams: number;
}

/** Keeps the last requests and the counters behind `emulator.requests` and `emulator.stats()`. */
export class RequestLog {
  readonly records: ReceivedRequest[] = [];
  #stats = emptyStats();
  #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  setLimit(limit: number): void {
    this.#limit = limit;
    this.#trim();
  }

  start(init: { id: string; method: string; path: string }): ReceivedRequest {
    const record: ReceivedRequest = {
      ...init,
      receivedAt: Date.now(),
      route: undefined,
      authorized: false,
      fields: undefined,
      parsed: undefined,
      images: [],
      stream: false,
      fault: undefined,
      status: undefined,
      error: undefined,
    };
    this.#stats.requests += 1;
    this.records.push(record);
    this.#trim();
    return record;
  }

  answered(record: ReceivedRequest, status: number, error?: ReceivedRequest['error']): void {
    record.status = status;
    record.error = error;
    this.#stats.byStatus[status] = (this.#stats.byStatus[status] ?? 0) + 1;
    if (status === 429 && error?.code === 'rate_limit_exceeded') this.#stats.rateLimited += 1;
    if (status === 429 && error?.code === 'insufficient_quota') this.#stats.quotaRejected += 1;
  }

  count(counter: 'imagesGenerated' | 'partialImagesSent' | 'faultsApplied', by = 1): void {
    this.#stats[counter] += by;
  }

  stream(state: 'open' | 'closed'): void {
    this.#stats.openStreams += state === 'open' ? 1 : -1;
  }

  stats(): EmulatorStats {
    return { ...this.#stats, byStatus: { ...this.#stats.byStatus } };
  }

  clear(): void {
    this.records.length = 0;
    const open = this.#stats.openStreams;
    this.#stats = emptyStats();
    this.#stats.openStreams = open;
  }

  #trim(): void {
    const extra = this.records.length - this.#limit;
    if (extra > 0) this.records.splice(0, extra);
  }
}

function emptyStats(): EmulatorStats {
  return {
    requests: 0,
    byStatus: {},
    imagesGenerated: 0,
    partialImagesSent: 0,
    rateLimited: 0,
    quotaRejected: 0,
    faultsApplied: 0,
    openStreams: 0,
  };
}
