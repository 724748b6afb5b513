import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PictorImage } from '../../nodes/nodes/PictorImage/PictorImage.node.js';
import { createEmulator, DEV_API_KEY, type Emulator, type EmulatorServer } from '../../src/emulator/index.js';
import { createHarness } from './execute-harness.js';
import { NodeHelpers, NodeOperationError } from './n8n-workflow.js';

let emulator: Emulator;
let server: EmulatorServer;

beforeAll(async () => {
  emulator = createEmulator({ latencyMs: 0 });
  server = await emulator.listen({ port: 0 });
});
afterAll(async () => {
  await emulator.close();
});

function run(asAgentTool?: 'direct' | 'engine') {
  return createHarness({
    n8n: { NodeHelpers, NodeOperationError },
    nodeType: new PictorImage(),
    parameters: { operation: 'generate', prompt: 'a lighthouse at dusk', quality: 'low' },
    items: [{ json: {} }],
    credentials: { apiKey: DEV_API_KEY, baseUrl: server.url },
    asAgentTool,
  }).run();
}

describe('the Pictor Image node as an AI agent’s tool', () => {
  it('is offered to agents', () => {
    expect(new PictorImage().description.usableAsTool).toBe(true);
  });

  it.each(['direct', 'engine'] as const)('answers an agent (%s tool call) with a short text saying what was made, where the binary is and its cost, keeping the binary', async (how) => {
    const [[item]] = (await run(how)) as unknown as [[{ json: Record<string, unknown>; binary?: Record<string, { fileName?: string }> }]];
    const fileName = item.binary!.data!.fileName!;
    expect(item.json.response).toMatch(/^Made 1 image \(1024x1024, low quality\) for the prompt "a lighthouse at dusk"; it is in binary field "data" /);
    expect(item.json.response).toContain(fileName);
    expect(item.json.response).toMatch(/Cost: \$\d/);
    expect(item.json.costUsd).toBeGreaterThan(0);
    expect(Object.keys(item.json).sort()).toEqual(['costUsd', 'files', 'response']);
  });

  it('keeps the workflow fields when it runs in a workflow', async () => {
    const [[item]] = (await run()) as unknown as [[{ json: Record<string, unknown> }]];
    expect(item.json.response).toBeUndefined();
    expect(item.json).toMatchObject({ operation: 'generate', prompt: 'a lighthouse at dusk', size: '1024x1024' });
  });
});
