import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import ts from 'typescript';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PictorImage } from '../../nodes/nodes/PictorImage/PictorImage.node.js';
import { limiterFor, throttleId } from '../../nodes/nodes/PictorImage/limiter-registry.js';
import { toNodeError } from '../../nodes/nodes/PictorImage/node-errors.js';
import { PictorClient } from '../../src/client/PictorClient.js';
import { makeAPIError } from '../../src/internal.js';
import { createEmulator, DEV_API_KEY, type Emulator, type EmulatorServer } from '../../src/emulator/index.js';
import { BACKGROUNDS, DEFAULTS, GenerationRequestSchema, LIMITS, MODELS, MODERATIONS, OUTPUT_FORMATS, QUALITIES, SIZES } from '../../src/spec/index.js';
import { ERROR_CODES, INTERNAL_ERROR_CODE, OUTPUT_NOT_WRITTEN_CODE } from '../../src/core/errors.js';
import { BUDGETS } from '../../src/spend/rules.js';
import { startCountingProxy } from './counting-proxy.js';
import { createHarness, itemWithFiles, type HarnessOptions } from './execute-harness.js';
import { NodeApiError, NodeHelpers, NodeOperationError, type INodeExecutionData, type INodeParameters, type INodeProperties } from './n8n-workflow.js';

let emulator: Emulator;
let server: EmulatorServer;
let credentials: { apiKey: string; baseUrl: string };

beforeAll(async () => {
  emulator = createEmulator();
  server = await emulator.listen({ port: 0 });
  credentials = { apiKey: DEV_API_KEY, baseUrl: server.url };
});
afterAll(async () => {
  await emulator.close();
});
beforeEach(() => {
  emulator.configure({ latencyMs: 0, imagesPerMinute: undefined });
  emulator.reset();
});

const node = new PictorImage();

/**
 * The hint the node gives of a failed answer of `status` that the client sent `attempts` times, under the item's Max
 * Retries, and why it stopped early when it did: the one describe-node-errors.test.ts checks the words of.
 */
function hintOf(status: number, sent: { attempts: number; maxRetries: number; stoppedFor?: 'service_wait' | 'backoff' }): string | null | undefined {
  const error = makeAPIError({ status, body: { error: { message: 'failed', type: 'server_error', code: status === 429 ? 'rate_limit_exceeded' : 'server_error' } } });
  error.attempts = sent.attempts;
  if (sent.stoppedFor) error.stoppedFor = sent.stoppedFor;
  return toNodeError({ name: 'Pictor Image', type: 'pictorImage', typeVersion: 1, position: [0, 0], parameters: {}, id: '1' }, error, 0, [], sent.maxRetries).description;
}

function run(parameters: HarnessOptions['parameters'], options: Partial<Omit<HarnessOptions, 'parameters' | 'nodeType'>> = {}) {
  return createHarness({ n8n: { NodeHelpers, NodeOperationError }, nodeType: node, parameters, items: [{ json: {} }], credentials, ...options }).run();
}

/** Runs and returns the error the node threw. */
async function failure(parameters: HarnessOptions['parameters'], options: Partial<Omit<HarnessOptions, 'parameters' | 'nodeType'>> = {}) {
  const error: unknown = await run(parameters, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof NodeOperationError) && !(error instanceof NodeApiError)) throw new Error(`expected an n8n node error, got ${String(error)}`);
  return error;
}

async function decoded(item: INodeExecutionData, field = 'data') {
  const binary = item.binary?.[field];
  if (!binary) throw new Error(`no binary field ${field}`);
  const bytes = Buffer.from(binary.data, 'base64');
  const meta = await sharp(bytes).metadata();
  return { binary, width: meta.width, height: meta.height, format: meta.format };
}

/** The requests of these prompts the emulator answered, in order, with their status (late answers of earlier tests are left out). */
const answered = (...prompts: string[]) =>
  emulator.requests.filter((r) => prompts.includes(String(r.fields?.prompt))).map((r) => [r.fields?.prompt, r.status]);

const png = (color: string) => sharp({ create: { width: 32, height: 32, channels: 4, background: color } }).png().toBuffer();
const jpeg = (color: string) => sharp({ create: { width: 32, height: 32, channels: 3, background: color } }).jpeg().toBuffer();

function property(name: string, within?: string): INodeProperties {
  const list = within ? (node.description.properties.find((p) => p.name === within)?.options as INodeProperties[]) : node.description.properties;
  const found = list.find((p) => p.name === name);
  if (!found) throw new Error(`no parameter ${name}`);
  return found;
}
const values = (p: INodeProperties) => (p.options as { value: unknown }[]).map((o) => o.value);

describe('the Pictor Image node description', () => {
  it('offers the spec choices, defaults and bounds taken from the core constants', () => {
    expect(values(property('size'))).toEqual([...SIZES]);
    expect(property('size').default).toBe(DEFAULTS.size);
    expect(values(property('quality'))).toEqual([...QUALITIES]);
    expect(property('quality').default).toBe(DEFAULTS.quality);
    expect(values(property('background'))).toEqual([...BACKGROUNDS]);
    expect(property('background').default).toBe(DEFAULTS.background);
    expect(values(property('outputFormat'))).toEqual([...OUTPUT_FORMATS]);
    expect(property('outputFormat').default).toBe(DEFAULTS.output_format);
    expect(property('n')).toMatchObject({ default: DEFAULTS.n, typeOptions: { minValue: LIMITS.nMin, maxValue: LIMITS.nMax } });
    expect(property('outputCompression', 'options').typeOptions).toMatchObject({ minValue: LIMITS.compressionMin, maxValue: LIMITS.compressionMax });
    expect(values(property('moderation', 'options'))).toEqual([...MODERATIONS]);
    expect(property('moderation', 'options').default).toBe(DEFAULTS.moderation);
    expect(values(property('model', 'options'))).toEqual([...MODELS]);
    expect(property('stream', 'options').default).toBe(DEFAULTS.stream);
  });

  it('explains the cross-field rules where the fields are set', () => {
    // The formats named for a transparent background are those the request schema accepts with it, and no other.
    const transparent = OUTPUT_FORMATS.filter((format) => GenerationRequestSchema.safeParse({ prompt: 'a fox', background: 'transparent', output_format: format }).success);
    expect(transparent).not.toContain('jpeg');
    const rule = `When Background is Transparent, Output Format must be ${transparent.join(' or ')}.`;
    expect(property('background').description).toContain(rule);
    expect(property('outputFormat').description).toContain(rule);
    expect((property('background').options as { value: string; description?: string }[]).find((o) => o.value === 'transparent')?.description).toBe(`Needs Output Format ${transparent.join(' or ')}`);
    expect(property('outputFormat').description).toMatch(/Output Compression applies only to Output Format jpeg or webp/);
    expect(property('outputCompression', 'options').description).toMatch(/jpeg or webp/);
  });

  it('is usable as a tool and asks for the Pictor API credential', () => {
    expect(node.description.usableAsTool).toBe(true);
    expect(node.description.credentials).toEqual([{ name: 'pictorApi', required: true }]);
  });
});

describe('generating with the Pictor Image node', () => {
  it('returns one item per image, each image in a binary field with its MIME type, extension and file name', async () => {
    const [out] = await run({ operation: 'generate', prompt: 'a red fox', n: 2, size: '1024x1536', outputFormat: 'webp' });
    expect(out).toHaveLength(2);
    for (const [index, item] of out!.entries()) {
      const image = await decoded(item);
      expect(image).toMatchObject({ width: 1024, height: 1536, format: 'webp' });
      expect(image.binary).toMatchObject({ mimeType: 'image/webp', fileExtension: 'webp' });
      expect(image.binary.fileName).toMatch(/^pictor-generate-\d+-1-\d\.webp$/);
      expect(item.json).toMatchObject({ prompt: 'a red fox', itemIndex: 0, imageIndex: index, size: '1024x1536', format: 'webp', imagesInRequest: 2 });
      expect(item.pairedItem).toEqual({ item: 0 });
    }
  });

  it('reports the size, quality, background, usage and the cost with its basis', async () => {
    const [out] = await run({ operation: 'generate', prompt: 'a lighthouse', quality: 'low', size: '1024x1024' });
    const json = out![0]!.json;
    expect(json).toMatchObject({ size: '1024x1024', quality: 'low', background: expect.any(String), format: 'png' });
    expect(json.usage).toMatchObject({ total_tokens: expect.any(Number), output_tokens: expect.any(Number) });
    expect(json.cost).toMatchObject({ usd: 0.00636, perImageUsd: 0.00636, basis: 'table' });
    // The README's words: the total and what each image cost, as on an item holding several images.
    expect((json.cost as { text: string }).text).toBe('$0.00636 (1 × $0.00636)');
  });

  it('marks the cost of an edit as an estimate and says why', async () => {
    const item = itemWithFiles({ data: { bytes: await png('#123456'), fileName: 'in.png', mimeType: 'image/png' } });
    const [out] = await run({ operation: 'edit', prompt: 'add a hat', quality: 'low' }, { items: [item] });
    expect(out![0]!.json.cost).toMatchObject({ basis: 'estimate', reason: expect.stringMatching(/edits/) });
  });

  it('sends every parameter to the service under the name the spec gives it', async () => {
    await run({
      operation: 'generate',
      prompt: 'a glass bird',
      n: 2,
      size: '1536x1024',
      quality: 'medium',
      background: 'transparent',
      outputFormat: 'webp',
      options: { outputCompression: 40, moderation: 'low', user: 'user-7', model: 'gpt-image-2' },
    });
    expect(emulator.requests[0]!.fields).toEqual({
      prompt: 'a glass bird',
      n: 2,
      size: '1536x1024',
      quality: 'medium',
      background: 'transparent',
      output_format: 'webp',
      output_compression: 40,
      moderation: 'low',
      user: 'user-7',
      model: 'gpt-image-2',
      stream: false,
    });
  });

  it('leaves unset options out, so the spec defaults apply', async () => {
    await run({ operation: 'generate', prompt: 'a plain square' });
    const fields = emulator.requests[0]!.fields!;
    expect(Object.keys(fields)).not.toContain('output_compression');
    expect(Object.keys(fields)).not.toContain('user');
    expect(emulator.requests[0]!.parsed).toMatchObject({
      n: DEFAULTS.n,
      size: DEFAULTS.size,
      quality: DEFAULTS.quality,
      background: DEFAULTS.background,
      output_format: DEFAULTS.output_format,
      moderation: DEFAULTS.moderation,
    });
  });

  it('takes each item’s own values, as expressions would give them', async () => {
    const items = [{ json: { p: 'one' } }, { json: { p: 'two' } }];
    const [out] = await run((i) => ({ operation: 'generate', prompt: `picture ${i}`, size: SIZES[i]! }), { items });
    expect(out!.map((item) => [item.json.prompt, item.json.size, item.pairedItem])).toEqual([
      ['picture 0', SIZES[0], { item: 0 }],
      ['picture 1', SIZES[1], { item: 1 }],
    ]);
  });

  it('puts all images of one request on one item when asked', async () => {
    const [out] = await run({ operation: 'generate', prompt: 'two cats', n: 2, quality: 'low', size: '1024x1024', options: { allImagesOnOneItem: true, binaryPropertyName: 'img' } });
    expect(out).toHaveLength(1);
    expect(Object.keys(out![0]!.binary!)).toEqual(['img_0', 'img_1']);
    expect(out![0]!.json.images).toHaveLength(2);
    // The README's words for an item holding all of a request's images.
    expect(out![0]!.json.cost).toMatchObject({ usd: 0.01272, perImageUsd: 0.00636, basis: 'table', text: '$0.01272 (2 × $0.00636)' });
    expect((await decoded(out![0]!, 'img_1')).format).toBe('png');
    expect(out![0]!.pairedItem).toEqual({ item: 0 });
  });

  it('writes the image to the binary field named in Put Output in Field', async () => {
    const [out] = await run({ operation: 'generate', prompt: 'a kite', outputFormat: 'jpeg', options: { binaryPropertyName: 'picture' } });
    expect(Object.keys(out![0]!.binary!)).toEqual(['picture']);
    expect(await decoded(out![0]!, 'picture')).toMatchObject({ format: 'jpeg' });
    expect(out![0]!.binary!.picture).toMatchObject({ mimeType: 'image/jpeg', fileExtension: 'jpg' });
  });

  it('streams the request when Stream is on and returns the same items', async () => {
    const [out] = await run({ operation: 'generate', prompt: 'a streamed moon', n: 2, options: { stream: true } });
    expect(emulator.requests[0]!.stream).toBe(true);
    expect(out).toHaveLength(2);
    expect(await decoded(out![1]!)).toMatchObject({ width: 1024, height: 1024, format: 'png' });
  });

  it('waits out a rate-limit answer and the item still succeeds', async () => {
    emulator.injectFault('rate_limited', { count: 1, retryAfterMs: 50 });
    const [out] = await run({ operation: 'generate', prompt: 'patience', options: { imagesPerMinute: 500 } });
    expect(out).toHaveLength(1);
    expect(emulator.stats().rateLimited).toBe(1);
    expect(emulator.stats().imagesGenerated).toBe(1);
  });
});

describe('an answer that mixes formats', () => {
  /** A service that answers every request with a PNG then a JPEG (as JSON, or as SSE to a streamed request), whatever format was asked for. */
  async function mixedService(): Promise<{ url: string; close: () => Promise<void> }> {
    const images = [(await png('#ff0000')).toString('base64'), (await jpeg('#0000ff')).toString('base64')];
    const usage = { total_tokens: 3, input_tokens: 1, output_tokens: 2 };
    const service: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const streamed = (JSON.parse(Buffer.concat(chunks).toString()) as { stream?: boolean }).stream === true;
        if (!streamed) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ created: 1, data: images.map((b64_json) => ({ b64_json })), size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png', usage }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const b64_json of images) {
          const event = { type: 'image_generation.completed', b64_json, created_at: 1, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png', usage };
          res.write(`event: image_generation.completed\ndata: ${JSON.stringify(event)}\n\n`);
        }
        res.end();
      });
    });
    service.listen(0, '127.0.0.1');
    await once(service, 'listening');
    const { port } = service.address() as { port: number };
    return {
      url: `http://127.0.0.1:${port}`,
      close: () => {
        service.closeAllConnections();
        return new Promise((resolve) => service.close(() => resolve()));
      },
    };
  }

  it.each([false, true])('gives a PNG and a JPEG of one answer each its own MIME type, extension and format (stream %s)', async (stream) => {
    const service = await mixedService();
    try {
      const [out] = await run({ operation: 'generate', prompt: 'two of a kind', n: 2, quality: 'low', options: { stream } }, { credentials: { apiKey: DEV_API_KEY, baseUrl: service.url } });
      expect(out).toHaveLength(2);
      expect(await decoded(out![0]!)).toMatchObject({ format: 'png', binary: { mimeType: 'image/png', fileExtension: 'png', fileName: expect.stringMatching(/-1\.png$/) } });
      expect(await decoded(out![1]!)).toMatchObject({ format: 'jpeg', binary: { mimeType: 'image/jpeg', fileExtension: 'jpg', fileName: expect.stringMatching(/-2\.jpg$/) } });
      expect(out!.map((item) => item.json.format)).toEqual(['png', 'jpeg']);
    } finally {
      await service.close();
    }
  });

  it('names and types each image of a mixed answer on its own binary field when all are on one item', async () => {
    const service = await mixedService();
    try {
      const [out] = await run(
        { operation: 'generate', prompt: 'two on one', n: 2, quality: 'low', options: { allImagesOnOneItem: true } },
        { credentials: { apiKey: DEV_API_KEY, baseUrl: service.url } },
      );
      expect(out![0]!.binary).toMatchObject({ data_0: { mimeType: 'image/png', fileExtension: 'png' }, data_1: { mimeType: 'image/jpeg', fileExtension: 'jpg' } });
      expect(out![0]!.json).toMatchObject({ format: 'png', images: [{ format: 'png' }, { format: 'jpeg', fileName: expect.stringMatching(/\.jpg$/) }] });
    } finally {
      await service.close();
    }
  });
});

describe('retries of the Pictor Image node', () => {
  it('gives up after Max Retries rate-limit answers and says how to pace', async () => {
    emulator.injectFault('rate_limited', { count: 3, retryAfterMs: 20 });
    const error = await failure({ operation: 'generate', prompt: 'impatient', options: { maxRetries: 1 } });
    expect(error).toBeInstanceOf(NodeApiError);
    expect((error as NodeApiError).httpCode).toBe('429');
    expect(error.context).toMatchObject({ itemIndex: 0, code: 'rate_limited' });
    expect(error.description).toMatch(/Images per Minute/);
    expect(answered('impatient')).toEqual([
      ['impatient', 429],
      ['impatient', 429],
    ]);
  });

  // `service_unavailable` is a 503 (code server_error) that names its wait, kept tiny here so the retry waits on nothing.
  // What the node says of each is checked in describe-node-errors.test.ts; here, that it is the hint of that many sends.
  it.each([
    [0, 'service_unavailable', 'server_error', 503],
    [1, 'service_unavailable', 'server_error', 503],
    [0, 'rate_limited', 'rate_limited', 429],
  ] as const)('with Max Retries %i, describes a %s answer by how many times it was sent', async (maxRetries, fault, code, status) => {
    emulator.injectFault(fault, { count: maxRetries + 1, retryAfterMs: 1 });
    const error = await failure({ operation: 'generate', prompt: 'a failing fox', options: { maxRetries } });
    expect(error.context).toMatchObject({ itemIndex: 0, code });
    expect(error.description).toBe(hintOf(status, { attempts: maxRetries + 1, maxRetries }));
    expect(answered('a failing fox')).toHaveLength(maxRetries + 1);
  });

  it.each([
    ['service_unavailable', 'server_error', 503],
    ['rate_limited', 'rate_limited', 429],
  ] as const)('counts the sends a %s answer had when the wait it asked for outlasts the request', async (fault, code, status) => {
    // A service of its own: a 429 pauses the limiter of its credential, which the other tests share.
    const service = createEmulator();
    const own = await service.listen({ port: 0 });
    try {
      service.configure({ latencyMs: 0, imagesPerMinute: undefined });
      service.injectFault(fault, { count: 3, retryAfterMs: 3_600_000 });
      const error = await failure({ operation: 'generate', prompt: 'a fox told to wait', options: { maxRetries: 2 } }, { credentials: { apiKey: DEV_API_KEY, baseUrl: own.url } });
      expect(error.context).toMatchObject({ itemIndex: 0, code });
      expect(error.description).toBe(hintOf(status, { attempts: 1, maxRetries: 2, stoppedFor: 'service_wait' }));
      expect(service.requests).toHaveLength(1);
    } finally {
      await service.close();
    }
  });
});

describe('the hint of a failure the client stopped retrying before Max Retries ran out', () => {
  // The node has no timeout of its own; the client's error is the node's input here. A 500 names no wait, so the first
  // retry's wait is the client's own backoff (375–500 ms), longer than a 370 ms timeout: it stops at once.
  it('does not blame the service for a wait the client chose', async () => {
    emulator.injectFault('server_error', { count: 3 });
    const error = await new PictorClient({ baseURL: server.url, apiKey: DEV_API_KEY, maxRetries: 2, timeoutMs: 370 }).generate({ prompt: 'x' }).catch((e: unknown) => e);
    const nodeError = toNodeError({ name: 'Pictor Image', type: 'pictorImage', typeVersion: 1, position: [0, 0], parameters: {}, id: '1' }, error, 0, [], 2);
    // What the node says of a wait the client chose is checked in describe-node-errors.test.ts; here, that it is that one.
    expect(error).toMatchObject({ code: 'server_error', attempts: 1, stoppedFor: 'backoff' });
    expect(nodeError.context).toMatchObject({ code: 'server_error' });
  });
});

describe('editing with the Pictor Image node', () => {
  it('sends the images of the named binary fields, in order, as image[] parts of their real type', async () => {
    const item = itemWithFiles({
      photo: { bytes: await png('#ff0000'), fileName: 'photo.png', mimeType: 'image/png' },
      logo: { bytes: await jpeg('#00ff00'), fileName: 'logo.jpg', mimeType: 'image/jpeg' },
    });
    const [out] = await run({ operation: 'edit', prompt: 'put the logo on the photo', inputBinaryFields: 'photo, logo', size: '1024x1024' }, { items: [item] });
    const parts = emulator.requests[0]!.images;
    expect(parts.map((p) => [p.field, p.filename, p.contentType])).toEqual([
      ['image[]', 'photo.png', 'image/png'],
      ['image[]', 'logo.jpg', 'image/jpeg'],
    ]);
    expect(out).toHaveLength(1);
    expect(out![0]!.json).toMatchObject({ operation: 'edit', prompt: 'put the logo on the photo', itemIndex: 0 });
    expect(await decoded(out![0]!)).toMatchObject({ width: 1024, height: 1024, format: 'png' });
  });

  it('refuses a binary field that is not an image by its content, naming the field, before sending', async () => {
    const item = itemWithFiles({ doc: { bytes: Buffer.from('not an image at all'), fileName: 'fake.png', mimeType: 'image/png' } });
    const error = await failure({ operation: 'edit', prompt: 'edit it', inputBinaryFields: 'doc' }, { items: [item] });
    expect(error).toBeInstanceOf(NodeOperationError);
    expect(error.message).toMatch(/^Input Binary Fields: binary field "doc": .*not a PNG, JPEG or WebP image/);
    expect(error.context.itemIndex).toBe(0);
    expect(emulator.stats().requests).toBe(0);
  });

  it('refuses a truncated image in a binary field, naming the field, before sending', async () => {
    const item = itemWithFiles({ photo: { bytes: (await png('#ff0000')).subarray(0, 40), fileName: 'photo.png', mimeType: 'image/png' } });
    const error = await failure({ operation: 'edit', prompt: 'edit it', inputBinaryFields: 'photo' }, { items: [item] });
    expect(error.message).toMatch(/^Input Binary Fields: binary field "photo": image "photo\.png" is a damaged PNG image/);
    expect(error.context).toMatchObject({ itemIndex: 0, parameter: 'image[0]', code: 'validation_error' });
    expect(emulator.stats().requests).toBe(0);
  });

  it('names a missing binary field and the fields the item has', async () => {
    const item = itemWithFiles({ photo: { bytes: await png('#000000'), fileName: 'p.png', mimeType: 'image/png' } });
    const error = await failure({ operation: 'edit', prompt: 'edit it', inputBinaryFields: 'photo, logo' }, { items: [item] });
    expect(error.message).toBe('Input Binary Fields: the input item has no binary field "logo"');
    expect(error.description).toBe('Binary fields on this item: photo.');
  });

  it('gives a missing binary field’s item code validation_error and the field as the request names it, with Continue and with the error output', async () => {
    const item = itemWithFiles({ photo: { bytes: await png('#000000'), fileName: 'p.png', mimeType: 'image/png' } });
    for (const onError of ['continueRegularOutput', 'continueErrorOutput'] as const) {
      const [out] = await run({ operation: 'edit', prompt: 'edit it', inputBinaryFields: 'photo, nope' }, { items: [item], onError });
      expect(out![0]!.json, onError).toMatchObject({ code: 'validation_error', field: 'image[1]', error: 'Input Binary Fields: the input item has no binary field "nope"', itemIndex: 0 });
    }
    expect(emulator.stats().requests).toBe(0);
  });

  it('gives any input error of the node that has no code of its own code validation_error', async () => {
    const [out] = await run({ operation: 'upscale', prompt: 'x' }, { onError: 'continueRegularOutput' });
    expect(out![0]!.json).toMatchObject({ code: 'validation_error', error: expect.stringMatching(/^Operation: "upscale" is not one of/), itemIndex: 0 });
  });

  it(`refuses more than ${LIMITS.editImagesMax} input images`, async () => {
    const bytes = await png('#ffffff');
    const files = Object.fromEntries(Array.from({ length: LIMITS.editImagesMax + 1 }, (_, i) => [`f${i}`, { bytes, fileName: `f${i}.png`, mimeType: 'image/png' }]));
    const error = await failure(
      { operation: 'edit', prompt: 'collage', inputBinaryFields: Object.keys(files).join(',') },
      { items: [itemWithFiles(files)] },
    );
    expect(error.message).toMatch(new RegExp(`^Input Binary Fields: .*at most ${LIMITS.editImagesMax} images`));
    expect(emulator.stats().requests).toBe(0);
  });
});

describe('errors of the Pictor Image node', () => {
  it('refuses a transparent background with JPEG, naming Output Format and the item, before anything is sent', async () => {
    const items = [{ json: {} }, { json: {} }];
    const error = await failure((i) => ({ operation: 'generate', prompt: 'a logo', background: 'transparent', outputFormat: i === 1 ? 'jpeg' : 'png' }), { items });
    expect(error).toBeInstanceOf(NodeOperationError);
    expect(error.message).toMatch(/^Output Format: output_format must be png or webp when background is transparent/);
    expect(error.context).toMatchObject({ itemIndex: 1, parameter: 'output_format', code: 'validation_error' });
    expect(emulator.stats().requests).toBe(0);
  });

  it('refuses Output Compression with PNG, naming Output Compression', async () => {
    const error = await failure({ operation: 'generate', prompt: 'a logo', outputFormat: 'png', options: { outputCompression: 50 } });
    expect(error.message).toMatch(/^Output Compression: output_compression applies only to output_format jpeg or webp/);
    expect(error.context.itemIndex).toBe(0);
  });

  it('refuses a number of images out of bounds, saying what is accepted', async () => {
    const error = await failure({ operation: 'generate', prompt: 'too many', n: LIMITS.nMax + 1 });
    expect(error.message).toMatch(/^Number of Images: n must be an integer from 1 to 10/);
    expect(error.description).toMatch(/accepts an integer from 1 to 10/);
  });

  it('fails the node with the item index of a request the service refused', async () => {
    const items = [{ json: {} }, { json: {} }];
    const error = await failure((i) => ({ operation: 'generate', prompt: i === 1 ? 'something forbidden' : 'a calm sea' }), { items });
    expect(error).toBeInstanceOf(NodeApiError);
    expect(error.context).toMatchObject({ itemIndex: 1, code: 'moderation_blocked' });
    expect((error as NodeApiError).httpCode).toBe('400');
  });

  it('says the key was refused when the credential holds a bad API key', async () => {
    const error = await failure({ operation: 'generate', prompt: 'a calm sea' }, { credentials: { ...credentials, apiKey: 'not-the-key' } });
    expect(error).toBeInstanceOf(NodeApiError);
    expect((error as NodeApiError).httpCode).toBe('401');
    expect(error.context.code).toBe('authentication_failed');
    expect(error.description).toMatch(/API key/);
    expect(JSON.stringify(error)).not.toContain('not-the-key');
  });

  it('sends a key pasted with a space or a line break around it as the key itself', async () => {
    const [out] = await run({ operation: 'generate', prompt: 'a calm sea', quality: 'low' }, { credentials: { ...credentials, apiKey: ` ${credentials.apiKey}\n` } });
    expect(out).toHaveLength(1);
    expect(out![0]!.json).toMatchObject({ prompt: 'a calm sea', imageIndex: 0 });
  });

  it('names the credential field when the API key has a space or a line break inside it', async () => {
    const error = await failure({ operation: 'generate', prompt: 'a calm sea' }, { credentials: { ...credentials, apiKey: 'sk-abc def' } });
    expect(error.context.code).toBe('validation_error');
    expect(error.message).toMatch(/^Pictor API credential: the API Key/);
    expect(JSON.stringify(error)).not.toContain('sk-abc def');
  });

  it('names the credential field when the Base URL is not set', async () => {
    const error = await failure({ operation: 'generate', prompt: 'a calm sea' }, { credentials: { ...credentials, baseUrl: '' } });
    expect(error.message).toMatch(/^Pictor API credential: the Base URL is empty/);
    expect(error.context.itemIndex).toBe(0);
  });

  it('with Continue On Fail, puts each error on its own item and returns the others in input order', async () => {
    const items = [{ json: {} }, { json: {} }, { json: {} }, { json: {} }];
    const params = (i: number): INodeParameters =>
      [
        { operation: 'generate', prompt: 'first' },
        { operation: 'generate', prompt: 'second', n: 0 },
        { operation: 'generate', prompt: 'a forbidden third' },
        { operation: 'generate', prompt: 'fourth', n: 2 },
      ][i]!;
    const [out] = await run(params, { items, continueOnFail: true });
    expect(out!.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }, { item: 3 }, { item: 3 }]);
    expect(out![0]!.binary?.data).toBeDefined();
    expect(out![1]!.json).toMatchObject({ code: 'validation_error', field: 'n', error: expect.stringMatching(/^Number of Images:/) });
    expect(out![1]!.binary).toBeUndefined();
    expect(out![2]!.json).toMatchObject({ code: 'moderation_blocked', description: expect.stringMatching(/never retried/) });
    expect(out![3]!.json.imageIndex).toBe(0);
    expect(out![4]!.json.imageIndex).toBe(1);
    expect(answered('first', 'second', 'a forbidden third', 'fourth')).toEqual([
      ['first', 200],
      ['a forbidden third', 400],
      ['fourth', 200],
    ]);
  });

  it('with Continue, gives a failed item its fields in plain JSON and no error property, which n8n would reduce to { error }', async () => {
    const [out] = await run({ operation: 'generate', prompt: 'a forbidden fox' }, { onError: 'continueRegularOutput' });
    expect(out![0]).toEqual({
      json: { error: expect.any(String), code: 'moderation_blocked', description: expect.stringMatching(/never retried/), itemIndex: 0 },
      pairedItem: { item: 0 },
    });
    expect('error' in out![0]!).toBe(false);
  });

  it('with Continue (using error output), marks a failed item for the error output in a way a spread copy of it leaves behind', async () => {
    const [out] = await run({ operation: 'generate', prompt: 'x', n: 0 }, { onError: 'continueErrorOutput' });
    const item = out![0]!;
    expect(item.error).toBeInstanceOf(NodeOperationError);
    const copy = { ...item, json: { fromInput: true, ...item.json } };
    expect('error' in copy).toBe(false);
    expect(copy).toEqual({
      json: { fromInput: true, error: expect.stringMatching(/^Number of Images:/), code: 'validation_error', field: 'n', itemIndex: 0, description: expect.any(String) },
      pairedItem: { item: 0 },
    });
  });

  it('sends nothing when the execution was cancelled', async () => {
    const cancel = new AbortController();
    cancel.abort();
    const error = await failure({ operation: 'generate', prompt: 'never' }, { cancelSignal: cancel.signal });
    expect(error.context.code).toBe('aborted');
    expect(emulator.stats().requests).toBe(0);
  });
});

/** A service that answers every request with `status` and the JSON `body`. */
async function answeringService(status: number, body: unknown): Promise<{ url: string; close: () => Promise<void> }> {
  const service: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  service.listen(0, '127.0.0.1');
  await once(service, 'listening');
  const { port } = service.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      service.closeAllConnections();
      return new Promise((resolve) => service.close(() => resolve()));
    },
  };
}

describe('the codes of a failed item of the Pictor Image node', () => {
  it('names the field the service rejected in field, taken from its param', async () => {
    const service = await answeringService(400, { error: { message: 'Invalid prompt', type: 'invalid_request_error', param: 'prompt', code: null } });
    try {
      const [out] = await run({ operation: 'generate', prompt: 'a fox' }, { credentials: { ...credentials, baseUrl: service.url }, onError: 'continueRegularOutput' });
      expect(out![0]!.json).toMatchObject({ code: 'bad_request', field: 'prompt', itemIndex: 0 });
    } finally {
      await service.close();
    }
  });

  it('gives an answer the spec does not name (418) code api_error', async () => {
    const service = await answeringService(418, { error: { message: 'I am a teapot', type: 'teapot', param: null, code: null } });
    try {
      const [out] = await run({ operation: 'generate', prompt: 'a fox' }, { credentials: { ...credentials, baseUrl: service.url }, onError: 'continueRegularOutput' });
      expect(out![0]!.json).toMatchObject({ code: 'api_error', itemIndex: 0 });
      expect(out![0]!.json).not.toHaveProperty('field');
    } finally {
      await service.close();
    }
  });

  it('lists in nodes/README.md every code a failed item can have, and no other', () => {
    // The node keeps any project error's own code (errorCodeOf): every code of the core's error tree, those the core's
    // error classes declare (the account caps', the ledger's), and the node's own.
    const canHave = new Set<string>([...ERROR_CODES, ...coreErrorClassCodes(), INTERNAL_ERROR_CODE, OUTPUT_NOT_WRITTEN_CODE]);
    // Each entry's code is its leading token: what the brackets after it name is not one.
    let row = readFileSync(join(import.meta.dirname, '..', '..', 'nodes', 'README.md'), 'utf8')
      .split('\n')
      .find((line) => line.startsWith('| `code` |'))
      ?.split('|')[2] ?? '';
    while (/\([^()]*\)/.test(row)) row = row.replace(/\([^()]*\)/g, '');
    const listed = [...row.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!);
    expect([...new Set(listed)].sort()).toEqual([...canHave].sort());
  });

  it('reads the code of every error class of the core the node runs', () => {
    // The README test above takes its codes from these classes: one whose code the scan cannot read fails here, naming it.
    const codes = coreErrorClassCodes();
    expect(codes).toEqual(expect.arrayContaining(['ledger_busy', 'budget_account_daily']));
    expect(codes.filter((code) => !/^[a-z][a-z0-9_]*$/.test(code))).toEqual([]);
  });

  // However a class's code is written after `extends PictorError<`, the scan above reads it or fails naming it: a code cannot slip past.
  it.each([
    ['an extends on one line', "class A extends PictorError<'a_code'> {}", ['a_code']],
    ['no space before the brace', "class A extends PictorError<'a_code'>{}", ['a_code']],
    ['a union over several lines', "class A extends PictorError<\n  | 'a_code'\n  | 'b_code'\n> {}", ['a_code', 'b_code']],
    ['a type the scan knows', 'class A extends PictorError<BudgetCode> {}', ['budget_code']],
    ['a type the scan does not know', 'class A extends PictorError<OtherCode> {}', ['a.ts: PictorError<OtherCode>']],
    ['an extends with an implements', "class A extends PictorError<'a_code'> implements B {}", ['a_code']],
    ['a type alias and a type guard, which make no class', "type E = PictorError<PictorErrorCode>;\nconst is = (e: unknown): e is PictorError<'a_code'> => true;", []],
    ['an extends it cannot read', "// class A extends PictorError<'a_code'>\nclass A {}", ['a.ts: an extends PictorError< the scan cannot read']],
  ])('reads the code of %s', (_, text, codes) => {
    expect(errorClassCodes('a.ts', text, { BudgetCode: ['budget_code'] })).toEqual(codes);
  });
});

/**
 * The codes the core's error classes the node can meet declare (not the CLI's, nor the emulator's, which its server
 * answers with): the one place those codes are written. A cap's error names its cap; the node has only the account's.
 */
function coreErrorClassCodes(): string[] {
  const accountCaps = BUDGETS.filter((budget) => budget.owner === 'account').map((budget) => budget.code);
  const src = join(import.meta.dirname, '..', '..', 'src');
  const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !/^(cli|emulator)[/\\]/.test(file));
  return files.flatMap((file) => errorClassCodes(file, readFileSync(join(src, file), 'utf8'), { BudgetCode: accountCaps }));
}

/**
 * The codes `text` gives `PictorError` as its type argument (a string literal or a union of them, or a type named in
 * `typeCodes`), each in order; one it cannot read is `<file>: <what>`, so a test fails naming it.
 */
function errorClassCodes(file: string, text: string, typeCodes: Record<string, readonly string[]>): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const codes: string[] = [];
  let read = 0;
  const visit = (node: ts.Node) => {
    // Only a class's `extends PictorError<…>` gives a code: a type alias or a type guard naming `PictorError<…>` does not.
    const extendsIt = ts.isExpressionWithTypeArguments(node) && ts.isHeritageClause(node.parent) && node.parent.token === ts.SyntaxKind.ExtendsKeyword;
    if (extendsIt && node.expression.getText(source) === 'PictorError' && node.typeArguments?.length) {
      read++;
      const [argument] = node.typeArguments;
      const parts = ts.isUnionTypeNode(argument!) ? argument.types : [argument!];
      const literals = parts.map((part) => (ts.isLiteralTypeNode(part) && ts.isStringLiteral(part.literal) ? part.literal.text : undefined));
      const named = ts.isTypeReferenceNode(argument!) ? typeCodes[argument.typeName.getText(source)] : undefined;
      if (literals.every((literal) => literal !== undefined)) codes.push(...(literals as string[]));
      else if (named) codes.push(...named);
      else codes.push(`${file}: ${node.getText(source)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  // Every `extends PictorError<` of the text must be one read above: one the walk does not know fails, naming its file.
  const written = [...text.matchAll(/\bextends\s+PictorError\s*</g)].length;
  if (written !== read) codes.push(`${file}: an extends PictorError< the scan cannot read`);
  return codes;
}

describe('throttling of the Pictor Image node', () => {
  it('shares one limiter per credential and limits across executions', async () => {
    const key = { baseURL: server.url, apiKey: DEV_API_KEY, imagesPerMinute: 60, maxConcurrent: 2 };
    const limiter = await limiterFor(key);
    expect(await limiterFor({ ...key, baseURL: `${server.url}/v1/` })).toBe(limiter);
    expect(await limiterFor({ ...key, maxConcurrent: 3 })).not.toBe(limiter);
    expect(await limiterFor({ ...key, apiKey: 'another-key' })).not.toBe(limiter);
    expect(throttleId(key)).not.toContain(DEV_API_KEY);
  });

  it('keeps two executions at once within Max Concurrent Requests', async () => {
    emulator.configure({ latencyMs: 40 });
    const proxy = await startCountingProxy(server.url);
    try {
      const items = Array.from({ length: 4 }, () => ({ json: {} }));
      const parameters = { operation: 'generate', prompt: 'shared', options: { maxConcurrent: 2 } };
      const proxied = { apiKey: DEV_API_KEY, baseUrl: proxy.url };
      const [a, b] = await Promise.all([run(parameters, { items, credentials: proxied }), run(parameters, { items, credentials: proxied })]);
      expect(a![0]).toHaveLength(4);
      expect(b![0]).toHaveLength(4);
      expect(proxy.peak()).toBeLessThanOrEqual(2);
      expect(answered('shared')).toEqual(Array.from({ length: 8 }, () => ['shared', 200]));
    } finally {
      await proxy.close();
    }
  });
});
