/**
 * A second n8n process for the Redis tests, forked by `startN8nProcess`
 * (n8n-process.ts) with `node --import tsx`. It loads the BUILT node package
 * with require, as n8n does (its runtime dependencies, ioredis among them,
 * resolved from nodes/node_modules), and runs each execution its parent sends
 * through the harness, with this process's own limiter registry.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createHarness, type N8nWorkflowRuntime } from './execute-harness.js';
import type { ChildCommand, ChildReport, ExecutionOutcome, N8nProcessConfig } from './n8n-process.js';
import type { IDataObject, INodeType } from './n8n-workflow.js';

const config = JSON.parse(process.argv[2] ?? '{}') as N8nProcessConfig;
const n8n = createRequire(join(config.nodesDir, 'package.json'))('n8n-workflow') as N8nWorkflowRuntime;
const load = createRequire(join(config.bundleDir, 'index.js'));
const { PictorImage } = load(join(config.bundleDir, 'nodes', 'PictorImage', 'PictorImage.node.js')) as { PictorImage: new () => INodeType };
const nodeType = new PictorImage();
const report = (message: ChildReport) => process.send?.(message);

process.on('message', (command: ChildCommand) => {
  if (command.type === 'stop') {
    // Its Redis connections go with it, as when an n8n worker stops.
    process.exit(0);
  }
  const { id, request } = command;
  void execute(request).then((outcome) => report({ type: 'executed', id, outcome }));
});

async function execute(request: Extract<ChildCommand, { type: 'execute' }>['request']): Promise<ExecutionOutcome> {
  const harness = createHarness({
    n8n,
    nodeType,
    parameters: request.parameters,
    items: Array.from({ length: request.items }, () => ({ json: {} })),
    credentials: request.credentials,
    continueOnFail: request.continueOnFail,
  });
  try {
    const [out = []] = await harness.run();
    return { ok: true, items: out.map((item) => ({ json: item.json, binary: Object.keys(item.binary ?? {}) })) };
  } catch (error) {
    const e = error as { name?: string; message?: string; description?: string | null; context?: IDataObject };
    return { ok: false, error: { name: String(e.name), message: String(e.message), description: e.description ?? null, context: { ...e.context } } };
  }
}

report({ type: 'ready' });
