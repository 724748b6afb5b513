import { describe, expect, it } from 'vitest';
import { createParser } from 'eventsource-parser';
import { EventBytes } from '../../src/client/event-bytes.js';
import { createUtf8Decoder } from '../../src/client/utf8-decoder.js';

/** The longest event `push` gave for each chunk, and the bytes left unended after them. */
function countOf(chunks: (string | Buffer)[]): { longest: number[]; unended: number } {
  const count = new EventBytes();
  const longest = chunks.map((chunk) => count.push(Buffer.from(chunk)));
  return { longest, unended: count.unended };
}

describe('EventBytes', () => {
  it('starts the count of the next event with the rest of the chunk that ended the last one', () => {
    // 'data: 1\n\n' is 9 bytes; the next event's first 5 bytes share its chunk.
    expect(countOf(['data: 1\n\ndata:', ' 22'])).toEqual({ longest: [9, 8], unended: 8 });
  });

  it('counts each of several events in one chunk on its own, and gives the longest', () => {
    expect(countOf(['data: 1\n\ndata: 4444\n\ndata: 22\n\nda'])).toEqual({ longest: [12], unended: 2 });
  });

  it('counts an event split across chunks whole, up to its end in a later chunk', () => {
    expect(countOf(['data: ', '4444', '\n', '\ndata: 1'])).toEqual({ longest: [6, 10, 11, 12], unended: 7 });
  });

  it('ends an event at a blank line ended by CR, or by CRLF, its LF counted in the event even in the next chunk', () => {
    expect(countOf(['data: 1\r\rx'])).toEqual({ longest: [9], unended: 1 });
    expect(countOf(['data: 1\r\n\r', '\nx'])).toEqual({ longest: [10, 11], unended: 1 });
    // A CR ending a line with bytes, then an LF: one line end (CRLF), not a blank line.
    expect(countOf(['data: 1\r', '\ndata: 2'])).toEqual({ longest: [8, 16], unended: 16 });
  });

  it('keeps an event whose blank line ends in a CR at the end of a chunk counted, with the bytes after it, until a later chunk brings a line end', () => {
    // The parser keeps that CR (it may be a CRLF's) and the event with it.
    expect(countOf(['data: 1\r\r', 'xxxx'])).toEqual({ longest: [9, 13], unended: 13 });
    expect(countOf(['data: 1\r\r', 'xxxx', '\n'])).toEqual({ longest: [9, 13, 13], unended: 5 });
    expect(countOf(['data: 1\r\n\r'])).toEqual({ longest: [10], unended: 10 });
    // Also when all that follows the CR in its chunk is the start of a character the decoder holds back.
    const smile = Buffer.from('😀');
    const cut = [Buffer.concat([Buffer.from('data: 1\r\r'), smile.subarray(0, 2)]), Buffer.concat([smile.subarray(2), Buffer.from('x\n')])];
    expect(countOf(cut)).toEqual({ longest: [11, 14], unended: 6 });
  });

  it('ends an event at a blank line after comments only, as the parser drops them there', () => {
    expect(countOf([': ping\n\nda'])).toEqual({ longest: [8], unended: 2 });
  });
});

/**
 * Streams whose every event carries data, so the parser hands each one on: what it has not handed on after a chunk is
 * what was fed minus the bytes of the events it dispatched. `tail` is an event still open when the stream stops.
 */
const STREAMS: { name: string; events: string[]; tail: string }[] = [
  { name: 'LF endings', events: ['data: 1\n\n', 'event: x\ndata: 22\ndata: 3\n\n'], tail: 'data: 4' },
  { name: 'CRLF endings', events: ['data: 1\r\n\r\n', 'id: 7\r\ndata: 22\r\n\r\n'], tail: 'data: 4\r\n' },
  { name: 'CR endings', events: ['data: 1\r\r', 'data: 22\rdata: 3\r\r'], tail: 'xxxx' },
  { name: 'mixed endings', events: ['data: 1\r\n\n', 'data: 2\n\r', 'data: 3\r\r\n'], tail: 'data: 4\r' },
  { name: 'comments inside events', events: [': ping\rdata: 1\r\r', ':\n: x\r\ndata: 2\n: y\n\n'], tail: ': z\r' },
  { name: 'multi-byte UTF-8 after a CR', events: ['data: é\r\r', 'data: €\r\r'], tail: '😀x' },
  { name: 'multi-byte UTF-8 in lines', events: ['data: 😀€é\n\n', 'data: é\r\n\r\n'], tail: 'data: 😀' },
];

/** Every way to cut `bytes` into one, two or three chunks. */
function* chunkings(bytes: Buffer): Generator<Buffer[]> {
  yield [bytes];
  for (let a = 1; a < bytes.length; a++) {
    yield [bytes.subarray(0, a), bytes.subarray(a)];
    for (let b = a + 1; b < bytes.length; b++) yield [bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)];
  }
}

describe('EventBytes against the parser the stream feeds', () => {
  it.each(STREAMS)('never counts fewer bytes than the parser holds after each chunk, however the stream is cut ($name)', ({ events, tail }) => {
    const eventEnds: number[] = [];
    let end = 0;
    for (const event of events) eventEnds.push((end += Buffer.byteLength(event)));
    const bytes = Buffer.from(events.join('') + tail);
    for (const chunks of chunkings(bytes)) {
      const count = new EventBytes();
      let dispatched = 0;
      const parser = createParser({ onEvent: () => dispatched++ });
      const decoder = createUtf8Decoder();
      let fed = 0;
      for (const [i, chunk] of chunks.entries()) {
        count.push(chunk);
        parser.feed(decoder.push(chunk));
        fed += chunk.length;
        const held = fed - (dispatched === 0 ? 0 : eventEnds[dispatched - 1]!);
        const where = `after chunk ${i + 1} of ${JSON.stringify(chunks.map(String))}`;
        expect(count.unended, `${where}: fewer than the parser holds`).toBeGreaterThanOrEqual(held);
        // And no more (these streams are whole UTF-8), so no event is cut short before the bound.
        expect(count.unended, `${where}: more than the parser holds`).toBe(held);
      }
      expect(dispatched).toBeLessThanOrEqual(events.length);
    }
  });
});
