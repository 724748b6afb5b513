import OpenAI from 'openai';
import { request } from 'undici';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import * as pictorSource from '../../src/index.js';
import { MODEL, PATHS } from '../../src/spec/index.js';

/** The two workloads every client runs, with the same fields on the wire. */
export const WORKLOADS = {
  /** One non-streamed generation of 4 images at 1536x1024 (PNG). */
  nonStreamed: { model: MODEL, prompt: 'a lighthouse at dusk', n: 4, size: '1536x1024', quality: 'low' },
  /** One streamed generation at 1536x1024 with 3 partial images before the completed one. */
  streamed: { model: MODEL, prompt: 'a lighthouse at dusk', n: 1, size: '1536x1024', quality: 'low', partial_images: 3 },
} as const;

export type WorkloadName = keyof typeof WORKLOADS;
export const CONTENDER_NAMES = ['pictor', 'openai', 'undici', 'undici-fresh'] as const;
export type ContenderName = (typeof CONTENDER_NAMES)[number];

/** What the Pictor contender uses of the package: its TypeScript source (`src/`, the default) or its build (`dist/src/`). */
export type PictorModule = Pick<typeof pictorSource, 'PictorClient' | 'decodeImages' | 'imageBytes' | 'isCompletedEvent'>;

/**
 * One way of calling the service. Each call turns every image it received
 * (partials included) into bytes, as a caller that writes or uploads them
 * must, and resolves with how many bytes that made, so a run can check that
 * every contender got the same thing. Each contender decodes each image once:
 * Pictor hands on the bytes its check decoded, the others decode the base64.
 */
export interface Contender {
  name: ContenderName;
  run(workload: WorkloadName): Promise<number>;
}

export function makeContender(name: ContenderName, baseURL: string, pictor: PictorModule = pictorSource): Contender {
  switch (name) {
    case 'pictor':
      return pictorContender(baseURL, pictor);
    case 'openai':
      return openaiContender(baseURL);
    case 'undici':
      return undiciContender(baseURL, false);
    case 'undici-fresh':
      return undiciContender(baseURL, true);
  }
}

function pictorContender(baseURL: string, { PictorClient, decodeImages, imageBytes, isCompletedEvent }: PictorModule): Contender {
  const client = new PictorClient({ baseURL, apiKey: DEV_API_KEY, maxRetries: 0 });
  return {
    name: 'pictor',
    async run(workload) {
      if (workload === 'nonStreamed') {
        const result = await client.generate(WORKLOADS.nonStreamed);
        return sumBytes(decodeImages(result));
      }
      let bytes = 0;
      for await (const event of client.generateStream(WORKLOADS.streamed)) {
        // A completed image was decoded by the client's check; a partial is not checked, so it is decoded here.
        bytes += (isCompletedEvent(event) ? imageBytes(event) : Buffer.from(event.b64_json, 'base64')).length;
      }
      return bytes;
    },
  };
}

function openaiContender(baseURL: string): Contender {
  const client = new OpenAI({ apiKey: DEV_API_KEY, baseURL: `${baseURL}/v1`, maxRetries: 0 });
  return {
    name: 'openai',
    async run(workload) {
      if (workload === 'nonStreamed') {
        const result = await client.images.generate(WORKLOADS.nonStreamed);
        return sumBytes((result.data ?? []).map((d) => decodeBase64(d.b64_json)));
      }
      let bytes = 0;
      const stream = await client.images.generate({ ...WORKLOADS.streamed, stream: true });
      for await (const event of stream) bytes += decodeBase64(event.b64_json).length;
      return bytes;
    },
  };
}

/**
 * The least a careful hand-written client does: one undici request, JSON.parse,
 * a minimal SSE splitter. `fresh`: a new connection per request, as Pictor
 * opens (`reset: true`), to tell the cost of that policy from Pictor's own work;
 * otherwise undici's default, a kept-alive connection reused.
 */
function undiciContender(baseURL: string, fresh: boolean): Contender {
  const url = `${baseURL}${PATHS.generations}`;
  const post = async (body: object, accept: string) => {
    const res = await request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_API_KEY}`, 'content-type': 'application/json', accept },
      body: JSON.stringify(body),
      ...(fresh && { reset: true }),
    });
    if (res.statusCode !== 200) {
      const text = await res.body.text();
      throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    }
    return res.body;
  };
  return {
    name: fresh ? 'undici-fresh' : 'undici',
    async run(workload) {
      if (workload === 'nonStreamed') {
        const body = await post(WORKLOADS.nonStreamed, 'application/json');
        const json = JSON.parse(await body.text()) as { data: { b64_json: string }[] };
        return sumBytes(json.data.map((d) => decodeBase64(d.b64_json)));
      }
      const body = await post({ ...WORKLOADS.streamed, stream: true }, 'text/event-stream');
      let bytes = 0;
      await readSse(body, (data) => {
        const event = JSON.parse(data) as { b64_json?: string; error?: unknown };
        if (event.error) throw new Error(`stream error event: ${JSON.stringify(event.error)}`);
        bytes += decodeBase64(event.b64_json).length;
      });
      return bytes;
    },
  };
}

/**
 * Splits an LF-framed SSE body into events and hands each `data:` payload to
 * `onData`. Linear: text is only joined when an event boundary arrives.
 */
export async function readSse(body: AsyncIterable<Uint8Array>, onData: (data: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let endedWithNewline = false;
  const flush = () => {
    const block = parts.join('');
    parts.length = 0;
    for (const line of block.split('\n')) {
      if (line.startsWith('data:')) onData(line.slice(line.charCodeAt(5) === 32 ? 6 : 5));
    }
  };
  for await (const chunk of body) {
    const text = decoder.decode(chunk, { stream: true });
    let start = 0;
    if (endedWithNewline && text.charCodeAt(0) === 10) {
      flush();
      start = 1;
    }
    for (let end = text.indexOf('\n\n', start); end !== -1; end = text.indexOf('\n\n', start)) {
      parts.push(text.slice(start, end));
      flush();
      start = end + 2;
    }
    if (start < text.length) parts.push(text.slice(start));
    endedWithNewline = text.charCodeAt(text.length - 1) === 10;
  }
  if (parts.length) flush();
}

function decodeBase64(b64: string | undefined): Buffer {
  return Buffer.from(b64 ?? '', 'base64');
}

function sumBytes(images: readonly Buffer[]): number {
  return images.reduce((sum, bytes) => sum + bytes.length, 0);
}
