const LF = 0x0a;
const CR = 0x0d;

/**
 * Counts the bytes of an event stream event by event, exactly at their ends, to bound what an SSE parser holds: an
 * event ends at a blank line (the parser hands it on and keeps nothing of it), so what the parser may hold is the
 * bytes since the last blank line. An event's bytes run from the byte after the previous event's end through its own
 * blank line. Lines end with LF, CR or CRLF (a CRLF's LF is its CR's, even in the next chunk).
 *
 * One exception, the parser's (`eventsource-parser`): a CR that is the last character of what it is fed from a chunk
 * may be the start of a CRLF, so it keeps that CR, and with it the event a blank line there ends, until a later chunk
 * brings a CR or LF. Such an event stays counted, with the bytes after it, up to the first line end of a later chunk.
 * The last character fed is a chunk's last byte, or the last before the first bytes of a character cut at its end
 * (which the UTF-8 decoder holds back): a CR followed in its chunk only by up to 3 bytes of 0x80 or more is taken as
 * kept (when those bytes are not such a start, this counts the event a little longer than the parser keeps it).
 *
 * Only line ends are looked at, found with `indexOf` (the base64 of an image is never looked at byte by byte in JS).
 */
export class EventBytes {
  /** Bytes since the last event the parser let go of ended. */
  #unended = 0;
  /** The line being read has bytes: a line end now ends that line, not an event. */
  #lineOpen = false;
  /** The last byte was a CR ending a line, or an event (the LF of a CRLF right after it is its). */
  #afterCR: 'line' | 'event' | undefined;
  /** Bytes of the event that ended last (for the LF of its CRLF, which may come in the next chunk). */
  #lastEvent = 0;
  /** The event that ended last ended at a CR the parser keeps (see above): it is counted in `#unended` still. */
  #kept = false;

  /** Bytes since the last event the parser let go of ended, after the chunks pushed so far: never fewer than it holds. */
  get unended(): number {
    return this.#unended;
  }

  /** Counts `chunk`; gives the most bytes an event took within it: one that ended in it, or the one still open. */
  push(chunk: Uint8Array): number {
    let longest = 0;
    /** Where the bytes of `chunk` not yet counted start. */
    let counted = 0;
    /** Where the line being read starts in `chunk` (0: it may have started before). */
    let lineStart = 0;
    let lf = chunk.indexOf(LF);
    let cr = chunk.indexOf(CR);
    while (lf >= 0 || cr >= 0) {
      const at = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      if (at > lineStart) {
        this.#lineOpen = true;
        this.#afterCR = undefined;
      }
      if (this.#kept && !(chunk[at] === LF && this.#afterCR === 'event')) {
        // The parser lets go of the event it kept at this line end (held with the bytes before it); the bytes after
        // the event start the next one.
        longest = Math.max(longest, this.#unended + at - counted);
        this.#kept = false;
        this.#unended -= this.#lastEvent;
      }
      if (chunk[at] === LF && this.#afterCR !== undefined) {
        // The LF of a CRLF: the line ended at its CR; an event that ended there takes this byte too.
        if (this.#afterCR === 'event') {
          this.#lastEvent += 1;
          longest = Math.max(longest, this.#lastEvent);
          counted = at + 1;
          // A kept event is let go at its LF (its bytes from this chunk were not added to `#unended`).
          if (this.#kept) {
            this.#kept = false;
            this.#unended -= this.#lastEvent - 1;
          }
        }
        this.#afterCR = undefined;
      } else {
        const endsEvent = !this.#lineOpen;
        if (endsEvent) {
          this.#lastEvent = this.#unended + (at + 1 - counted);
          longest = Math.max(longest, this.#lastEvent);
          counted = at + 1;
          // A CR the parser keeps keeps its event too: it stays counted until a later chunk's first line end.
          this.#kept = chunk[at] === CR && isLastFed(chunk, at);
          this.#unended = this.#kept ? this.#lastEvent : 0;
        }
        this.#lineOpen = false;
        this.#afterCR = chunk[at] === CR ? (endsEvent ? 'event' : 'line') : undefined;
      }
      lineStart = at + 1;
      if (lf === at) lf = chunk.indexOf(LF, at + 1);
      else cr = chunk.indexOf(CR, at + 1);
    }
    if (chunk.length > lineStart) {
      this.#lineOpen = true;
      this.#afterCR = undefined;
    }
    this.#unended += chunk.length - counted;
    return Math.max(longest, this.#unended);
  }
}

/** Whether the byte at `at` may be the last the decoder gives the parser from `chunk`: at most the start of a cut character follows it. */
function isLastFed(chunk: Uint8Array, at: number): boolean {
  if (chunk.length - 1 - at > 3) return false;
  for (let i = at + 1; i < chunk.length; i++) if (chunk[i]! < 0x80) return false;
  return true;
}
