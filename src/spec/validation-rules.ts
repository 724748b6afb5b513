import type { z } from 'zod';
import type { ValidationRule } from '../core/errors.js';
import { LIMITS } from './constants.js';

/** The fields that take a whole number, and its bounds. */
export const INTEGER_RANGES = {
  n: [LIMITS.nMin, LIMITS.nMax],
  output_compression: [LIMITS.compressionMin, LIMITS.compressionMax],
  partial_images: [LIMITS.partialImagesMin, LIMITS.partialImagesMax],
} as const satisfies Record<string, readonly [number, number]>;

/** A rule of the schemas' own checks as their custom issue carries it (`params.rule`), for `ValidationError.rule`. */
export function ruled(rule: ValidationRule): { rule: ValidationRule } {
  return { rule };
}

/**
 * The rule an issue broke: from zod's own data (a value not among an enum's, a whole-number field out of its range or
 * not a whole number) or the one the schemas' own checks attach (`ruled`). None for any other issue.
 */
export function ruleOf(issue: z.core.$ZodIssue, field: string): ValidationRule | undefined {
  switch (issue.code) {
    case 'custom':
      return (issue.params as { rule?: ValidationRule } | undefined)?.rule;
    case 'invalid_value':
      return { kind: 'one_of', values: issue.values.map(String), fields: [field] };
    case 'too_small':
    case 'too_big':
    case 'invalid_type': {
      if (!Object.hasOwn(INTEGER_RANGES, field)) return undefined;
      const [min, max] = INTEGER_RANGES[field as keyof typeof INTEGER_RANGES];
      return { kind: 'integer_range', min, max, fields: [field] };
    }
    default:
      return undefined;
  }
}
