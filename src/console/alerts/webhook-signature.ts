import { createHmac } from 'node:crypto';
import { sameSecret } from '../auth.js';

/** The Unix time (seconds) the alert was signed at. */
export const TIMESTAMP_HEADER = 'x-pictor-timestamp';
/** `v1=` and the hex HMAC-SHA256, keyed with `PICTOR_ALERT_WEBHOOK_SECRET`, of `<timestamp>.<body>`. */
export const SIGNATURE_HEADER = 'x-pictor-signature';

/**
 * The signature of a webhook alert: `v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`. The receiver computes
 * the same over the raw body it received and the timestamp header, compares in constant time, and refuses a
 * timestamp more than 5 minutes from its clock (a replay). docs/console.md shows it in a few lines.
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The receiver's check, as docs/console.md describes it (the tests use it as a receiver would). */
export function verifyWebhook(secret: string, headers: { timestamp: string | undefined; signature: string | undefined }, body: string, nowMs = Date.now(), toleranceSeconds = 300): boolean {
  const timestamp = Number(headers.timestamp);
  if (!Number.isInteger(timestamp) || Math.abs(nowMs / 1000 - timestamp) > toleranceSeconds || !headers.signature) return false;
  return sameSecret(signWebhook(secret, timestamp, body), headers.signature);
}
