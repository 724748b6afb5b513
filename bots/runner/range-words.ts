import { COMPRESSIBLE_FORMATS } from 'pictor';
import { INTEGER_RANGES } from 'pictor/internal';
import type { FieldNames } from './types.js';
import { anyOf, words, type Words } from './words.js';

/** The request fields a chat member sets to an integer in a range, and their bounds: the spec's (the schemas' `INTEGER_RANGES`). */
export const RANGE_FIELDS = {
  n: INTEGER_RANGES.n,
  output_compression: INTEGER_RANGES.output_compression,
} as const satisfies Record<string, readonly [number, number]>;

export type RangeField = keyof typeof RANGE_FIELDS;

export function isRangeField(field: string): field is RangeField {
  return Object.hasOwn(RANGE_FIELDS, field);
}

/**
 * A range field's value as a member gives it: a whole number in the field's range, written as digits (a number already
 * parsed, as a form gives it, counts when whole); undefined otherwise — `0x3`, `3.0`, `1e1`, `2.5` and out of range
 * alike. The one check behind `/imagine`'s `--n` and `--compression` and a workflow step's count.
 */
export function rangeValueOf(field: RangeField, raw: string | number): number | undefined {
  const value = typeof raw === 'number' ? raw : /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  const [min, max] = RANGE_FIELDS[field];
  return Number.isInteger(value) && value >= min && value <= max ? value : undefined;
}

/**
 * What a range field accepts, not yet said: "an integer from 1 to 10"; compression's names the formats it goes with and
 * the format field as the surface calls it (`fieldNames`: Slack's `--format`, Discord's `format`). The one home of
 * these words: a flag's help and a refusal of the request's fields both say them. `bounds`: the field's own by default;
 * a refusal gives those its error carries (`ValidationError.rule`).
 */
export function rangeWords(field: RangeField, fieldNames: FieldNames = {}, bounds: readonly [number, number] = RANGE_FIELDS[field]): Words {
  const [min, max] = bounds;
  if (field !== 'output_compression') return words('slack.flag.integer_range', { min, max });
  return words('slack.flag.compression_range', { min, max, flag: fieldNames.output_format ?? 'output_format', formats: anyOf(COMPRESSIBLE_FORMATS) });
}
