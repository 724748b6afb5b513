import { extname } from 'node:path';
import type { IBinaryData, IDataObject, IExecuteFunctions, INode, INodeExecutionData, INodeParameters, INodeType } from './n8n-workflow.js';

/**
 * The parts of n8n-workflow the harness runs: passed in, so that it uses the
 * same copy as the node under test (the ESM build in vitest, the CommonJS
 * build next to a built bundle in a benchmark).
 */
export type N8nWorkflowRuntime = Pick<typeof import('./n8n-workflow.js'), 'NodeHelpers' | 'NodeOperationError'>;

/**
 * A minimal `IExecuteFunctions` (n8n's interface for a node's `execute()`),
 * enough to run a programmatic node outside n8n: parameters with the node's
 * defaults filled in by n8n-workflow's own `getNodeParameters`, per-item
 * values (what expressions resolve to), credentials, binary data in n8n's
 * in-memory form (base64), continue-on-fail and execution cancellation.
 */
export interface HarnessOptions {
  n8n: N8nWorkflowRuntime;
  nodeType: INodeType;
  /** The node's parameters as saved in a workflow, or per item (as expressions would resolve). */
  parameters: INodeParameters | ((itemIndex: number) => INodeParameters);
  items: INodeExecutionData[];
  credentials?: Record<string, unknown> | undefined;
  continueOnFail?: boolean | undefined;
  /** The node's On Error setting, as n8n saves it (`continueRegularOutput`, `continueErrorOutput`); implies continueOnFail. */
  onError?: 'continueRegularOutput' | 'continueErrorOutput' | undefined;
  cancelSignal?: AbortSignal | undefined;
  /** The id of the workflow the node runs in (n8n's `getWorkflow().id`). Default `wf-under-test`. */
  workflowId?: string | undefined;
  /**
   * n8n runs the node as an AI agent's tool: `direct` as an agent that calls
   * its tools itself (`isToolExecution()` answers true), `engine` as one that
   * has the workflow engine run them (the node's type is n8n's generated tool
   * variant, `…Tool`; `isToolExecution()` answers false). Default: a workflow node.
   */
  asAgentTool?: 'direct' | 'engine' | undefined;
}

export interface Harness {
  context: IExecuteFunctions;
  /** What the node asked for with `getCredentials`. */
  credentialRequests: string[];
  logs: { level: string; message: string; meta: unknown }[];
  run(): Promise<INodeExecutionData[][]>;
}

export function createHarness(options: HarnessOptions): Harness {
  const { NodeHelpers, NodeOperationError } = options.n8n;
  const node: INode = {
    id: 'pictor-node-under-test',
    name: 'Pictor Image',
    type: `CUSTOM.${options.nodeType.description.name}${options.asAgentTool === 'engine' ? 'Tool' : ''}`,
    typeVersion: 1,
    position: [0, 0],
    parameters: {},
    ...(options.onError ? { onError: options.onError } : {}),
  };
  const credentialRequests: string[] = [];
  const logs: Harness['logs'] = [];
  const resolved = new Map<number, INodeParameters>();

  const parametersOf = (itemIndex: number): INodeParameters => {
    let values = resolved.get(itemIndex);
    if (!values) {
      const raw = typeof options.parameters === 'function' ? options.parameters(itemIndex) : options.parameters;
      values = NodeHelpers.getNodeParameters(options.nodeType.description.properties, raw, true, false, node, options.nodeType.description) ?? {};
      resolved.set(itemIndex, values);
    }
    return values;
  };

  const binaryOf = (itemIndex: number, propertyName: string): IBinaryData => {
    const binary = options.items[itemIndex]?.binary?.[propertyName];
    if (!binary) {
      throw new NodeOperationError(node, `This operation expects the node's input data to contain a binary file '${propertyName}', but none was found [item ${itemIndex}]`, {
        itemIndex,
      });
    }
    return binary;
  };

  const log = (level: string) => (message: string, meta?: unknown) => logs.push({ level, message, meta });

  const context = {
    getNode: () => node,
    getInputData: () => options.items,
    continueOnFail: () => options.continueOnFail === true || options.onError !== undefined,
    getExecutionCancelSignal: () => options.cancelSignal,
    isToolExecution: () => options.asAgentTool === 'direct',
    getWorkflow: () => ({ id: options.workflowId ?? 'wf-under-test', name: 'Workflow under test', active: false }),
    getNodeParameter(name: string, itemIndex: number, fallback?: unknown) {
      const value = name.split('.').reduce<unknown>((at, key) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined), parametersOf(itemIndex));
      if (value !== undefined) return value;
      if (fallback !== undefined) return fallback;
      throw new NodeOperationError(node, `Could not get parameter "${name}"`, { itemIndex });
    },
    async getCredentials(type: string) {
      credentialRequests.push(type);
      if (!options.credentials) throw new NodeOperationError(node, 'Node does not have any credentials set');
      return options.credentials;
    },
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), verbose: log('verbose') },
    helpers: {
      assertBinaryData: (itemIndex: number, propertyName: string) => binaryOf(itemIndex, propertyName),
      getBinaryDataBuffer: async (itemIndex: number, propertyName: string) => Buffer.from(binaryOf(itemIndex, propertyName).data, 'base64'),
      async prepareBinaryData(data: Buffer, fileName?: string, mimeType?: string): Promise<IBinaryData> {
        return {
          data: data.toString('base64'),
          mimeType: mimeType ?? 'application/octet-stream',
          ...(fileName ? { fileName, fileExtension: extname(fileName).slice(1) } : {}),
          fileType: mimeType?.startsWith('image/') ? 'image' : undefined,
          fileSize: `${data.length} B`,
        };
      },
    },
  } as unknown as IExecuteFunctions;

  return {
    context,
    credentialRequests,
    logs,
    run: () => options.nodeType.execute!.call(context) as Promise<INodeExecutionData[][]>,
  };
}

/** An input item carrying files in binary fields, as n8n keeps them in memory. */
export function itemWithFiles(files: Record<string, { bytes: Uint8Array; fileName: string; mimeType: string }>, json: IDataObject = {}): INodeExecutionData {
  const binary: Record<string, IBinaryData> = {};
  for (const [field, file] of Object.entries(files)) {
    binary[field] = {
      data: Buffer.from(file.bytes).toString('base64'),
      mimeType: file.mimeType,
      fileName: file.fileName,
      fileExtension: extname(file.fileName).slice(1),
    };
  }
  return { json, binary };
}
