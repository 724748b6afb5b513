import { describe, expect, it } from 'vitest';
import { AbortedError, BadResponseError, ERROR_CODES, ModerationError, PictorError, ServerError, StreamBrokenError, TimeoutError } from '../../src/core/errors.js';
import { estimatePrice, isRetryable, PictorClient, PRICE_TABLE, type CompletedEvent } from '../../src/index.js';
import { chargeOf, mayBeBilled, type JobEnding } from '../../src/internal.js';
import { estimateOf } from '../../src/core/pricing.js';
import { cutOffCostUsd, endingOf, interruptedCostUsd } from '../../src/spend/charge-rules.js';
import { makeImage } from '../helpers/images.js';
import { countsUnder, keysOfJob } from '../../src/spend/rules.js';

const LOW = PRICE_TABLE['1024x1024'].low;
const request = { operation: 'generate' as const, n: 2, size: '1024x1024', quality: 'low' };
const estimate = estimatePrice(request);
const image: CompletedEvent = {
  type: 'image_generation.completed',
  b64_json: 'AAAA',
  created_at: 1,
  size: '1024x1024',
  quality: 'low',
  background: 'opaque',
  output_format: 'png',
  usage: undefined,
};
const serverError = new ServerError('server_error', 'the service failed', { status: undefined, headers: {}, requestId: undefined });
const failed = (error: unknown): JobEnding => ({ kind: 'failed', error });

describe('mayBeBilled: the one answer of every surface', () => {
  it('is never true for a job that was not sent', () => {
    expect(mayBeBilled({ ending: failed(new StreamBrokenError('broke')), sent: false, completed: [] })).toBe(false);
    expect(mayBeBilled({ ending: { kind: 'cancelled' }, sent: false, completed: [] })).toBe(false);
  });

  it('is false only for an error answer of the service that came before any image', () => {
    expect(mayBeBilled({ ending: failed(serverError), sent: true, completed: [] })).toBe(false);
    expect(mayBeBilled({ ending: failed(new ModerationError('moderation_blocked', 'no', { status: 400, headers: {}, requestId: undefined })), sent: true, completed: [] })).toBe(false);
    expect(mayBeBilled({ ending: failed(serverError), sent: true, completed: [image] })).toBe(true);
  });

  it('is false for a timeout the client says struck before any byte of the request left, true for one after', () => {
    expect(mayBeBilled({ ending: failed(new TimeoutError('total', 1000)), sent: true, completed: [] })).toBe(false);
    expect(mayBeBilled({ ending: failed(new TimeoutError('total', 1000).afterSending()), sent: true, completed: [] })).toBe(true);
  });

  it('is false for a cancel the client says came before any byte of the request left, true for one after', () => {
    const beforeSending = new AbortedError('the request was cancelled', { mayBeBilled: false });
    expect(mayBeBilled({ ending: endingOf(failed(beforeSending)), sent: true, completed: [] })).toBe(false);
    expect(chargeOf({ ending: endingOf(failed(beforeSending)), sent: true, completed: [] }, estimate, request)).toBeUndefined();
    expect(mayBeBilled({ ending: endingOf(failed(new AbortedError())), sent: true, completed: [] })).toBe(true);
  });

  it('is true once sent for a broken stream, a timeout, a bad answer, a cancel, and a bug of ours', () => {
    for (const error of [new StreamBrokenError('broke'), new TimeoutError('idle', 1000, { mayBeBilled: true }), new BadResponseError('no images'), new AbortedError(), new Error('a bug')]) {
      expect(mayBeBilled({ ending: failed(error), sent: true, completed: [] })).toBe(true);
    }
    expect(mayBeBilled({ ending: { kind: 'cancelled' }, sent: true, completed: [] })).toBe(true);
  });
});

describe('the client retries only what this rule says bills nothing', () => {
  it('retries a refused connection, a 429 and a 5xx, each an answer that costs nothing, and no other code', () => {
    const retried = ERROR_CODES.filter((code) => isRetryable(new PictorError(code, 'x')));
    expect(retried).toEqual(['rate_limited', 'server_error', 'connection_failed']);
    for (const code of retried) expect(mayBeBilled({ ending: failed(new PictorError(code, 'x')), sent: true, completed: [] })).toBe(false);
  });
});

describe('endingOf: how an ending is charged and recorded', () => {
  it('reads a failure the caller aborted as a cancel, and every other ending as it came', () => {
    expect(endingOf(failed(new AbortedError()))).toEqual({ kind: 'cancelled' });
    expect(endingOf(failed(new AbortedError('the request was cancelled', { mayBeBilled: false })))).toEqual({ kind: 'cancelled', leftNothing: true });
    for (const ending of [failed(new StreamBrokenError('broke')), failed(serverError), failed(new Error('a bug')), { kind: 'completed' } as const, { kind: 'cancelled' } as const]) {
      expect(endingOf(ending)).toBe(ending);
    }
  });

  it('charges an aborted failure as a cancel: the images that came plus the estimate of each missing one', () => {
    const aborted = chargeOf({ ending: failed(new AbortedError()), sent: true, completed: [image] }, estimate, request);
    expect(aborted).toEqual(chargeOf({ ending: { kind: 'cancelled' }, sent: true, completed: [image] }, estimate, request));
    expect(aborted).toEqual({ usd: LOW + estimate.perImageUsd, basis: 'estimate', made: { size: '1024x1024', quality: 'low' } });
  });
});

describe('chargeOf: the one cost rule', () => {
  it('charges a completed job the table price of what came back', () => {
    expect(chargeOf({ ending: { kind: 'completed' }, sent: true, completed: [image, image] }, estimate, request)).toEqual({ usd: 2 * LOW, basis: 'table', made: { size: '1024x1024', quality: 'low' } });
  });

  it('charges only the images made when the service ended the job with an error event', () => {
    expect(chargeOf({ ending: failed(serverError), sent: true, completed: [image] }, estimate, request)).toEqual({ usd: LOW, basis: 'table', made: { size: '1024x1024', quality: 'low' } });
  });

  it('charges the images that came plus the estimate of each missing one after a broken stream, a bad answer or a cancel', () => {
    for (const ending of [failed(new StreamBrokenError('broke')), failed(new BadResponseError('1 of 2')), { kind: 'cancelled' } as const]) {
      expect(chargeOf({ ending, sent: true, completed: [image] }, estimate, request)).toEqual({
        usd: LOW + estimate.perImageUsd,
        basis: 'estimate',
        made: { size: '1024x1024', quality: 'low' },
      });
    }
  });

  it('prices an image whose quality is unknown at its estimate, and says so', () => {
    const auto = { ...request, n: 1, quality: 'auto' };
    const charge = chargeOf({ ending: { kind: 'completed' }, sent: true, completed: [{ ...image, quality: 'auto' }] }, estimatePrice(auto), auto);
    expect(charge).toEqual({ usd: estimatePrice(auto).totalUsd, basis: 'estimate', made: { size: '1024x1024', quality: 'auto' } });
  });

  it('keeps as made only a size and quality the spec knows, and those asked in place of anything else the service reports', () => {
    const hostile = { ...image, size: `\u001b[31m${'9'.repeat(10_000)}`, quality: 'ultra\u001b[0m' };
    const charge = chargeOf({ ending: { kind: 'completed' }, sent: true, completed: [hostile, hostile] }, estimate, request);
    expect(charge?.made).toEqual({ size: '1024x1024', quality: 'low' });
    const oddSize = chargeOf({ ending: { kind: 'completed' }, sent: true, completed: [{ ...image, size: '4096x4096', quality: 'high' }] }, estimate, request);
    expect(oddSize?.made).toEqual({ size: '1024x1024', quality: 'high' });
  });

  it('charges images whose size or quality the service sent is one the spec does not list the job\'s estimate, keeping what was asked as made', () => {
    // As the result schema reads an image labelled `ultra`: the quality asked, and the label named as unlisted.
    const odd = { ...image, quality: 'low', unlisted: ['quality' as const] };
    expect(chargeOf({ ending: { kind: 'completed' }, sent: true, completed: [odd, odd] }, estimate, request)).toEqual({
      usd: 2 * estimate.perImageUsd,
      basis: 'estimate',
      made: { size: '1024x1024', quality: 'low' },
    });
  });

  it('releases what cannot have been billed', () => {
    expect(chargeOf({ ending: failed(serverError), sent: true, completed: [] }, estimate, request)).toBeUndefined();
  });
});

describe('cutOffCostUsd: what a job its process’s death cut off may cost, known by its reservation alone', () => {
  it('is nothing for a reservation whose request was never sent', () => {
    expect(cutOffCostUsd({ usd: estimate.totalUsd, sent: false })).toBeUndefined();
  });

  it('is its estimate for a reservation whose send is unknown (an older version wrote it, with no owner): it may have left', () => {
    expect(cutOffCostUsd({ usd: estimate.totalUsd, sent: undefined })).toBe(cutOffCostUsd({ usd: estimate.totalUsd, sent: true }));
  });

  it('is what an interrupted job with no image seen is charged (its estimate), for every request a reservation is made for', () => {
    for (const operation of ['generate', 'edit'] as const) {
      for (const size of ['1024x1024', '1536x1024', 'auto']) {
        for (const quality of ['low', 'medium', 'high', 'auto']) {
          for (const n of [1, 3, 10]) {
            const asked = { operation, size, quality, n };
            const reserved = estimateOf(asked);
            expect(cutOffCostUsd({ usd: reserved.totalUsd, sent: true })).toBe(interruptedCostUsd(reserved, [], asked));
          }
        }
      }
    }
  });
});

describe('estimateOf: what a job reserves', () => {
  it('is what the client estimates for the same request, generation or edit, table price or not', async () => {
    const client = new PictorClient({ baseURL: 'http://127.0.0.1:9', apiKey: 'sk-test-estimate' });
    const image = [{ data: await makeImage('png', 8, 8) }];
    for (const size of ['1024x1024', '1536x1024'] as const) {
      for (const quality of ['low', 'high', 'auto'] as const) {
        for (const n of [1, 3]) {
          expect(client.estimate('generate', { prompt: 'x', size, quality, n })).toEqual(estimateOf({ operation: 'generate', size, quality, n }));
          expect(client.estimate('edit', { prompt: 'x', image, size, quality, n })).toEqual(estimateOf({ operation: 'edit', size, quality, n }));
        }
      }
    }
  });
});

describe('the keys a job counts under', () => {
  it('are its user, its scope and the account, whether listed or asked one by one', () => {
    const asked = ['discord:u1', 'discord:g1', 'account', 'discord:u2', 'discord:g2'];
    for (const [user, scope] of [
      ['discord:u1', 'discord:g1'],
      ['discord:u1', 'discord:u1'],
    ] as const) {
      expect(asked.filter((key) => countsUnder(key, user, scope))).toEqual(asked.filter((key) => keysOfJob(user, scope).includes(key)));
    }
    expect(countsUnder('account', 'discord:u1', 'discord:g1')).toBe(true);
    expect(countsUnder('discord:g2', 'discord:u1', 'discord:g1')).toBe(false);
  });
});
