import OpenAI from 'openai';
import { request } from 'undici';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { PictorClient } from '../../src/index.js';
import { MODEL, PATHS } from '../../src/spec/index.js';

/** The two workloads every client runs, with the same fields on the wire. */
export const WORKLOADS = {
  /** One non-streamed generation of 4 images at 1536x1024 (PNG). */
  nonStreamed: { model: MODEL, prompt: 'a lighthouse at dusk', n: 4, size: '1536x1024', quality: 'low' },
  /** One streamed generation at 1536x1024 with 3 partial images before the completed one. */
  streamed: { model: MODEL, prompt: 'a lighthouse at dusk', n: 1, size: '1536x1024', quality: 'low', partial_images: 3 },
} as const;

export type WorkloadName = keyof typeof WORKLOADS;
export const CONTENDER_NAMES = ['pictor', 'openai', 'undici'] as const;
export type ContenderName = (typeof CONTENDER_NAMES)[number];

/**
 * One way of calling the service. Each call resolves with the number of
 * base64 characters of image data it received, so a run can check that every
 * contender got the same thing.
 */
export interface Contender {
  name: ContenderName;
  run(workload: WorkloadName): Promise<number>;
}

export function makeContender(name: ContenderName, baseURL: string): Contender {
  switch (name) {
    case 'pictor':
      return pictorContender(baseURL);
    case 'openai':
      return openaiContender(baseURL);
    case 'undici':
      return undiciContender(baseURL);
  }
}

function pictorContender(baseURL: string): Contender {
  const client = new PictorClient({ baseURL, apiKey: DEV_API_KEY, maxRetries: 0 });
  return {
    name: 'pictor',
    async run(workload) {
      if (workload === 'nonStreamed') {
        const result = await client.generate(WORKLOADS.nonStreamed);
        return sumLengths(result.data);
      }
      let chars = 0;
      for await (const event of client.generateStream(WORKLOADS.streamed)) chars += event.b64_json.length;
      return chars;
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
        return sumLengths(result.data ?? []);
      }
      let chars = 0;
      const stream = await client.images.generate({ ...WORKLOADS.streamed, stream: true });
      for await (const event of stream) chars += event.b64_json.length;
      return chars;
    },
  };
}

/** The least a careful hand-written client does: one undici request, JSON.parse, a minimal SSE splitter. */
function undiciContender(baseURL: string): Contender {
  const url = `${baseURL}${PATHS.generations}`;
  const post = async (body: object, accept: string) => {
    const res = await request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_API_KEY}`, 'content-type': 'application/json', accept },
      body: JSON.stringify(body),
    });
    if (res.statusCode !== 200) {
      const text = await res.body.text();
      throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    }
    return res.body;
  };
  return {
    name: 'undici',
    async run(workload) {
      if (workload === 'nonStreamed') {
        const body = await post(WORKLOADS.nonStreamed, 'application/json');
        const json = JSON.parse(await body.text()) as { data: { b64_json: string }[] };
        return sumLengths(json.data);
      }
      const body = await post({ ...WORKLOADS.streamed, stream: true }, 'text/event-stream');
      let chars = 0;
      await readSse(body, (data) => {
        const event = JSON.parse(data) as { b64_json?: string; error?: unknown };
        if (event.error) throw new Error(`stream error event: ${JSON.stringify(event.error)}`);
        chars += event.b64_json?.length ?? 0;
      });
      return chars;
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

function sumLengths(data: readonly { b64_json?: string | undefined }[]): number {
  return data.reduce((sum, d) => sum + (d.b64_json?.length ?? 0), 0);
}
