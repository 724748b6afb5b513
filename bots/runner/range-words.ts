import { COMPRESSIBLE_FORMATS, LIMITS } from 'pictor';
import type { FieldNames } from './types.js';
import { anyOf, words, type Words } from './words.js';

/** The request fields a chat member sets to an integer in a range, and the spec's bounds. */
export const RANGE_FIELDS = {
  n: [LIMITS.nMin, LIMITS.nMax],
  output_compression: [LIMITS.compressionMin, LIMITS.compressionMax],
} as const satisfies Record<string, readonly [number, number]>;

export type RangeField = keyof typeof RANGE_FIELDS;

export function isRangeField(field: string): field is RangeField {
  return Object.hasOwn(RANGE_FIELDS, field);
}

/**
 * What a range field accepts, not yet said: "an integer from 1 to 10"; compression's names the formats it goes with and
 * the format field as the surface calls it (`fieldNames`: Slack's `--format`, Discord's `format`). The one home of
 * these words: a flag's help and a refusal of the request's fields both say them.
 */
export function rangeWords(field: RangeField, fieldNames: FieldNames = {}): Words {
  const [min, max] = RANGE_FIELDS[field];
  if (field !== 'output_compression') return words('slack.flag.integer_range', { min, max });
  return words('slack.flag.compression_range', { min, max, flag: fieldNames.output_format ?? 'output_format', formats: anyOf(COMPRESSIBLE_FORMATS) });
}
