import { afterEach, describe, expect, it } from 'vitest';
import { FileQuotaStore, SpendGuard } from '../../src/internal.js';
import { estimatePrice, PictorClient, PRICE_TABLE } from '../../src/index.js';
import { head, misbehavingServer, sse, type MisbehavingServer } from '../client/misbehaving-server.js';
import { imageEventFromWire, resultFromJson } from '../../src/client/job-result.js';
import { makeImage } from '../helpers/images.js';
import { useTempDirs } from '../helpers/runner-harness.js';

/**
 * A paid answer's size and quality, as the ledger reads them: a label the spec does not list reads as the one asked,
 * streamed or not, and the image is delivered; the job is charged its estimate (the service may have made something
 * dearer), and its usage record keeps what was asked with basis `estimate`.
 */

const KEY = 'sk-proj-Z9y8X7w6V5u4T3s2R1q0';
const LOW = PRICE_TABLE['1024x1024'].low;
const PNG_B64 = Buffer.from(await makeImage('png', 8, 8)).toString('base64');
const newDir = useTempDirs();
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((o) => o.close()));
});

/** What the service says it made: a quality no spec lists, and a size it does not list either. */
const ODD_LABELS = { size: '4096x4096\u001b[31m', quality: 'ultra' };

/** A server that answers every request with one image labelled `ODD_LABELS`, as a JSON result or as a stream. */
async function oddServer(): Promise<MisbehavingServer> {
  const server = await misbehavingServer(async (req) => {
    const body = JSON.parse((await req.body()).toString()) as { stream?: boolean };
    if (body.stream) {
      const event = sse('image_generation.completed', {
        type: 'image_generation.completed',
        b64_json: PNG_B64,
        created_at: 1,
        background: 'opaque',
        output_format: 'png',
        ...ODD_LABELS,
      });
      const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
      req.socket.end(head(200, { 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked' }) + chunk(event) + chunk(''));
    } else {
      const json = JSON.stringify({ created: 1, data: [{ b64_json: PNG_B64 }], background: 'opaque', output_format: 'png', ...ODD_LABELS });
      req.socket.end(head(200, { 'content-type': 'application/json' }, json));
    }
  });
  opened.push(server);
  return server;
}

async function guarded(server: MisbehavingServer) {
  const store = new FileQuotaStore({ dir: await newDir() });
  opened.push(store);
  const guard = new SpendGuard({ store, limits: {}, userKey: 'cli:test', scopeKey: 'cli' });
  const told: unknown[] = [];
  const logger = { debug() {}, info() {}, warn: (fields: unknown) => told.push(fields), error() {} };
  return { store, told, client: new PictorClient({ baseURL: server.url, apiKey: KEY, maxRetries: 0, onRequest: guard.onRequest, logger }) };
}

describe('an answer labelled with a size or quality the spec does not list', () => {
  for (const streamed of [false, true]) {
    it(`is delivered ${streamed ? 'streamed' : 'as a JSON result'} and charged the job's estimate with basis estimate, its usage record and result keeping what was asked`, async () => {
      const { store, told, client } = await guarded(await oddServer());
      const ask = { prompt: 'a cat', size: '1024x1024', quality: 'low' } as const;
      const result = streamed ? await client.generateStream(ask).finalResult() : await client.generate(ask);
      expect(result.data).toHaveLength(1);
      expect(result).toMatchObject({ size: '1024x1024', quality: 'low', unlisted: ['size', 'quality'], cost: { totalUsd: estimatePrice({ ...ask, operation: 'generate' }).totalUsd, basis: 'estimate' } });
      const [record] = await store.usage({});
      expect(record).toMatchObject({ size: '1024x1024', quality: 'low', costUsd: LOW, basis: 'estimate', outcome: 'completed' });
      expect(told).toContainEqual(expect.objectContaining({ missing: expect.arrayContaining(['size', 'quality']) }));
    });
  }
});

describe('which labels read as unlisted', () => {
  const asked = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low', background: 'auto', output_format: 'png' as const };

  it('is decided by the result schema alone: a service that names its own labels unlisted, or sends null, is priced at the table', () => {
    const json = { data: [{ b64_json: PNG_B64 }], size: '1024x1024', quality: null, unlisted: ['size', 'quality'] };
    const result = resultFromJson(json, asked, undefined);
    expect(result).not.toHaveProperty('unlisted');
    expect(result.cost).toMatchObject({ totalUsd: LOW, basis: 'table' });
    const read = imageEventFromWire({ type: 'image_generation.completed', b64_json: PNG_B64, quality: 'ultra', unlisted: ['size'] }, undefined, asked);
    expect(read).toMatchObject({ event: { quality: 'low', unlisted: ['quality'] } });
  });
});
