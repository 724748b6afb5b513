import { silentLogger } from '../../src/internal.js';

/** A silent logger that keeps the message of each warning. */
export function warningsKept(): { logger: ReturnType<typeof silentLogger>; warnings: string[] } {
  const warnings: string[] = [];
  return { logger: { ...silentLogger(), warn: (_: object, msg?: string) => void warnings.push(String(msg)) }, warnings };
}
