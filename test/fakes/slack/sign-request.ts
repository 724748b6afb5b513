import { createHmac } from 'node:crypto';

/** Slack's request signature: `v0=` + HMAC-SHA256 of `v0:<timestamp>:<body>` with the signing secret. */
export function slackSignature(signingSecret: string, timestampSec: number, body: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestampSec}:${body}`).digest('hex')}`;
}

/** The two headers Slack sets on every request it sends to an app. */
export function signedHeaders(signingSecret: string, body: string, timestampSec = Math.floor(Date.now() / 1000)): Record<string, string> {
  return {
    'x-slack-request-timestamp': String(timestampSec),
    'x-slack-signature': slackSignature(signingSecret, timestampSec, body),
  };
}
