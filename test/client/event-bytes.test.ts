import { describe, expect, it } from 'vitest';
import { EventBytes } from '../../src/client/event-bytes.js';

/** The longest event `push` gave for each chunk, and the bytes left unended after them. */
function countOf(chunks: string[]): { longest: number[]; unended: number } {
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

  it('ends an event at a blank line after comments only, as the parser drops them there', () => {
    expect(countOf([': ping\n\nda'])).toEqual({ longest: [8], unended: 2 });
  });
});
