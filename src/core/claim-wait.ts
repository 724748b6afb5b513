/**
 * How long a claim in the bots' shared state (`claimOnce`) may take before what it guards is refused: the Redis
 * connection queues commands while it is down and retries them without end, so a claim left to itself waits for
 * Redis to come back. Well within the 3 s Discord and Slack give an answer.
 */
export const CLAIM_WAIT_MS = 1_500;
