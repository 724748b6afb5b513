import { PictorError } from '../core/errors.js';

/**
 * Faults a test can inject: each applies to the next matching request (one
 * that is authorized and valid), in the order they were injected.
 */

export const FAULT_NAMES = [
  /** 500 `server_error`. */
  'server_error',
  /** 503 with `retry-after`. */
  'service_unavailable',
  /** The connection is destroyed before any byte of the answer; in-process `fetch` rejects with a TypeError. */
  'reset_before_response',
  /** The first event(s) are sent, then the connection is destroyed (the body stream errors). */
  'reset_mid_stream',
  /** The first event's data is not JSON; the rest of the stream follows as usual. */
  'malformed_event',
  /** Headers and one partial are sent, then nothing until the emulator or server closes. */
  'stalled_stream',
  /** 429 `rate_limit_exceeded` with `retry-after-ms`. */
  'rate_limited',
  /** 502 with an HTML body, as a proxy would answer. */
  'html_error',
  /** An SSE `event: error` with `{"error":{...}}` after the first event, then the stream ends. */
  'stream_error_event',
  /**
   * Plays a service that does not know `partial_images`: 400 `unknown_parameter`
   * naming it. Matches only requests that send `partial_images`.
   */
  'unknown_partial_images',
  /** A 200 with one image fewer than asked (`data: []` for one); streamed: one completed event fewer, then the stream ends. */
  'short_result',
  /** A 200 whose JSON body ends right after its first image (for one image: halfway); streamed: the first event cut in half, then the end. */
  'cut_off_body',
  /**
   * Completed events (and the JSON result) without the labels named in the
   * option `fields` (default all: `type`, `created_at`/`created`, `size`,
   * `quality`, `output_format`, `background`, `usage`); the images are whole.
   */
  'missing_fields',
  /** Streamed: every partial's image is bytes no decoder reads (a PNG signature, then noise); the completed images are whole. */
  'corrupt_partials',
] as const;

/** The labels `missing_fields` leaves out by default. */
export const IMAGE_LABELS = ['type', 'created_at', 'size', 'quality', 'output_format', 'background', 'usage'] as const;

export type FaultName = (typeof FAULT_NAMES)[number];
export type Route = 'generations' | 'edits';

/** Faults that break an answer after it started. */
export const STREAM_FAULTS = ['reset_mid_stream', 'malformed_event', 'stalled_stream', 'stream_error_event', 'short_result', 'cut_off_body', 'missing_fields', 'corrupt_partials'] as const;
export type StreamFault = (typeof STREAM_FAULTS)[number];

export interface InjectFaultOptions {
  /** How many matching requests get the fault. Default 1. */
  count?: number;
  /** Only requests to this route; default any route. */
  route?: Route;
  /** For `rate_limited` and `service_unavailable`: the wait advertised in `retry-after-ms` / `retry-after`. Default 1000. */
  retryAfterMs?: number;
  /** For `missing_fields`: the labels left out (`created_at` stands for the JSON result's `created` too). Default `IMAGE_LABELS`. */
  fields?: readonly string[];
}

export interface PendingFault {
  fault: FaultName;
  route: Route | undefined;
  remaining: number;
  retryAfterMs: number;
  fields: readonly string[];
}

/** A fault taken for one request. */
export interface AppliedFault {
  fault: FaultName;
  retryAfterMs: number;
  fields: readonly string[];
}

export class FaultQueue {
  #pending: PendingFault[] = [];

  inject(fault: FaultName, options: InjectFaultOptions = {}): void {
    if (!(FAULT_NAMES as readonly string[]).includes(fault)) {
      throw new TypeError(`unknown emulator fault ${JSON.stringify(fault)}; known: ${FAULT_NAMES.join(', ')}`);
    }
    const count = options.count ?? 1;
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`fault count must be an integer of at least 1, got ${count}`);
    this.#pending.push({ fault, route: options.route, remaining: count, retryAfterMs: Math.max(0, options.retryAfterMs ?? 1000), fields: [...(options.fields ?? IMAGE_LABELS)] });
  }

  /** Takes the first pending fault that applies to a request on `route` with these (received) fields, if any. */
  take(route: Route, fields: Readonly<Record<string, unknown>>): AppliedFault | undefined {
    const index = this.#pending.findIndex(
      (p) => (p.route === undefined || p.route === route) && (p.fault !== 'unknown_partial_images' || 'partial_images' in fields),
    );
    if (index < 0) return undefined;
    const pending = this.#pending[index]!;
    pending.remaining -= 1;
    if (pending.remaining <= 0) this.#pending.splice(index, 1);
    return { fault: pending.fault, retryAfterMs: pending.retryAfterMs, fields: pending.fields };
  }

  clear(): void {
    this.#pending = [];
  }

  pending(): readonly PendingFault[] {
    return this.#pending.map((p) => ({ ...p }));
  }
}

export function isStreamFault(fault: FaultName): fault is StreamFault {
  return (STREAM_FAULTS as readonly string[]).includes(fault);
}

/** The cause inside the network errors the emulator raises for a reset connection. */
export class EmulatedConnectionReset extends PictorError<'ECONNRESET'> {
  constructor(message = 'the emulator reset the connection (injected fault)') {
    super('ECONNRESET', message);
  }
}

/**
 * What web `fetch` raises when the connection breaks: `TypeError: fetch failed`
 * before a response, `TypeError: terminated` while reading the body, with the
 * reset as `cause`.
 */
export function connectionResetError(phase: 'before_response' | 'mid_stream'): TypeError {
  return new TypeError(phase === 'before_response' ? 'fetch failed' : 'terminated', { cause: new EmulatedConnectionReset() });
}

/**
 * What a request body that breaks mid-read becomes in the emulator (`BrokenBody`): a reset connection, so the request
 * is not answered, as a server whose upload broke off answers nothing.
 */
export const resetOnBrokenBody = (): TypeError => connectionResetError('before_response');

/** True for an error that stands for a reset connection (the HTTP server destroys the socket for it). */
export function isConnectionReset(err: unknown): boolean {
  return err instanceof Error && (err instanceof EmulatedConnectionReset || err.cause instanceof EmulatedConnectionReset);
}
