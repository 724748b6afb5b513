import { webApi } from '@slack/bolt';

declare const sentOnce: unique symbol;

/**
 * A Web API client that sends each call once (`retryConfig: { retries: 0 }`) and answers a 429 at once
 * (`rejectRateLimitedCalls`): the only client whose failures `lostAnswerCode` reads. On a client that tries again, the
 * error is the last try's, and a connection refused then can hide an earlier try that Slack took. Made only by
 * `sentOnceClient`.
 */
export type SentOnceClient = webApi.WebClient & { readonly [sentOnce]: true };

/** A client that sends each call once, with `options` otherwise (their retries and 429 handling replaced). */
export function sentOnceClient(token: string | undefined, options: webApi.WebClientOptions): SentOnceClient {
  return new webApi.WebClient(token, { ...options, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true }) as SentOnceClient;
}
