import { NodeOperationError, type IDataObject, type IExecuteFunctions } from 'n8n-workflow';
import type { GenerationInput } from 'pictor';
import { FIELD_PARAMETERS, NODE_DEFAULTS, NODE_OPTIONS, OPERATIONS, type Operation } from './node-properties.js';

/** What one input item asks for: the request fields (not yet validated) and how to run and shape it. */
export interface ItemParameters {
  operation: Operation;
  /** Every request field the user set, named as the spec names them; the core validates them. */
  fields: Omit<GenerationInput, 'stream'>;
  stream: boolean;
  /** For Edit: the binary fields holding the input images, in order. */
  inputBinaryFields: string[];
  binaryPropertyName: string;
  allImagesOnOneItem: boolean;
  /** Undefined: no pacing. */
  imagesPerMinute: number | undefined;
  maxConcurrent: number;
  maxRetries: number;
}

/** Reads the node's parameters for one item (expressions resolved per item) and names them as the spec does. */
export function readItemParameters(ctx: IExecuteFunctions, itemIndex: number): ItemParameters {
  const param = (name: string, fallback?: unknown): unknown => ctx.getNodeParameter(name, itemIndex, fallback);
  const options = (param('options', {}) ?? {}) as IDataObject;
  const option = (qualified: string): unknown => options[qualified.replace(/^options\./, '')];

  const operation = param('operation') as Operation;
  if (!(OPERATIONS as readonly string[]).includes(operation)) {
    throw new NodeOperationError(ctx.getNode(), `Operation: "${String(operation)}" is not one of ${OPERATIONS.join(', ')}`, { itemIndex });
  }
  const fields: Record<string, unknown> = {
    prompt: param(FIELD_PARAMETERS.prompt.parameter),
    n: param(FIELD_PARAMETERS.n.parameter),
    size: param(FIELD_PARAMETERS.size.parameter),
    quality: param(FIELD_PARAMETERS.quality.parameter),
    background: param(FIELD_PARAMETERS.background.parameter),
    output_format: param(FIELD_PARAMETERS.output_format.parameter),
  };
  for (const field of ['output_compression', 'moderation', 'model', 'user'] as const) {
    const value = option(FIELD_PARAMETERS[field].parameter);
    if (isSet(value)) fields[field] = value;
  }

  const ipm = numberOr(option(NODE_OPTIONS.imagesPerMinute.parameter), NODE_DEFAULTS.imagesPerMinute);
  return {
    operation,
    fields: fields as ItemParameters['fields'],
    stream: option(FIELD_PARAMETERS.stream.parameter) === true,
    inputBinaryFields:
      operation === 'edit' ? splitNames(String(param(FIELD_PARAMETERS.image.parameter, '') ?? '')) : [],
    binaryPropertyName:
      String(option(NODE_OPTIONS.binaryPropertyName.parameter) ?? '').trim() || NODE_DEFAULTS.binaryPropertyName,
    allImagesOnOneItem: option(NODE_OPTIONS.allImagesOnOneItem.parameter) === true,
    imagesPerMinute: ipm > 0 ? ipm : undefined,
    maxConcurrent: Math.max(1, Math.floor(numberOr(option(NODE_OPTIONS.maxConcurrent.parameter), NODE_DEFAULTS.maxConcurrent))),
    maxRetries: Math.max(0, Math.floor(numberOr(option(NODE_OPTIONS.maxRetries.parameter), NODE_DEFAULTS.maxRetries))),
  };
}

/** "data, logo ,,photo" → ["data", "logo", "photo"]. */
export function splitNames(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** An option left out, or left empty, is not sent: the spec's default applies. */
function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && !(typeof value === 'string' && value.trim() === '');
}

function numberOr(value: unknown, fallback: number): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : fallback;
}
