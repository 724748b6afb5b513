import { crc32 } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/spec/index.js';
import { createEmulator } from '../../src/emulator/index.js';
import { AUTH, edit, errorOf, generate, solidImage } from './emulator-helpers.js';

const emulator = createEmulator();
afterAll(() => emulator.close());

const valid = { model: 'gpt-image-2', prompt: 'a lighthouse at dusk', size: '1024x1024', quality: 'low' };

async function expectRejected(body: unknown, param: string, code = 'invalid_value') {
  const response = await generate(emulator, body);
  expect(response.status).toBe(400);
  expect(response.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
  const error = await errorOf(response);
  expect(error).toMatchObject({ type: 'invalid_request_error', param, code });
  expect(error.message.length).toBeGreaterThan(0);
  return error;
}

describe('generation requests are validated with the spec schema', () => {
  it.each([
    ['model is not gpt-image-2', { model: 'dall-e-3' }, 'model'],
    ['prompt is empty', { prompt: '   ' }, 'prompt'],
    ['prompt is not text', { prompt: 42 }, 'prompt'],
    ['prompt is longer than 32000 characters', { prompt: 'x'.repeat(LIMITS.promptMaxChars + 1) }, 'prompt'],
    ['n is 0', { n: 0 }, 'n'],
    ['n is 11', { n: 11 }, 'n'],
    ['n is not an integer', { n: 1.5 }, 'n'],
    ['size is not one of the three sizes', { size: '512x512' }, 'size'],
    ['quality is unknown', { quality: 'ultra' }, 'quality'],
    ['background is unknown', { background: 'checkered' }, 'background'],
    ['output_format is unknown', { output_format: 'gif' }, 'output_format'],
    ['output_compression is above 100', { output_format: 'jpeg', output_compression: 101 }, 'output_compression'],
    ['output_compression is below 0', { output_format: 'webp', output_compression: -1 }, 'output_compression'],
    ['output_compression comes with png', { output_format: 'png', output_compression: 50 }, 'output_compression'],
    ['moderation is unknown', { moderation: 'strict' }, 'moderation'],
    ['stream is not a boolean', { stream: 'yes' }, 'stream'],
    ['user is empty', { user: '' }, 'user'],
    ['partial_images is 4', { stream: true, partial_images: 4 }, 'partial_images'],
    ['background transparent comes with jpeg', { background: 'transparent', output_format: 'jpeg' }, 'output_format'],
  ])('answers 400 naming the field when %s', async (_name, patch, param) => {
    await expectRejected({ ...valid, ...patch }, param);
  });

  it('answers 400 missing_required_parameter when the prompt is left out', async () => {
    await expectRejected({ model: 'gpt-image-2' }, 'prompt', 'missing_required_parameter');
  });

  it('answers 400 unknown_parameter naming a field the spec does not have', async () => {
    await expectRejected({ ...valid, style: 'vivid' }, 'style', 'unknown_parameter');
  });

  it('refuses response_format by name, even when other fields are wrong too', async () => {
    const error = await expectRejected({ ...valid, size: '5x5', response_format: 'url' }, 'response_format', 'unknown_parameter');
    expect(error.message).toMatch(/b64_json/);
  });

  it('answers 400 invalid_json for a body that is not JSON', async () => {
    const response = await generate(emulator, '{"prompt": ');
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ type: 'invalid_request_error', param: null, code: 'invalid_json' });
  });

  it('answers 400 for a JSON body that is not an object', async () => {
    const response = await generate(emulator, '["a prompt"]');
    expect(response.status).toBe(400);
    expect((await errorOf(response)).code).toBe('invalid_json');
  });

  it('accepts a minimal request and fills in the spec defaults', async () => {
    const response = await generate(emulator, { prompt: 'a cat' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ size: '1024x1024', output_format: 'png', quality: 'medium', background: 'opaque' });
    expect(emulator.requests.at(-1)?.parsed).toMatchObject({ n: 1, size: '1024x1024', quality: 'auto', stream: false });
  });
});

describe('edit requests are validated with the spec schema', () => {
  it('answers 400 naming image when no image part is sent', async () => {
    const response = await edit(emulator, [], { prompt: 'add a hat' });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ param: 'image', code: 'missing_required_parameter' });
  });

  it('answers 400 naming image when more than 16 images are sent', async () => {
    const png = await solidImage('#336699', { width: 8, height: 8 });
    const files = Array.from({ length: LIMITS.editImagesMax + 1 }, () => ({ bytes: png }));
    const response = await edit(emulator, files, { prompt: 'a collage' });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ param: 'image', code: 'invalid_value' });
  });

  it('answers 400 unsupported_file_mimetype for an application/octet-stream part', async () => {
    const png = await solidImage('#336699');
    const response = await edit(emulator, [{ bytes: png, type: 'application/octet-stream', name: 'in.bin' }], { prompt: 'x' });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ type: 'invalid_request_error', param: 'image[0]', code: 'unsupported_file_mimetype' });
  });

  it('answers 400 naming the part whose bytes are not an image, whatever its content type says', async () => {
    const png = await solidImage('#336699');
    const files = [{ bytes: png }, { bytes: new TextEncoder().encode('definitely not a picture'), type: 'image/png' }];
    const response = await edit(emulator, files, { prompt: 'x' });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ param: 'image[1]', code: 'invalid_value' });
  });

  it('answers 400 naming image when a part is a whole PNG whose header cannot be decoded', async () => {
    const broken = Buffer.from(await solidImage('#336699'));
    broken[24] = 3; // IHDR bit depth: no PNG has 3 bits per sample
    const response = await edit(emulator, [{ bytes: broken }], { prompt: 'x' });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).code).toBe('invalid_image_file');
  });

  it.each([false, true])('answers 400 invalid_image_file for a whole PNG whose image data is garbage (stream: %s)', async (stream) => {
    const garbled = withImageData(Buffer.from(await solidImage('#336699')), Buffer.alloc(64, 0x5a));
    const response = await edit(emulator, [{ bytes: garbled }], { prompt: 'x', stream: String(stream) });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ type: 'invalid_request_error', param: 'image[0]', code: 'invalid_image_file' });
  });

  it('converts text parts with fromFormFields, so a bad number is reported under its own name', async () => {
    const png = await solidImage('#336699');
    const response = await edit(emulator, [{ bytes: png }], { prompt: 'x', n: 'three' });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ param: 'n', code: 'invalid_value' });
  });

  it.each([
    ['size', { size: '256x256' }],
    ['output_format', { background: 'transparent', output_format: 'jpeg' }],
    ['output_compression', { output_compression: '80' }],
    ['partial_images', { stream: 'true', partial_images: '9' }],
    ['stream', { stream: 'maybe' }],
    ['mask', { mask: 'not supported' }],
  ])('answers 400 naming %s for a bad edit field', async (param, fields) => {
    const png = await solidImage('#336699');
    const response = await edit(emulator, [{ bytes: png }], { prompt: 'x', ...fields });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).param).toBe(param);
  });

  it('refuses response_format on edits too', async () => {
    const png = await solidImage('#336699');
    const response = await edit(emulator, [{ bytes: png }], { prompt: 'x', response_format: 'b64_json' });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).param).toBe('response_format');
  });

  it('accepts a single file under the field name image', async () => {
    const png = await solidImage('#336699');
    const response = await edit(emulator, [{ bytes: png, field: 'image' }], { prompt: 'x', quality: 'low' });
    expect(response.status).toBe(200);
    const record = emulator.requests.at(-1)!;
    expect(record.images).toHaveLength(1);
    expect(record.images[0]).toMatchObject({ field: 'image', filename: 'input.png', contentType: 'image/png' });
    expect(record.images[0]!.size).toBe(png.length);
  });

  it('answers 413 naming the part that is larger than maxImageBytes', async () => {
    const small = createEmulator({ maxImageBytes: 300 });
    const big = await solidImage('#123456', { width: 300, height: 300, format: 'jpeg' });
    expect(big.length).toBeGreaterThan(300);
    const ok = await solidImage('#123456', { width: 4, height: 4 });
    const response = await edit(small, [{ bytes: ok }, { bytes: big, type: 'image/jpeg' }], { prompt: 'x' });
    expect(response.status).toBe(413);
    expect(await errorOf(response)).toMatchObject({ type: 'invalid_request_error', param: 'image[1]', code: 'file_too_large' });
    await small.close();
  });

  it('answers 400 when an edit is not sent as multipart', async () => {
    const response = await emulator.fetch('/v1/images/edits', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'x' }),
    });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).code).toBe('invalid_content_type');
  });
});

describe('routes', () => {
  it('answers 404 in the service error shape for an unknown route', async () => {
    const response = await emulator.fetch('/v1/images/variations', { method: 'POST', headers: AUTH });
    expect(response.status).toBe(404);
    expect(await errorOf(response)).toMatchObject({ type: 'invalid_request_error', code: 'unknown_url' });
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('answers 405 for a GET on an image route', async () => {
    const response = await emulator.fetch('/v1/images/generations', { headers: AUTH });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect((await errorOf(response)).code).toBe('method_not_allowed');
  });

  it('takes full URLs and Request objects as well as paths', async () => {
    const request = new Request('http://anything.example/v1/images/generations', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'x', quality: 'low' }),
    });
    expect((await emulator.fetch(request)).status).toBe(200);
  });
});

/** The PNG with its image data (every IDAT chunk) replaced by `data`, each chunk's CRC right: only the pixels fail to decode. */
function withImageData(png: Buffer, data: Buffer): Buffer {
  const chunk = (type: string, body: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(body.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), body])), 0);
    return Buffer.concat([head, body, crc]);
  };
  const parts: Buffer[] = [png.subarray(0, 8)];
  let replaced = false;
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    if (type !== 'IDAT') parts.push(png.subarray(at, at + 12 + length));
    else if (!replaced) {
      parts.push(chunk('IDAT', data));
      replaced = true;
    }
    at += 12 + length;
  }
  return Buffer.concat(parts);
}
