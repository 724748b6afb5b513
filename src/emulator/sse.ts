/**
 * Server-Sent Events as the service writes them (wire-format.md): an `event:`
 * line, one `data:` line of JSON that repeats the name in `type`, a blank line.
 */

const encoder = new TextEncoder();

/** One event; `data` gets `type: name` first. */
export function encodeEvent(name: string, data: Record<string, unknown>): Uint8Array {
  return encodeRawEvent(name, JSON.stringify({ type: name, ...data }));
}

/** One event whose data line is `dataText` as given (used to send a malformed event). */
export function encodeRawEvent(name: string, dataText: string): Uint8Array {
  return encoder.encode(`event: ${name}\ndata: ${dataText}\n\n`);
}

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
};
