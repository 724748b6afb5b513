import { QUALITIES, SIZES, type Quality, type Size } from '../spec/constants.js';
import { ImageResultSchema } from '../spec/result-schemas.js';

/**
 * Spec §1 "Pricing": US dollars per image, service fee included. The spec shows
 * no price for quality `auto`, other sizes or edits: such costs are estimates
 * (basis `estimate`) at the highest price that could apply, never known figures.
 */
export const PRICE_TABLE: Readonly<Record<Size, Readonly<Record<Exclude<Quality, 'auto'>, number>>>> = {
  '1024x1024': { low: 0.00636, medium: 0.05618, high: 0.22366 },
  '1024x1536': { low: 0.0053, medium: 0.04346, high: 0.1749 },
  '1536x1024': { low: 0.0053, medium: 0.04346, high: 0.1749 },
};

export type PriceBasis = 'table' | 'estimate';

export interface PriceQuote {
  /** Dollars per image. */
  perImageUsd: number;
  /** Dollars for the whole request (per image × n). */
  totalUsd: number;
  n: number;
  /** `table`: the spec's price table; `estimate`: the highest price that could apply, because the spec shows none. */
  basis: PriceBasis;
  /** Why it is an estimate, in words (absent for table prices). */
  reason?: string;
}

export interface PriceQuery {
  size?: string | undefined;
  quality?: string | undefined;
  n?: number | undefined;
  /** Edits have no price in the spec: always an estimate. */
  operation?: 'generate' | 'edit';
}

const isSize = (s: string | undefined): s is Size => (SIZES as readonly string[]).includes(s ?? '');
const isTableQuality = (q: string | undefined): q is Exclude<Quality, 'auto'> =>
  (QUALITIES as readonly string[]).includes(q ?? '') && q !== 'auto';

const roundUsd = (usd: number): number => Math.round(usd * 1e6) / 1e6;

function highestPrice(sizes: readonly Size[], qualities: readonly Exclude<Quality, 'auto'>[]): number {
  let max = 0;
  for (const s of sizes) for (const q of qualities) max = Math.max(max, PRICE_TABLE[s][q]);
  return max;
}

/** Prices a request before it is sent: the figure budgets are checked against. */
export function estimatePrice(query: PriceQuery): PriceQuote {
  const n = query.n ?? 1;
  const reasons: string[] = [];
  const sizes: readonly Size[] = isSize(query.size) ? [query.size] : SIZES;
  if (!isSize(query.size)) reasons.push(`no price is shown for size ${query.size ?? '(unspecified)'}`);
  const qualities: readonly Exclude<Quality, 'auto'>[] = isTableQuality(query.quality) ? [query.quality] : ['low', 'medium', 'high'];
  if (!isTableQuality(query.quality)) reasons.push(`no price is shown for quality ${query.quality ?? 'auto'}`);
  if (query.operation === 'edit') reasons.push('no price is shown for edits');

  const perImageUsd = highestPrice(sizes, qualities);
  const quote: PriceQuote = { perImageUsd, totalUsd: roundUsd(perImageUsd * n), n, basis: reasons.length ? 'estimate' : 'table' };
  if (reasons.length) quote.reason = `${reasons.join('; ')}: the highest price that could apply`;
  return quote;
}

/** A request as its estimate reads it: what it asks for and how many images. */
export interface EstimatedRequest extends PricedRequest {
  n: number;
}

/**
 * What a request will cost at most, before it is sent: the one rule for the client's `estimate()`, the reservation the
 * spend guard makes (and what it charges an image that may have been made and did not come back).
 */
export function estimateOf(request: EstimatedRequest): PriceQuote {
  return estimatePrice({ operation: request.operation, size: request.size, quality: request.quality, n: request.n });
}

/**
 * Prices a finished job. The service reports the size and quality it really
 * used (quality `auto` resolves to a tier), so a finished generation is often a
 * table price even when its estimate was not.
 */
export function priceOfResult(input: {
  operation: 'generate' | 'edit';
  requested: { size?: string | undefined; quality?: string | undefined };
  reported?: { size?: string | undefined; quality?: string | undefined } | undefined;
  images: number;
}): PriceQuote {
  return estimatePrice({
    operation: input.operation,
    size: input.reported?.size ?? input.requested.size,
    quality: input.reported?.quality ?? input.requested.quality,
    n: input.images,
  });
}

/** What was asked of a job, to price the images that came back. */
export interface PricedRequest {
  operation: 'generate' | 'edit';
  size?: string | undefined;
  quality?: string | undefined;
}

/** The labels of the images that came back, as the result schema read them (on the first image, or the JSON result). */
export interface ReportedLabels {
  size: string;
  quality: string;
  /** The labels the service sent that the spec does not list (`size` and `quality` above are then the ones asked). */
  unlisted?: readonly string[] | undefined;
}

/**
 * What the images that came back cost (`cost`: the client's result's `cost` and the spend guard's charge alike) and the
 * size and quality their usage record keeps (`made`). Priced at the table price of what the service reported; a quality
 * without a table price (such as `auto`) at its estimate; and when the service sent a size or quality the spec does not
 * list (such as `ultra`), at the job's estimate with basis `estimate`: it may have made something dearer, and the table
 * price of what was asked would claim a certainty no one has. The record then keeps what was asked.
 */
export function priceOfImages(
  request: PricedRequest,
  reported: ReportedLabels,
  images: number,
): { cost: PriceQuote; made: { size: string | undefined; quality: string | undefined } } {
  const made = labelsOf(reported, request);
  if (reported.unlisted && reported.unlisted.length > 0) {
    const estimate = estimateOf({ ...request, n: images });
    const reason = `the service reported a ${reported.unlisted.join(' and ')} the spec does not list: the job's estimate`;
    return { cost: { ...estimate, basis: 'estimate', reason: estimate.reason ? `${estimate.reason}; ${reason}` : reason }, made };
  }
  return { cost: priceOfResult({ operation: request.operation, requested: request, reported: made, images }), made };
}

/**
 * The size and quality the images that came back are priced and kept as: each as the service reported it (on the first
 * image) when the spec lists it, else the one asked — read by the result schema, as the client reads an answer, so a
 * hostile server's long string or terminal escapes never reach a usage record, the CSV or the console; undefined when
 * neither is one the spec lists.
 */
function labelsOf(reported: { size: string; quality: string }, request: PricedRequest): { size: string | undefined; quality: string | undefined } {
  const { size, quality } = ImageResultSchema.shape;
  return { size: size.parse(reported.size) ?? size.parse(request.size), quality: quality.parse(reported.quality) ?? quality.parse(request.quality) };
}

/** The decimals a price shows: 4 under $0.10, 3 under $1, else 2 (and $0.00): enough to tell one image's price from another's. */
export function usdDigits(usd: number): number {
  return usd === 0 ? 2 : usd < 0.1 ? 4 : usd < 1 ? 3 : 2;
}

export function formatUsd(usd: number): string {
  return `$${usd.toFixed(usdDigits(usd))}`;
}

/**
 * A price with every digit it has (up to 6 decimals), at least as many as `formatUsd` shows: "$0.22375". A quote
 * shows its total and per-image price so, and the two add up ("$0.895 (4 × $0.22375)", not "4 × $0.224").
 */
export function formatUsdExact(usd: number): string {
  const shown = formatUsd(usd);
  for (let decimals = shown.length - shown.indexOf('.') - 1; decimals <= 6; decimals++) {
    if (Math.abs(Number(usd.toFixed(decimals)) - usd) < 1e-9) return `$${usd.toFixed(decimals)}`;
  }
  return `$${usd.toFixed(6)}`;
}

/** How `describeQuote` shows a quote. */
export interface DescribeQuoteOptions {
  /**
   * When the total is followed by how many images at what price each: `several` (the default) only for more than one
   * image, as the CLI prints it ("$0.00636", "$0.01272 (2 × $0.00636)"); `always`, so that one format reads on every
   * record whatever its count, as the n8n node's `cost.text` does ("$0.00636 (1 × $0.00636)").
   */
  breakdown?: 'several' | 'always';
}

/** "$0.112 (2 × $0.056)" or "up to $0.895 (4 × $0.22375), an estimate: …". */
export function describeQuote(quote: PriceQuote, options: DescribeQuoteOptions = {}): string {
  // With the breakdown every digit shows, so the product is the total shown; one image without it reads as any other price.
  const broken = quote.n > 1 || options.breakdown === 'always';
  const each = broken ? ` (${quote.n} × ${formatUsdExact(quote.perImageUsd)})` : '';
  const total = broken ? formatUsdExact(quote.totalUsd) : formatUsd(quote.totalUsd);
  return quote.basis === 'table' ? `${total}${each}` : `up to ${total}${each}, an estimate: ${quote.reason ?? 'no price shown'}`;
}
