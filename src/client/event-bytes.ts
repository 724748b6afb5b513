const LF = 0x0a;
const CR = 0x0d;

/**
 * Counts the bytes of an event stream event by event, exactly at their ends, to bound what an SSE parser holds: an
 * event ends at a blank line (the parser hands it on and keeps nothing of it), so what the parser may hold is the
 * bytes since the last blank line. An event's bytes run from the byte after the previous event's end through its own
 * blank line. Lines end with LF, CR or CRLF (a CRLF's LF is its CR's, even in the next chunk).
 *
 * Only line ends are looked at, found with `indexOf` (the base64 of an image is never looked at byte by byte in JS).
 */
export class EventBytes {
  /** Bytes since the last event ended. */
  #unended = 0;
  /** The line being read has bytes: a line end now ends that line, not an event. */
  #lineOpen = false;
  /** The last byte was a CR ending a line, or an event (the LF of a CRLF right after it is its). */
  #afterCR: 'line' | 'event' | undefined;
  /** Bytes of the event that ended last (for the LF of its CRLF, which may come in the next chunk). */
  #lastEvent = 0;

  /** Bytes since the last event ended, after the chunks pushed so far. */
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
      if (chunk[at] === LF && this.#afterCR !== undefined) {
        // The LF of a CRLF: the line ended at its CR; an event that ended there takes this byte too.
        if (this.#afterCR === 'event') {
          this.#lastEvent += 1;
          longest = Math.max(longest, this.#lastEvent);
          counted = at + 1;
        }
        this.#afterCR = undefined;
      } else {
        const endsEvent = !this.#lineOpen;
        if (endsEvent) {
          this.#lastEvent = this.#unended + (at + 1 - counted);
          longest = Math.max(longest, this.#lastEvent);
          this.#unended = 0;
          counted = at + 1;
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
