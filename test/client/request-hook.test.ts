import { describe, expect, it } from 'vitest';
import { isCompletedEvent, type HookedRequest, type RequestEnding, type RequestWatch } from '../../src/index.js';
import { useEmulator } from '../helpers/emulator.js';

const env = useEmulator();

/** A hook that writes down what the client told it, in order. */
function recorder(refuse?: Error) {
  const told: string[] = [];
  const requests: HookedRequest[] = [];
  const endings: RequestEnding[] = [];
  const onRequest = async (request: HookedRequest): Promise<RequestWatch> => {
    requests.push(request);
    told.push('request');
    if (refuse) throw refuse;
    return {
      beforeSend: async () => void told.push(`send ${env.emulator.requests.length}`),
      onImage: () => void told.push('image'),
      end: async (ending) => void (endings.push(ending), told.push(`end ${ending.kind}`)),
    };
  };
  return { told, requests, endings, onRequest };
}

describe('the client’s request hook', () => {
  it('is asked once per request with what was asked, told before each send, of each image, and how it ended', async () => {
    const hook = recorder();
    env.emulator.injectFault('server_error');
    const result = await env.client({ onRequest: hook.onRequest }).generate({ prompt: 'a lighthouse', n: 2, quality: 'low' });
    expect(hook.requests).toEqual([expect.objectContaining({ operation: 'generate', n: 2, quality: 'low', size: '1024x1024', prompt: 'a lighthouse' })]);
    // The retry of the 500 is a second send; the images are told once, after the answer.
    expect(hook.told).toEqual(['request', 'send 0', 'send 1', 'image', 'image', 'end completed']);
    expect(hook.endings).toEqual([{ kind: 'completed', requestId: result.requestId }]);
  });

  it('hands on every image and still ends the request when the watch throws on an image, logging the throw', async () => {
    const endings: RequestEnding[] = [];
    const logged: { err?: unknown; requestId?: string }[] = [];
    const logger = { debug: () => {}, info: () => {}, warn: () => {}, error: (obj: object) => void logged.push(obj) };
    const broken = new Error('the hook broke');
    const onRequest = (): RequestWatch => ({
      onImage: () => {
        throw broken;
      },
      end: (ending) => void endings.push(ending),
    });
    const client = env.client({ onRequest, logger });

    const result = await client.generate({ prompt: 'x', n: 2, quality: 'low' });
    expect(result.data).toHaveLength(2);
    expect(endings).toEqual([{ kind: 'completed', requestId: result.requestId }]);
    expect(logged).toEqual([expect.objectContaining({ err: broken, requestId: result.requestId }), expect.objectContaining({ err: broken })]);

    endings.length = 0;
    const stream = client.generateStream({ prompt: 'x', n: 2, quality: 'low', partial_images: 1 });
    const completed = [];
    for await (const event of stream) if (isCompletedEvent(event)) completed.push(event);
    expect(completed).toHaveLength(2);
    expect(endings).toEqual([{ kind: 'completed', requestId: stream.requestId }]);
    expect(logged).toHaveLength(4);
  });

  it('refuses a request by throwing: the caller gets that error and nothing is sent', async () => {
    const refusal = new Error('over the cap');
    const hook = recorder(refusal);
    await expect(env.client({ onRequest: hook.onRequest }).generate({ prompt: 'x' })).rejects.toBe(refusal);
    await expect(env.client({ onRequest: hook.onRequest }).generateStream({ prompt: 'x' }).finalResult()).rejects.toBe(refusal);
    expect(env.emulator.requests).toHaveLength(0);
  });

  it('is not asked about a request that is not valid', async () => {
    const hook = recorder();
    expect(() => env.client({ onRequest: hook.onRequest }).generateStream({ prompt: 'x', n: 11 })).toThrow(/n must be/);
    await expect(env.client({ onRequest: hook.onRequest }).generate({ prompt: '' })).rejects.toMatchObject({ code: 'validation_error' });
    expect(hook.told).toEqual([]);
  });

  it('hears of a failed request with the error the caller gets', async () => {
    const hook = recorder();
    const error = await env.client({ onRequest: hook.onRequest, apiKey: 'wrong-key' }).generate({ prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'authentication_failed' });
    expect(hook.endings).toEqual([{ kind: 'failed', error, requestId: (error as { requestId?: string }).requestId }]);
  });

  it('follows a stream: asked when it is first read, told of each completed image as it is handed on, and of a reader who left early', async () => {
    const whole = recorder();
    const stream = env.client({ onRequest: whole.onRequest }).generateStream({ prompt: 'x', n: 2, quality: 'low', partial_images: 1 });
    expect(whole.told).toEqual([]);
    const seen: string[] = [];
    for await (const event of stream) seen.push(isCompletedEvent(event) ? 'image' : 'partial');
    expect(whole.told).toEqual(['request', 'send 0', ...seen.filter((kind) => kind === 'image'), 'end completed']);
    expect(whole.endings).toEqual([{ kind: 'completed', requestId: stream.requestId }]);

    const left = recorder();
    for await (const _event of env.client({ onRequest: left.onRequest }).generateStream({ prompt: 'x', quality: 'low', partial_images: 1 })) break;
    expect(left.told).toEqual(['request', 'send 1', 'end cancelled']);
  });

  it('tells its watch that a request cancelled while it was told of the send left nothing, and sends nothing', async () => {
    for (const streamed of [false, true]) {
      const controller = new AbortController();
      const endings: RequestEnding[] = [];
      // The cancel strikes while the watch records the send (the spend guard marks the job sent here).
      const onRequest = (): RequestWatch => ({ beforeSend: async () => void controller.abort(), end: async (ending) => void endings.push(ending) });
      const client = env.client({ onRequest, maxRetries: 0 });
      const job = streamed
        ? client.generateStream({ prompt: 'x', quality: 'low' }, { signal: controller.signal }).finalResult()
        : client.generate({ prompt: 'x', quality: 'low' }, { signal: controller.signal });
      await expect(job).rejects.toMatchObject({ code: 'aborted', mayBeBilled: false });
      expect(endings).toEqual([{ kind: 'failed', error: expect.objectContaining({ code: 'aborted', mayBeBilled: false }), requestId: undefined }]);
    }
    expect(env.emulator.requests).toHaveLength(0);
  });

  it('says the request left (onSend) only once the watch was told of the send, and not at all when it was cancelled then', async () => {
    const told: string[] = [];
    const onRequest = (): RequestWatch => ({ beforeSend: async () => void told.push('watch told') });
    const events = { onStart: () => void told.push('slot'), beforeSend: async () => void told.push('caller told'), onSend: () => void told.push('left') };
    await env.client({ onRequest }).generate({ prompt: 'x', quality: 'low' }, events);
    expect(told).toEqual(['slot', 'caller told', 'watch told', 'left']);

    told.length = 0;
    const controller = new AbortController();
    const cancelling = (): RequestWatch => ({ beforeSend: async () => void (told.push('watch told'), controller.abort()) });
    await expect(env.client({ onRequest: cancelling, maxRetries: 0 }).generate({ prompt: 'x', quality: 'low' }, { ...events, signal: controller.signal })).rejects.toMatchObject({
      code: 'aborted',
      mayBeBilled: false,
    });
    expect(told).toEqual(['slot', 'caller told', 'watch told']);
    expect(env.emulator.requests).toHaveLength(1);
  });

  it('never withholds a result the service made when the watch fails to settle it', async () => {
    const errors: unknown[] = [];
    const logger = { debug() {}, info() {}, warn() {}, error: (obj: object) => void errors.push(obj) };
    const onRequest = (): RequestWatch => ({ end: () => Promise.reject(new Error('ledger gone')) });
    const result = await env.client({ onRequest, logger }).generate({ prompt: 'x', quality: 'low' });
    expect(result.data).toHaveLength(1);
    expect(errors).toEqual([expect.objectContaining({ err: expect.objectContaining({ message: 'ledger gone' }) })]);
  });

  it('takes a synchronous watch: its beforeSend and end return nothing, and a throw in beforeSend stops the request unsent', async () => {
    const told: string[] = [];
    // Typed as the public RequestWatch: a watch without promises compiles as the runtime accepts it.
    const syncWatch: RequestWatch = {
      beforeSend() {
        told.push('send');
      },
      end(ending) {
        told.push(`end ${ending.kind}`);
      },
    };
    await env.client({ onRequest: () => syncWatch }).generate({ prompt: 'x', quality: 'low' });
    expect(told).toEqual(['send', 'end completed']);

    const refusal = new Error('not now');
    const refusing: RequestWatch = {
      beforeSend() {
        throw refusal;
      },
    };
    const sentBefore = env.emulator.requests.length;
    await expect(env.client({ onRequest: () => refusing }).generate({ prompt: 'x', quality: 'low' })).rejects.toBe(refusal);
    expect(env.emulator.requests).toHaveLength(sentBefore);
  });
});
