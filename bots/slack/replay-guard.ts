import type { IncomingMessage } from 'node:http';
import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import type { LoggerLike } from 'pictor';
import { CLAIM_WAIT_MS } from 'pictor/internal';
import { claimWithin, digestKeyOf, type Space } from '../state/index.js';
import { ackBudget } from './answer-by.js';

/**
 * HTTP mode's second check of a request, after Bolt's HTTPReceiver has
 * verified its signature (and refused timestamps more than 5 minutes old).
 * Bolt accepts the same signed request again and again within those 5
 * minutes, and any timestamp in the future: a captured `/imagine` could be
 * replayed as another paid job. Here a signature is accepted once, and a
 * timestamp more than `maxSkewSec` ahead of our clock is refused.
 *
 * The signatures seen are kept in the bots' state (`seen`: the `slack-seen`
 * space, the data folder or Redis), each until Bolt would refuse its request
 * anyway (5 minutes plus the skew), so a replay is dropped after a restart and
 * by every process sharing that storage. Only verified requests reach it, so
 * an outsider cannot fill it (and the space is bounded).
 *
 * The receiver's `customPropertiesExtractor` (synchronous) runs on every
 * verified request and notes its signature; a global middleware asks the
 * storage and acknowledges what it refuses (Slack gets its 200, nothing
 * runs). When the storage cannot answer (an error, or no answer within
 * `CLAIM_WAIT_MS` nor within what is left of the waits before the
 * acknowledgement, `ackBudget`), the request is refused too, logged and said
 * nothing of: it may be a paid job.
 */
export interface ReplayGuard {
  /** For `HTTPReceiver`'s `customPropertiesExtractor`. */
  extract(req: IncomingMessage): Record<string, unknown>;
  /** For `app.use`: drops replays and what `extract` marked. */
  middleware: Middleware<AnyMiddlewareArgs>;
}

const CHECK = 'pictorRequestCheck';
const SIGNATURE = 'pictorRequestSignature';

export function createReplayGuard(options: { logger: LoggerLike; seen: Pick<Space<unknown>, 'claimOnce' | 'releaseClaim'>; maxSkewSec?: number | undefined; now?: (() => number) | undefined }): ReplayGuard {
  const maxSkewSec = options.maxSkewSec ?? 60;
  const now = options.now ?? Date.now;

  return {
    extract(req) {
      const signature = header(req, 'x-slack-signature');
      const timestampSec = Number(header(req, 'x-slack-request-timestamp'));
      // ssl_check requests carry no signature (Bolt strips their payload): nothing to check.
      if (!signature || !Number.isFinite(timestampSec)) return { [CHECK]: 'ok' };
      if (timestampSec * 1000 > now() + maxSkewSec * 1000) return { [CHECK]: 'future' };
      return { [CHECK]: 'once', [SIGNATURE]: signature };
    },
    middleware: async (args) => {
      const context = args.context as Record<string, unknown>;
      let check = context[CHECK];
      if (check === 'once') {
        try {
          // Its own wait ends with the acknowledgement's budget: a claim that comes later is given back (claimWithin).
          const key = digestKeyOf(String(context[SIGNATURE]));
          check = (await ackBudget(args.context).within((leftMs) => claimWithin(options.seen, key, { waitMs: Math.min(CLAIM_WAIT_MS, leftMs) }))) ? 'ok' : 'replay';
        } catch (err) {
          options.logger.error({ err }, 'could not check a Slack request against the ones seen lately: refused it');
          check = 'unchecked';
        }
      }
      if (check === 'replay' || check === 'future' || check === 'unchecked') {
        if (check !== 'unchecked') {
          options.logger.warn({ check, type: args.body.type }, check === 'replay' ? 'refused a replayed Slack request' : 'refused a Slack request dated in the future');
        }
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
