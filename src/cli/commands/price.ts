import { describeQuote, estimatePrice } from '../../core/pricing.js';
import { parseGenerationRequest } from '../../spec/validate.js';
import { ValidationError } from '../../core/errors.js';
import { numberFlag, parseFlags, PRICE_FLAGS, withFlagName } from '../flags.js';
import type { CliContext } from '../context.js';

export const PRICE_USAGE = `Usage: pictor price [--size WxH] [--quality Q] [--n N] [--edit] [--json]

  --size WxH     1024x1024 (default), 1024x1536, 1536x1024
  --quality Q    low, medium, high, auto (default auto)
  --n N          images, 1–10 (default 1)
  --edit         price an edit instead of a generation
  --json         print one machine-readable result

Prints what a request costs at most, and whether that comes from the spec's price table or is an estimate.`;

export async function runPrice(args: string[], ctx: CliContext): Promise<number> {
  const values = parseFlags(args, PRICE_FLAGS, 'price');
  if (values.help) {
    ctx.stdout(PRICE_USAGE);
    return 0;
  }
  let request;
  try {
    // The same rules as a real request, so a price is never quoted for something the service would refuse.
    request = parseGenerationRequest({ prompt: 'price', size: values.size, quality: values.quality, n: numberFlag(values.n) });
  } catch (error) {
    throw error instanceof ValidationError ? withFlagName(error) : error;
  }
  const quote = estimatePrice({ operation: values.edit ? 'edit' : 'generate', size: request.size, quality: request.quality, n: request.n });
  if (values.json) ctx.stdout(JSON.stringify({ ok: true, ...quote, size: request.size, quality: request.quality }));
  else ctx.stdout(`${request.n} × ${request.size} ${request.quality}${values.edit ? ' (edit)' : ''}: ${describeQuote(quote)} [basis: ${quote.basis}]`);
  return 0;
}
