import type { IncomingMessage } from 'node:http';
import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import type { LoggerLike } from '../../src/index.js';

/**
 * HTTP mode's second check of a request, after Bolt's HTTPReceiver has
 * verified its signature (and refused timestamps more than 5 minutes old).
 * Bolt accepts the same signed request again and again within those 5
 * minutes, and any timestamp in the future: a captured `/imagine` could be
 * replayed as another paid job. Here a signature is accepted once, and a
 * timestamp more than `maxSkewSec` ahead of our clock is refused.
 *
 * The receiver's `customPropertiesExtractor` runs on every verified request
 * and marks the ones to refuse; a global middleware acknowledges them
 * (Slack gets its 200, nothing runs). Only verified requests reach the cache,
 * so an outsider cannot fill it; it holds each signature for the 5 minutes
 * Bolt would still accept it, plus the skew.
 */
export interface ReplayGuard {
  /** For `HTTPReceiver`'s `customPropertiesExtractor`. */
  extract(req: IncomingMessage): Record<string, unknown>;
  /** For `app.use`: drops what `extract` marked. */
  middleware: Middleware<AnyMiddlewareArgs>;
}

/** Bolt's own limit for old timestamps. */
const STALE_AFTER_SEC = 5 * 60;
const CHECK = 'pictorRequestCheck';

export function createReplayGuard(options: { logger: LoggerLike; maxSkewSec?: number | undefined; maxEntries?: number | undefined; now?: (() => number) | undefined }): ReplayGuard {
  const maxSkewSec = options.maxSkewSec ?? 60;
  const maxEntries = options.maxEntries ?? 50_000;
  const now = options.now ?? Date.now;
  /** Signature → when it stops mattering (ms), oldest first. */
  const seen = new Map<string, number>();

  const forget = (at: number) => {
    for (const [signature, until] of seen) {
      if (until > at && seen.size <= maxEntries) break;
      seen.delete(signature);
    }
  };

  return {
    extract(req) {
      const signature = header(req, 'x-slack-signature');
      const timestampSec = Number(header(req, 'x-slack-request-timestamp'));
      // ssl_check requests carry no signature (Bolt strips their payload): nothing to check.
      if (!signature || !Number.isFinite(timestampSec)) return { [CHECK]: 'ok' };
      const at = now();
      forget(at);
      if (timestampSec * 1000 > at + maxSkewSec * 1000) return { [CHECK]: 'future' };
      if (seen.has(signature)) return { [CHECK]: 'replay' };
      seen.set(signature, (timestampSec + STALE_AFTER_SEC + maxSkewSec) * 1000);
      return { [CHECK]: 'ok' };
    },
    middleware: async (args) => {
      const check = (args.context as Record<string, unknown>)[CHECK];
      if (check === 'replay' || check === 'future') {
        options.logger.warn({ check, type: args.body.type }, check === 'replay' ? 'refused a replayed Slack request' : 'refused a Slack request dated in the future');
        if ('ack' in args && typeof args.ack === 'function') await (args.ack as () => Promise<void>)();
        return;
      }
      await args.next();
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}
