import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

/**
 * True when n8n runs the node as an AI agent's tool. The node is
 * `usableAsTool`, so n8n offers agents a generated variant of it whose type
 * ends in `Tool` (`…pictorImageTool`); an agent that runs its tools through
 * the workflow engine runs that variant as a node (there `isToolExecution()`
 * answers false), one that calls them directly answers true to
 * `isToolExecution()`. Either says so; an n8n without the method and with the
 * plain node type runs it as a workflow node.
 */
export function runsAsAgentTool(ctx: IExecuteFunctions): boolean {
  const check = (ctx as Partial<Pick<IExecuteFunctions, 'isToolExecution'>>).isToolExecution;
  if (typeof check === 'function' && check.call(ctx) === true) return true;
  return /Tool$/.test(ctx.getNode().type.split('.').pop() ?? '');
}

/**
 * For an agent, each output item answers in a short sentence — what was made,
 * in which binary field and file, what it cost — instead of the workflow
 * fields (agents drop or choke on bare binary data and long JSON). The binary
 * data stays on the item. In a workflow, the items are returned unchanged.
 */
export function answerForAgent(ctx: IExecuteFunctions, items: INodeExecutionData[]): INodeExecutionData[] {
  if (!runsAsAgentTool(ctx)) return items;
  return items.map((item) => {
    const json = item.json;
    const files = Object.entries(item.binary ?? {}).map(([field, data]) => ({ field, fileName: data.fileName ?? field }));
    const cost = (json.cost as IDataObject | undefined) ?? {};
    const what = `${files.length} ${files.length === 1 ? 'image' : 'images'} (${json.size}, ${json.quality} quality)`;
    const where = files.map((f) => `binary field "${f.field}" (${f.fileName})`).join(', ');
    const made = json.operation === 'edit' ? 'Edited' : 'Made';
    const response = `${made} ${what} for the prompt "${shorten(String(json.prompt ?? ''))}"; ${files.length === 1 ? 'it is in' : 'they are in'} ${where}. Cost: ${cost.text ?? 'unknown'}.`;
    return { ...item, json: { response, files, costUsd: (cost.usd as number | undefined) ?? null } };
  });
}

function shorten(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
