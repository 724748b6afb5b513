import { describe, expect, it, vi } from 'vitest';
import { readJsonBody, type JsonBodyRead } from '../../src/client/read-json-body.js';
import type { RequestedJob } from '../../src/client/job-result.js';
import type { RawResponse } from '../../src/client/transport.js';
import { AbortedError, decodeImages, isPictorError, StreamBrokenError, TimeoutError } from '../../src/index.js';
import { makeImage } from '../helpers/images.js';

const REQUEST: RequestedJob = { operation: 'generate', n: 1, output_format: 'png', size: '1024x1024', quality: 'low', background: 'auto' };
/** How a read's own failure is told, as the client tells it (a failure of the read that is not in the tree yet: a broken connection). */
const READ: JsonBodyRead = { requestId: undefined, classify: (error) => (isPictorError(error) ? error : new StreamBrokenError('the connection broke', { cause: error })) };

/** A body that yields `chunks`, then, when `hang` is set, never ends. */
function bodyOf(chunks: readonly (string | Buffer)[], hang = false): RawResponse['body'] {
  return (async function* () {
    for (const chunk of chunks) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (hang) await new Promise(() => {});
  })() as unknown as RawResponse['body'];
}

describe('readJsonBody', () => {
  it('parses a result cut into chunks anywhere, a character split between two of them included', async () => {
    const bytes = Buffer.from(JSON.stringify({ data: [{ b64_json: 'AAAA' }], note: 'café ☕' }));
    const cut = bytes.indexOf(Buffer.from('☕')) + 1;
    const json = await readJsonBody(bodyOf([bytes.subarray(0, 5), bytes.subarray(5, cut), bytes.subarray(cut)]), REQUEST, READ);
    expect(json).toEqual({ data: [{ b64_json: 'AAAA' }], note: 'café ☕' });
  });

  it('is done once the whole result has arrived, even when the server keeps the body open', async () => {
    const json = await readJsonBody(bodyOf(['{"data": [{"b64_json": ', '"AAAA"}]}\n'], true), REQUEST, READ);
    expect(json).toEqual({ data: [{ b64_json: 'AAAA' }] });
  });

  it('is done at the last brace when the server keeps the body open short of its content-length', async () => {
    const json = await readJsonBody(bodyOf(['{"data": [{"b64_json": ', '"AAAA"}]}'], true), REQUEST, { ...READ, contentLength: 1000 });
    expect(json).toEqual({ data: [{ b64_json: 'AAAA' }] });
  });

  it('takes the top-level value up to its close when bytes that are not JSON follow it, in its chunk or after it', async () => {
    const result = '{"data": [{"b64_json": "AAAA"}], "note": "café"}';
    for (const chunks of [[result + ' GARBAGE{{{'], [result, '%%%%'], [result + '}']]) {
      const body = chunks.join('');
      expect(await readJsonBody(bodyOf(chunks), REQUEST, { ...READ, contentLength: Buffer.byteLength(body) })).toEqual(JSON.parse(result));
      expect(await readJsonBody(bodyOf(chunks), REQUEST, READ)).toEqual(JSON.parse(result));
    }
  });

  it('still refuses a body whose top-level value is not JSON, whatever follows it', async () => {
    await expect(readJsonBody(bodyOf(['{"data": [1,]} and more']), REQUEST, READ)).rejects.toMatchObject({ code: 'bad_response' });
  });

  it('is done at the close of the top-level object wherever the chunks cut escapes, quotes and braces in a string', async () => {
    const text = '{"data": [{"b64_json": "AAAA"}], "note": "\\\\\\"}]\\\\", "more": [{"a": "}"}]}';
    for (let cut = 1; cut < text.length; cut++) {
      const json = await readJsonBody(bodyOf([text.slice(0, cut), text.slice(cut)], true), REQUEST, READ);
      expect(json).toEqual(JSON.parse(text));
    }
  });

  it('is done at that close when the body comes one byte at a time, a character of several bytes before an escaped quote', async () => {
    const text = '{"data": [{"b64_json": "AAAA"}], "note": "caf\u00e9 \u2615\\"}\\\\"}';
    const bytes = Buffer.from(text);
    const json = await readJsonBody(bodyOf([...bytes].map((byte) => Buffer.from([byte])), true), REQUEST, READ);
    expect(json).toEqual(JSON.parse(text));
  });

  it('is done at that close whatever the answer holds (fewer images than asked: the result check judges it), even when the server keeps the body open', async () => {
    await expect(readJsonBody(bodyOf(['{"data": []}'], true), REQUEST, READ)).resolves.toEqual({ data: [] });
  });

  it('refuses at that close a body that is not JSON, without waiting for the server to end it', async () => {
    await expect(readJsonBody(bodyOf(['{"data": [1,]}'], true), REQUEST, READ)).rejects.toMatchObject({ code: 'bad_response' });
  });

  // 500 chunks of 16 KiB (8 MiB), each ending with a brace: each made the reader join and parse all that came before.
  it.each([
    ['inside a string', '"note": "', `${'A'.repeat(16 * 1024 - 1)}}`, '"}'],
    ['closing nested objects, whitespace after', '"pad": [{}', `, {"p": "${'A'.repeat(16 * 1024 - 16)}"} \n`, ']}'],
  ])('parses a body once although each of its chunks ends with a brace %s (linear in its size)', async (_, opening, middle, closing) => {
    const chunks = [`{"data": [{"b64_json": "AAAA"}], ${opening}`, ...Array<string>(500).fill(middle), closing];
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const json = (await readJsonBody(bodyOf(chunks, true), REQUEST, READ)) as { data: unknown };
      expect(json.data).toEqual([{ b64_json: 'AAAA' }]);
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('reads a body that is whole by its content-length to its end instead of cutting it off', async () => {
    const text = '{"data": [{"b64_json": "AAAA"}]}';
    let ended = false;
    const body = (async function* () {
      yield Buffer.from(text.slice(0, 10));
      yield Buffer.from(text.slice(10));
      ended = true;
    })() as unknown as RawResponse['body'];
    expect(await readJsonBody(body, REQUEST, { ...READ, contentLength: Buffer.byteLength(text) })).toEqual({ data: [{ b64_json: 'AAAA' }] });
    expect(ended).toBe(true);
  });

  it('drops a leading byte-order mark, as a text decoder does', async () => {
    const json = await readJsonBody(bodyOf(['\uFEFF{"data": []}']), REQUEST, READ);
    expect(json).toEqual({ data: [] });
  });

  it('reads bad UTF-8 as U+FFFD, as a text decoder does', async () => {
    const bytes = Buffer.concat([Buffer.from('{"data": [], "note": "'), Buffer.from([0xff]), Buffer.from('"}')]);
    expect(await readJsonBody(bodyOf([bytes]), REQUEST, READ)).toEqual({ data: [], note: '\uFFFD' });
  });

  it('says a body that is not JSON is a bad response', async () => {
    await expect(readJsonBody(bodyOf(['{"data": [{"b64_json": "AA']), REQUEST, { ...READ, requestId: 'req_7' })).rejects.toMatchObject({ code: 'bad_response', requestId: 'req_7' });
  });
});

const png = Buffer.from(await makeImage('png', 8, 8));
const PNG_B64 = png.toString('base64');

describe('readJsonBody, when the body breaks off', () => {
  const TWO: RequestedJob = { ...REQUEST, n: 2 };
  /** A body that yields `chunks`, then fails as its read would. */
  function breaking(chunks: readonly string[], error: unknown): RawResponse['body'] {
    return (async function* () {
      for (const chunk of chunks) yield Buffer.from(chunk);
      throw error;
    })() as unknown as RawResponse['body'];
  }
  const cut = [`{"created":1,"data":[{"b64_json":"${PNG_B64}"},`, `{"b64_json":"${PNG_B64.slice(0, 20)}`];

  it.each([
    ['a broken connection', Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }), 'stream_broken'],
    ['the request’s timeout (the abort’s reason, as the read throws it)', new TimeoutError('total', 60_000, { mayBeBilled: true }), 'timeout'],
    ['a cancel (the abort’s reason)', new AbortedError(), 'aborted'],
  ])('throws %s as the client tells it, with the whole images that came before it', async (_what, thrown, code) => {
    const error = await readJsonBody(breaking(cut, thrown), TWO, { ...READ, requestId: 'req_9' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code, partial: { requestId: 'req_9', data: [{ b64_json: PNG_B64, output_format: 'png' }], cost: { n: 1 } } });
    expect(decodeImages((error as { partial: { data: { b64_json: string }[] } }).partial)).toEqual([png]);
  });

  it('takes the result when the read breaks after its top-level value closed (the body was whole by its length)', async () => {
    const text = `{"created":1,"data":[{"b64_json":"${PNG_B64}"}]}`;
    const json = await readJsonBody(breaking([text], new Error('other side closed')), REQUEST, { ...READ, contentLength: Buffer.byteLength(text) });
    expect(json).toEqual(JSON.parse(text));
  });

  it('throws it as it is when no image came whole', async () => {
    const thrown = new TimeoutError('idle', 300, { mayBeBilled: true });
    await expect(readJsonBody(breaking(['{"created":1,"data":[{"b64_json":"iVBO'], thrown), TWO, READ)).rejects.toBe(thrown);
  });

  it('asks `classify` only for the read’s own failure: a body that is not JSON is still a bad response', async () => {
    const classify = vi.fn(READ.classify);
    await expect(readJsonBody(bodyOf(['{"data": [1,]}']), REQUEST, { ...READ, classify })).rejects.toMatchObject({ code: 'bad_response' });
    expect(classify).not.toHaveBeenCalled();
  });
});
