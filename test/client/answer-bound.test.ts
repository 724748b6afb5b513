import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ANSWER_MARGIN_BYTES, answerByteBound, EVENT_BYTE_BOUND, MAX_IMAGE_BASE64_BYTES } from '../../src/client/answer-bound.js';
import { LIMITS } from '../../src/spec/constants.js';
import { parseSize, SIZES } from '../../src/spec/index.js';

const root = resolve(import.meta.dirname, '../..');
const MIB = 1024 * 1024;
const mib = (bytes: number) => `${Math.round(bytes / MIB)} MiB`;

/** The text of `file`, blanks folded to one space. */
async function textOf(file: string): Promise<string> {
  return (await readFile(resolve(root, file), 'utf8')).replace(/\s+/g, ' ');
}

/** The part of `text` from `start` (which must be there) to the first of `ends` after it (or the end). */
function partOf(text: string, start: string, ends: string[]): string {
  const from = text.indexOf(start);
  expect(from, `"${start}" is there`).toBeGreaterThanOrEqual(0);
  const after = ends.map((end) => text.indexOf(end, from + start.length)).filter((at) => at >= 0);
  return text.slice(from, after.length ? Math.min(...after) : undefined);
}

describe('the bounds on what the client reads of an answer', () => {
  it('gives a stream one image and the margin past its last event, and a JSON answer each image asked for and the margin', () => {
    expect(EVENT_BYTE_BOUND).toBe(MAX_IMAGE_BASE64_BYTES + ANSWER_MARGIN_BYTES);
    expect(answerByteBound(1)).toBe(MAX_IMAGE_BASE64_BYTES + ANSWER_MARGIN_BYTES);
    expect(answerByteBound(3)).toBe(3 * MAX_IMAGE_BASE64_BYTES + ANSWER_MARGIN_BYTES);
  });

  it('holds any image of the spec\'s sizes, even uncompressed 16-bit RGBA with a MiB of metadata, and the 30 MB events wire-format.md calls normal', () => {
    for (const size of SIZES) {
      const { width, height } = parseSize(size);
      const bytes = width * height * 8 + height + MIB;
      expect(Math.ceil(bytes / 3) * 4).toBeLessThan(MAX_IMAGE_BASE64_BYTES);
    }
    expect(30_000_000).toBeLessThan(MAX_IMAGE_BASE64_BYTES);
  });

  it('is stated in README\'s client section, with its figures for the bots\' defaults, and no longer in the input limit\'s row', async () => {
    const readme = await textOf('README.md');
    const client = partOf(readme, '## The client ', ['## ']);
    const paragraph = partOf(client, '**What an answer may hold.**', ['**']);
    expect(paragraph).toContain(`a stream is read up to ${mib(EVENT_BYTE_BOUND)} (${mib(MAX_IMAGE_BASE64_BYTES)} of base64 for one image, plus ${mib(ANSWER_MARGIN_BYTES)}) past the end of its last event`);
    expect(paragraph).toContain(`JSON answer up to ${mib(MAX_IMAGE_BASE64_BYTES)} of base64 for each image asked for, plus ${mib(ANSWER_MARGIN_BYTES)}`);
    // The bots always stream, up to LIMITS.nMax images a job, PICTOR_MAX_CONCURRENT (4 by default) jobs at once.
    expect(paragraph).toContain(`a job holds at most ${mib(EVENT_BYTE_BOUND)} of an unfinished event`);
    expect(paragraph).toContain(`at most ${mib(answerByteBound(LIMITS.nMax))} of bytes, up to three times that while they are parsed`);
    expect(paragraph).toContain(`\`PICTOR_MAX_CONCURRENT\` (4) times that, ${mib(4 * EVENT_BYTE_BOUND)} of streams, or up to ${(4 * 3 * answerByteBound(LIMITS.nMax) / 1024 ** 3).toFixed(1)} GiB`);
    const inputRow = partOf(readme, '| `PICTOR_MAX_QUEUED_INPUT_MB` |', ['| `PICTOR_PARTIAL_IMAGES` |']);
    expect(inputRow).not.toMatch(/answer|base64/);
  });

  it('is stated in the deploying page\'s sizing paragraph', async () => {
    const sizing = partOf(await textOf('docs/deploying.md'), 'Sizing:', ['Redis needs']);
    expect(sizing).toContain(`reads a stream up to ${mib(MAX_IMAGE_BASE64_BYTES)} of base64 for one image, plus ${mib(ANSWER_MARGIN_BYTES)}, past the end of its last event`);
    expect(sizing).toContain(`a JSON answer up to ${mib(MAX_IMAGE_BASE64_BYTES)} of base64 for each image asked for, plus ${mib(ANSWER_MARGIN_BYTES)}`);
    expect(sizing).toContain(`at most ${mib(EVENT_BYTE_BOUND)} per job in a stream, whatever the images and previews asked for (${mib(4 * EVENT_BYTE_BOUND)} for 4 jobs at once)`);
    expect(sizing).toContain(`holds up to ${mib(answerByteBound(LIMITS.nMax))} of bytes`);
  });

  it('is the least event size wire-format.md says the stream is capped at', async () => {
    const streaming = partOf(await textOf('docs/wire-format.md'), '## Streaming (SSE)', ['## ']);
    expect(streaming).toContain(`Pictor caps no event below ${mib(MAX_IMAGE_BASE64_BYTES)} of base64, above the 30 MB called normal here`);
    expect(streaming).toContain(`more than that plus ${mib(ANSWER_MARGIN_BYTES)} without ending an event is cut off with \`bad_response\``);
  });
});
