import type { CompletedEvent } from '../spec/result-schemas.js';
import type { LoggerLike } from './PictorClient.js';
import type { RequestedJob } from './job-result.js';

/** What the client tells its request hook about a request: validated, not yet queued. */
export interface HookedRequest extends RequestedJob {
  prompt: string;
}

/** How a request ended, as its hook is told: once, with the service's request id when it answered. */
export type RequestEnding = ({ kind: 'completed' } | { kind: 'failed'; error: unknown } | { kind: 'cancelled' }) & { requestId?: string | undefined };

/**
 * One request's follower, given by the client's `onRequest` hook. The client calls it as the request goes, so
 * whoever watches can settle the request by what reached the service (the spend guard does).
 */
export interface RequestWatch {
  /**
   * Awaited after the limiter lets the request go and just before its body is sent (again on each retry).
   * A rejection (or a throw) stops the request unsent; the caller gets that error. A synchronous watch returns nothing.
   */
  beforeSend?(): void | Promise<void>;
  /**
   * The attempt just sent ended with this error and the request waits to be sent again (announced by `beforeSend`):
   * until then, what is at the service is what that error says (an error answer bills nothing).
   */
  onRetry?(info: { error: unknown }): void;
  /**
   * A finished image reached the caller: each completed event of a stream, each image of a result or of a failure that
   * carries images. A throw is logged and changes nothing the caller gets: the image is still handed on, and `end` still
   * called (a result the service made is never withheld).
   */
  onImage?(image: CompletedEvent): void;
  /**
   * Once, when the request is over: `completed`, `failed` (with the error the caller gets), or `cancelled` (a stream
   * its reader left early). Not awaited: the caller gets the result or the error at once, whatever the watch does with
   * it (the spend guard's settle may wait for a busy ledger). A rejection is logged and changes nothing the caller gets
   * (a result the service made is never withheld). A synchronous watch returns nothing.
   */
  end?(ending: RequestEnding): void | Promise<unknown>;
}

/**
 * Called once for every request of a client, after the request is validated and before it waits for the limiter.
 * A rejection refuses the request: nothing is queued or sent and the caller gets that error (the spend guard refuses
 * a job over a cap this way). The watch it gives follows the request; none: the request is not followed.
 */
export type RequestHook = (request: HookedRequest) => Promise<RequestWatch | undefined> | RequestWatch | undefined;

/** Tells a watch of a finished image; what it throws is logged, never handed to the caller (the image is paid for). */
export function tellImage(watch: RequestWatch, image: CompletedEvent, requestId: string | undefined, logger: LoggerLike): void {
  try {
    watch.onImage?.(image);
  } catch (error) {
    logger.error({ err: error, requestId }, 'the request hook failed on a finished image; the image is handed on');
  }
}

/** Tells a watch how its request ended, without waiting for it; what it throws is logged, never handed to the caller. */
export function endWatch(watch: RequestWatch, ending: RequestEnding, logger: LoggerLike): void {
  const failed = (error: unknown) => logger.error({ err: error, requestId: ending.requestId }, 'the request hook failed to settle a request');
  try {
    void Promise.resolve(watch.end?.(ending)).catch(failed);
  } catch (error) {
    failed(error);
  }
}

/** The caller's own `onRetry` first, then the watch's. */
export function chainOnRetry<T extends { error: unknown }>(first: ((info: T) => void) | undefined, watch: RequestWatch | undefined): ((info: T) => void) | undefined {
  const second = watch?.onRetry?.bind(watch);
  if (!second) return first;
  return (info) => (first?.(info), second(info));
}

/** The caller's own `beforeSend` first, then the watch's. */
export function chainBeforeSend(first: (() => Promise<void>) | undefined, watch: RequestWatch | undefined): (() => Promise<void>) | undefined {
  const hook = watch?.beforeSend?.bind(watch);
  if (!hook) return first;
  // A synchronous watch's throw becomes the same rejection as an asynchronous one's.
  const second = async (): Promise<void> => {
    await hook();
  };
  return first ? async () => (await first(), await second()) : second;
}
