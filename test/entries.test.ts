import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as publicEntry from 'pictor';
import * as internalEntry from 'pictor/internal';
import vitestConfig from '../vitest.config.js';

const root = resolve(import.meta.dirname, '..');

/**
 * The public API, name by name: a name added here is a promise to library users, so it is added on purpose (and a
 * helper that slips into src/index.ts fails this test).
 */
const PUBLIC_NAMES = [
  // The spec: its constants, schemas, parsers and types.
  'ALLOWED', 'BACKGROUNDS', 'COMPRESSIBLE_FORMATS', 'CompletedEventSchema', 'DEFAULTS', 'EDIT_ASSUMPTIONS', 'EDIT_FILE_FIELD',
  'EDIT_FILE_FIELD_ALIASES', 'EVENT_TYPES', 'EditImageSchema', 'EditImagesSchema', 'EditRequestSchema', 'ErrorBodySchema',
  'FILE_EXTENSIONS', 'GenerationRequestSchema', 'IMAGE_EVENT_LABELS', 'ImageResultSchema', 'ImageStreamEventSchema', 'LIMITS',
  'MIME_TYPES', 'MODEL', 'MODELS', 'MODERATIONS', 'OUTPUT_FORMATS', 'PATHS', 'PartialImageEventSchema', 'QUALITIES', 'SIZES',
  'TRANSPARENT_FORMATS', 'UsageSchema', 'WireImageEventSchema', 'WireImageResultSchema', 'editRequestOf', 'fromFormFields', 'isCompletedEvent',
  'isEditRequest', 'isParsedRequest', 'isPartialEvent', 'mimeTypeOf', 'paramOf', 'parseEditRequest', 'parseGenerationRequest',
  'parseSize', 'sniffImageType', 'toValidationError', 'wireFields',
  // The errors, with their stable codes.
  'ANSWERED_ERROR_CODES', 'APIError', 'AbortedError', 'AuthenticationError', 'BadRequestError', 'BadResponseError', 'ConnectionError',
  'ERROR_CODES', 'ModerationError', 'NotFoundError', 'PermissionDeniedError', 'PictorError', 'QuotaExhaustedError', 'RateLimitError',
  'ServerError', 'StreamBrokenError', 'TimeoutError', 'ValidationError', 'isPictorError',
  // Pricing.
  'PRICE_TABLE', 'describeQuote', 'estimatePrice', 'formatUsd', 'priceOfResult',
  // The client, its limiter and its results.
  'ImageEventStream', 'ImageLimiter', 'LocalImageBucket', 'PictorClient', 'completedEventsOf', 'decodeImages', 'imageBytes', 'imagesOfFailure',
  'isRetryable', 'resultFromCompleted',
  // The emulator.
  'DEFAULT_SETTINGS', 'DEV_API_KEY', 'EmulatedConnectionReset', 'FAULT_NAMES', 'createEmulator',
];

describe('the public entry, pictor', () => {
  it('exports the client, its errors, the spec, pricing and the emulator, and nothing else', () => {
    expect(Object.keys(publicEntry).sort()).toEqual([...PUBLIC_NAMES].sort());
  });

  it('keeps the internals behind pictor/internal, which shares no name with it', () => {
    for (const name of ['SlotSemaphore', 'withFileLock', 'connectRedis', 'RedisLink', 'envNumber', 'createLogger', 'readCoreConfig', 'JobLedger', 'FileQuotaStore', 'RedisQuotaStore', 'SpendGuard', 'withTimeout']) {
      expect(publicEntry).not.toHaveProperty(name);
      expect(internalEntry).toHaveProperty(name);
    }
    expect(Object.keys(internalEntry).filter((name) => name in publicEntry)).toEqual([]);
  });
});

describe('the entries by name', () => {
  const tsconfigPaths = async (file: string) => {
    // tsconfig.json allows comments: drop whole-line ones before parsing.
    const text = (await readFile(join(root, file), 'utf8')).replace(/^\s*\/\/.*$/gm, '');
    return (JSON.parse(text) as { compilerOptions: { paths: Record<string, string[]> } }).compilerOptions.paths;
  };

  it('resolve to the same sources for TypeScript, vitest and the n8n node’s build, and to their build for Node', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, { types: string; default: string }> };
    const rootPaths = await tsconfigPaths('tsconfig.json');
    const nodesPaths = await tsconfigPaths('nodes/tsconfig.json');
    const aliases = (vitestConfig.resolve?.alias ?? []) as { find: RegExp; replacement: string }[];
    const entries = { [pkg.name]: 'index', [`${pkg.name}/internal`]: 'internal' };
    expect(Object.keys(pkg.exports).filter((key) => key !== './package.json')).toEqual(['.', './internal']);
    for (const [name, file] of Object.entries(entries)) {
      const exported = pkg.exports[name === pkg.name ? '.' : `./${name.slice(pkg.name.length + 1)}`]!;
      expect(exported).toEqual({ types: `./dist/src/${file}.d.ts`, default: `./dist/src/${file}.js` });
      expect(rootPaths[name]).toEqual([`./src/${file}.ts`]);
      expect(nodesPaths[name]).toEqual([`../src/${file}.ts`]);
      expect(aliases.filter((alias) => alias.find.test(name)).map((alias) => alias.replacement)).toEqual([join(root, 'src', `${file}.ts`)]);
    }
  });
});
