import { afterAll, describe, expect, it } from 'vitest';
import { createEmulator, DEV_API_KEY } from '../../src/emulator/index.js';
import { errorOf, generate } from './emulator-helpers.js';

const body = { prompt: 'a quiet harbour', quality: 'low' };

describe('authentication', () => {
  const emulator = createEmulator();
  afterAll(() => emulator.close());

  it('accepts the dev key by default', async () => {
    expect(DEV_API_KEY).toBe('pictor-dev-key');
    const response = await generate(emulator, body);
    expect(response.status).toBe(200);
    expect(emulator.requests.at(-1)?.authorized).toBe(true);
  });

  it('answers 401 invalid_api_key when the Authorization header is missing', async () => {
    const response = await emulator.fetch('/v1/images/generations', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(401);
    expect(await errorOf(response)).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key', param: null });
    expect(emulator.requests.at(-1)?.authorized).toBe(false);
  });

  it('answers 401 for a wrong key without repeating the key in the message', async () => {
    const secret = 'sk-very-secret-value-123';
    const response = await generate(emulator, body, { headers: { authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(401);
    const text = await response.text();
    expect(text).not.toContain(secret);
    expect(JSON.parse(text).error.code).toBe('invalid_api_key');
  });

  it('answers 401 for a header that is not a Bearer token', async () => {
    const response = await generate(emulator, body, { headers: { authorization: `Basic ${DEV_API_KEY}` } });
    expect(response.status).toBe(401);
  });

  it('checks the key before the body, so an unauthorized invalid request still gets 401', async () => {
    const response = await generate(emulator, { size: 'huge' }, { headers: { authorization: 'Bearer nope' } });
    expect(response.status).toBe(401);
  });

  it('accepts only the configured keys, and they can be changed at runtime', async () => {
    const custom = createEmulator({ apiKeys: ['key-a', 'key-b'] });
    expect((await generate(custom, body)).status).toBe(401);
    expect((await generate(custom, body, { headers: { authorization: 'Bearer key-b' } })).status).toBe(200);
    custom.configure({ apiKeys: ['key-c'] });
    expect((await generate(custom, body, { headers: { authorization: 'Bearer key-b' } })).status).toBe(401);
    expect((await generate(custom, body, { headers: { authorization: 'bearer key-c' } })).status).toBe(200);
    await custom.close();
  });
});
