import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';
import {
  BACKGROUNDS,
  COMPRESSIBLE_FORMATS,
  DEFAULTS,
  LIMITS,
  MODELS,
  MODERATIONS,
  OUTPUT_FORMATS,
  QUALITIES,
  SIZES,
  TRANSPARENT_FORMATS,
  parseSize,
} from 'pictor';

/**
 * The node's parameters, built from the core's spec constants (choices,
 * defaults, bounds), so the bundle carries whatever `src/spec` says at build time.
 */

/** Where each request field of the spec lives among the node's parameters. */
export const FIELD_PARAMETERS = {
  prompt: { parameter: 'prompt', displayName: 'Prompt' },
  n: { parameter: 'n', displayName: 'Number of Images' },
  size: { parameter: 'size', displayName: 'Size' },
  quality: { parameter: 'quality', displayName: 'Quality' },
  background: { parameter: 'background', displayName: 'Background' },
  output_format: { parameter: 'outputFormat', displayName: 'Output Format' },
  output_compression: { parameter: 'options.outputCompression', displayName: 'Output Compression' },
  moderation: { parameter: 'options.moderation', displayName: 'Moderation' },
  user: { parameter: 'options.user', displayName: 'End-User ID' },
  model: { parameter: 'options.model', displayName: 'Model' },
  stream: { parameter: 'options.stream', displayName: 'Stream' },
  image: { parameter: 'inputBinaryFields', displayName: 'Input Binary Fields' },
} as const;

export type SpecField = keyof typeof FIELD_PARAMETERS;

/** Parameters that shape the node's own behaviour, not the request. */
export const NODE_OPTIONS = {
  binaryPropertyName: { parameter: 'options.binaryPropertyName', displayName: 'Put Output in Field' },
  allImagesOnOneItem: { parameter: 'options.allImagesOnOneItem', displayName: 'All Images on One Item' },
  imagesPerMinute: { parameter: 'options.imagesPerMinute', displayName: 'Images per Minute' },
  maxConcurrent: { parameter: 'options.maxConcurrent', displayName: 'Max Concurrent Requests' },
  maxRetries: { parameter: 'options.maxRetries', displayName: 'Max Retries' },
} as const;

/** The node's own defaults. 0 images per minute means no pacing; 6 retries rides out a few rate-limit answers. */
export const NODE_DEFAULTS = {
  binaryPropertyName: 'data',
  allImagesOnOneItem: false,
  imagesPerMinute: 0,
  maxConcurrent: 4,
  maxRetries: 6,
} as const;

// Plain names for the defaults, as n8n's lint rules read node parameters.
const {
  n: DEFAULT_N,
  size: DEFAULT_SIZE,
  quality: DEFAULT_QUALITY,
  background: DEFAULT_BACKGROUND,
  output_format: DEFAULT_OUTPUT_FORMAT,
  moderation: DEFAULT_MODERATION,
  stream: DEFAULT_STREAM,
} = DEFAULTS;
const [DEFAULT_MODEL] = MODELS;
const { compressionMax: DEFAULT_COMPRESSION } = LIMITS;
const {
  binaryPropertyName: DEFAULT_BINARY_FIELD,
  allImagesOnOneItem: DEFAULT_ALL_ON_ONE,
  imagesPerMinute: DEFAULT_IMAGES_PER_MINUTE,
  maxConcurrent: DEFAULT_MAX_CONCURRENT,
  maxRetries: DEFAULT_MAX_RETRIES,
} = NODE_DEFAULTS;
// n8n's scanner wants boolean defaults as literals (inline lint comments are ignored there): these
// two lines stop the build if a spec default ever stops being the `false` written below.
const streamDefaultIsFalse: false = DEFAULT_STREAM;
const allOnOneDefaultIsFalse: false = DEFAULT_ALL_ON_ONE;
void [streamDefaultIsFalse, allOnOneDefaultIsFalse];

export const OPERATIONS = ['generate', 'edit'] as const;
export type Operation = (typeof OPERATIONS)[number];

const words = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const nameOf = (qualified: string): string => qualified.replace(/^options\./, '');

function sizeShape(size: (typeof SIZES)[number]): string {
  const { width, height } = parseSize(size);
  return width === height ? 'Square' : width < height ? 'Portrait' : 'Landscape';
}

function sizeLabel(size: (typeof SIZES)[number]): string {
  return `${size} (${sizeShape(size)})`;
}

const QUALITY_NOTES: Record<(typeof QUALITIES)[number], string> = {
  low: 'Fastest and cheapest',
  medium: 'Balanced',
  high: 'Most detail; can take over two minutes',
  auto: 'The service picks a tier; the cost is estimated at the highest tier',
};

const BACKGROUND_NOTES: Record<(typeof BACKGROUNDS)[number], string> = {
  transparent: `Needs Output Format ${TRANSPARENT_FORMATS.join(' or ')}`,
  opaque: 'A solid background',
  auto: 'The service decides',
};

const options = (values: readonly string[], label: (v: string) => string = words, note?: (v: string) => string): INodePropertyOptions[] =>
  values.map((value) => ({ name: label(value), value, ...(note ? { description: note(value) } : {}) }));

const transparentRule = `When Background is Transparent, Output Format must be ${TRANSPARENT_FORMATS.join(' or ')}.`;
const compressionRule = `Output Compression applies only to Output Format ${COMPRESSIBLE_FORMATS.join(' or ')}.`;
const OUTPUT_FORMAT_DESCRIPTION = `File format of the images. ${transparentRule} ${compressionRule}`;
const BACKGROUND_DESCRIPTION = `Background of the images. ${transparentRule}`;
const COMPRESSION_DESCRIPTION = `Compression level from ${LIMITS.compressionMin} to ${LIMITS.compressionMax} (higher keeps more detail). ${compressionRule}`;

export const pictorImageProperties: INodeProperties[] = [
  {
    displayName: 'Operation',
    name: 'operation',
    type: 'options',
    noDataExpression: true,
    options: [
      { name: 'Generate', value: 'generate', description: 'Create images from a text prompt', action: 'Generate images' },
      { name: 'Edit', value: 'edit', description: 'Change or extend input images with a text prompt', action: 'Edit images' },
    ],
    default: 'generate',
  },
  {
    displayName: FIELD_PARAMETERS.prompt.displayName,
    name: FIELD_PARAMETERS.prompt.parameter,
    type: 'string',
    required: true,
    default: '',
    placeholder: 'e.g. A watercolor fox reading a map',
    typeOptions: { rows: 4 },
    description: `A text description of the image to make (Generate) or of how to change the input images (Edit): subject, style, composition, lighting and any text to show in the image. At most ${LIMITS.promptMaxChars} characters.`,
  },
  {
    displayName: FIELD_PARAMETERS.image.displayName,
    name: FIELD_PARAMETERS.image.parameter,
    type: 'string',
    required: true,
    default: 'data',
    placeholder: 'e.g. data, logo',
    displayOptions: { show: { operation: ['edit'] } },
    hint: `Binary fields of the input item, separated by commas (1 to ${LIMITS.editImagesMax})`,
    description: `Names of the binary fields of the input item that hold the images to edit, separated by commas. 1 to ${LIMITS.editImagesMax} PNG, JPEG or WebP images, each checked from its content (type and structure), not its name.`,
  },
  {
    displayName: FIELD_PARAMETERS.n.displayName,
    name: FIELD_PARAMETERS.n.parameter,
    type: 'number',
    default: DEFAULT_N,
    typeOptions: { minValue: LIMITS.nMin, maxValue: LIMITS.nMax, numberPrecision: 0 },
    description: `How many images one request makes (${LIMITS.nMin} to ${LIMITS.nMax}). Each image is billed.`,
  },
  {
    displayName: FIELD_PARAMETERS.size.displayName,
    name: FIELD_PARAMETERS.size.parameter,
    type: 'options',
    options: options(SIZES, (v) => sizeLabel(v as (typeof SIZES)[number]), (v) => `${sizeShape(v as (typeof SIZES)[number])} image`),
    default: DEFAULT_SIZE,
    description: `Width x height of each image, in pixels: one of ${SIZES.map((v) => `${v} (${sizeShape(v).toLowerCase()})`).join(', ')}`,
  },
  {
    displayName: FIELD_PARAMETERS.quality.displayName,
    name: FIELD_PARAMETERS.quality.parameter,
    type: 'options',
    options: options(QUALITIES, words, (v) => QUALITY_NOTES[v as (typeof QUALITIES)[number]]),
    default: DEFAULT_QUALITY,
    description: `Quality tier, one of ${QUALITIES.map((v) => `${v} (${QUALITY_NOTES[v].toLowerCase()})`).join(', ')}. The price depends on it and on the size.`,
  },
  {
    displayName: FIELD_PARAMETERS.output_format.displayName,
    name: FIELD_PARAMETERS.output_format.parameter,
    type: 'options',
    options: options(OUTPUT_FORMATS, (v) => v.toUpperCase()),
    default: DEFAULT_OUTPUT_FORMAT,
    description: OUTPUT_FORMAT_DESCRIPTION,
  },
  {
    displayName: FIELD_PARAMETERS.background.displayName,
    name: FIELD_PARAMETERS.background.parameter,
    type: 'options',
    options: options(BACKGROUNDS, words, (v) => BACKGROUND_NOTES[v as (typeof BACKGROUNDS)[number]]),
    default: DEFAULT_BACKGROUND,
    description: BACKGROUND_DESCRIPTION,
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add Option',
    default: {},
    options: [
      {
        displayName: NODE_OPTIONS.allImagesOnOneItem.displayName,
        name: nameOf(NODE_OPTIONS.allImagesOnOneItem.parameter),
        type: 'boolean',
        default: false,
        description:
          'Whether to return all images of one request on one item, in binary fields data_0, data_1, … (named after Put Output in Field), instead of one item per image',
      },
      {
        displayName: FIELD_PARAMETERS.user.displayName,
        name: nameOf(FIELD_PARAMETERS.user.parameter),
        type: 'string',
        default: '',
        description: 'An identifier of your end user, passed to the service to help it detect abuse',
      },
      {
        displayName: NODE_OPTIONS.imagesPerMinute.displayName,
        name: nameOf(NODE_OPTIONS.imagesPerMinute.parameter),
        type: 'number',
        default: DEFAULT_IMAGES_PER_MINUTE,
        typeOptions: { minValue: 0, numberPrecision: 0 },
        description:
          "Your account's image rate limit. Requests of every workflow in this n8n process that use the same credential and limits share it and are paced to stay under it; with a Redis URL in the credential, so do other n8n workers and Pictor bots using that Redis. 0 means no pacing (rate-limit answers are still waited out).",
      },
      {
        displayName: NODE_OPTIONS.maxConcurrent.displayName,
        name: nameOf(NODE_OPTIONS.maxConcurrent.parameter),
        type: 'number',
        default: DEFAULT_MAX_CONCURRENT,
        typeOptions: { minValue: 1, maxValue: 64, numberPrecision: 0 },
        description:
          'How many requests may run at once, across every workflow in this n8n process that uses the same credential and limits (and, with a Redis URL in the credential, across every process using that Redis)',
      },
      {
        displayName: NODE_OPTIONS.maxRetries.displayName,
        name: nameOf(NODE_OPTIONS.maxRetries.parameter),
        type: 'number',
        default: DEFAULT_MAX_RETRIES,
        typeOptions: { minValue: 0, maxValue: 20, numberPrecision: 0 },
        description:
          'How often a request is sent again when nothing can have been billed: a rate-limit answer (waiting as long as the service asks), a server error or a failed connection. Moderation refusals, an exhausted quota and bad input are never retried.',
      },
      {
        displayName: FIELD_PARAMETERS.model.displayName,
        name: nameOf(FIELD_PARAMETERS.model.parameter),
        type: 'options',
        options: options(MODELS, (v) => v),
        default: DEFAULT_MODEL,
        description: 'The image model',
      },
      {
        displayName: FIELD_PARAMETERS.moderation.displayName,
        name: nameOf(FIELD_PARAMETERS.moderation.parameter),
        type: 'options',
        options: options(MODERATIONS),
        default: DEFAULT_MODERATION,
        description: 'How strictly the service filters prompts and images',
      },
      {
        displayName: FIELD_PARAMETERS.output_compression.displayName,
        name: nameOf(FIELD_PARAMETERS.output_compression.parameter),
        type: 'number',
        default: DEFAULT_COMPRESSION,
        typeOptions: { minValue: LIMITS.compressionMin, maxValue: LIMITS.compressionMax, numberPrecision: 0 },
        description: COMPRESSION_DESCRIPTION,
      },
      {
        displayName: NODE_OPTIONS.binaryPropertyName.displayName,
        name: nameOf(NODE_OPTIONS.binaryPropertyName.parameter),
        type: 'string',
        default: DEFAULT_BINARY_FIELD,
        description: 'Name of the binary field the image is written to',
      },
      {
        displayName: FIELD_PARAMETERS.stream.displayName,
        name: nameOf(FIELD_PARAMETERS.stream.parameter),
        type: 'boolean',
        default: false,
        description:
          'Whether to receive the result as a stream of events. The output is the same; the connection stays busy while a long job runs, which helps behind proxies that drop idle connections.',
      },
    ],
  },
];
