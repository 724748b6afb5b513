import type { IncomingMessage } from 'node:http';

/**
 * A call's connection cut where its answer was due (TCP RST), as a proxy or load balancer between a bot and its
 * platform can cut one. The one word both fake platforms (Discord, Slack) take for it:
 * - `'before'`: the platform never acted on the call (nothing made), so the bot may send it again;
 * - `'after'`: the platform carried the call out (a message made), then its answer was lost on the way back.
 */
export type ConnectionCut = 'before' | 'after';

/** Whether the platform carries out a call whose connection is cut so, before the cut. */
export function carriedOut(cut: ConnectionCut): boolean {
  return cut === 'after';
}

/** Ends `req`'s connection with a reset (TCP RST) instead of an answer. */
export function cutConnection(req: IncomingMessage): void {
  req.socket.resetAndDestroy();
}
