import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { withImageWork } from '../core/image-work.js';
import { parseSize, type OutputFormat, type Size } from '../spec/index.js';
import { artSvg, editOverlaySvg, subjectMaskSvg } from './prompt-art.js';

/** Everything that decides an image's bytes. */
export interface RenderSpec {
  prompt: string;
  /** Which image of the batch (0-based); each gets its own shapes. */
  variant: number;
  size: Size;
  transparent: boolean;
  format: OutputFormat;
  /** `output_compression` (0–100) for JPEG and WebP. */
  compression: number | undefined;
  /** Edit inputs, first one is the base. Absent for a generation. */
  inputs?: readonly Uint8Array[] | undefined;
}

export interface RenderedImage {
  /** The finished image. */
  final: Buffer;
  /** Previews, index 0 the coarsest; each closer to `final` than the one before. */
  partials: Buffer[];
}

/** JPEG/WebP quality when `output_compression` is not given (assumption: the service's default is high). */
const DEFAULT_QUALITY = 90;
/** Bytes of rendered images kept for requests that ask for the same thing again. */
const DEFAULT_CACHE_BYTES = 96 * 1024 * 1024;

interface CacheEntry {
  image: Promise<RenderedImage>;
  bytes: number;
  /** The signal of the request that started the drawing. */
  signal: AbortSignal | undefined;
}

interface RawImage {
  data: Buffer;
  width: number;
  height: number;
}

/**
 * Renders real images with sharp: a generation from its prompt (palette and
 * shapes from the prompt's hash), an edit from its inputs (the first as base,
 * the others as thumbnails, the prompt's tint and shapes laid over). The same
 * spec always gives the same bytes; results are cached by spec.
 */
export class ImageRenderer {
  readonly #cache = new Map<string, CacheEntry>();
  readonly #maxCacheBytes: number;
  readonly #digests = new WeakMap<Uint8Array, string>();
  #cacheBytes = 0;

  constructor(options: { maxCacheBytes?: number } = {}) {
    this.#maxCacheBytes = options.maxCacheBytes ?? DEFAULT_CACHE_BYTES;
  }

  /**
   * The images for `spec`, from the cache or drawn. `signal` is the asking
   * request's: when it aborts, the drawing's image work still waiting leaves
   * the line. Another request that was sharing that drawing draws it anew.
   */
  render(spec: RenderSpec, partialCount: number, signal?: AbortSignal): Promise<RenderedImage> {
    const key = this.#keyOf(spec, partialCount);
    const hit = this.#cache.get(key);
    if (hit) {
      this.#cache.delete(key);
      this.#cache.set(key, hit);
      if (hit.signal === signal) return hit.image;
      return hit.image.catch((err: unknown) => {
        if (hit.signal?.aborted && !signal?.aborted) return this.render(spec, partialCount, signal);
        throw err;
      });
    }
    const image = renderUncached(spec, partialCount, signal);
    const entry: CacheEntry = { image, bytes: 0, signal };
    this.#cache.set(key, entry);
    image.then(
      (done) => {
        if (this.#cache.get(key) !== entry) return;
        entry.bytes = done.final.length + done.partials.reduce((sum, p) => sum + p.length, 0);
        this.#cacheBytes += entry.bytes;
        this.#evict();
      },
      () => {
        if (this.#cache.get(key) === entry) this.#cache.delete(key);
      },
    );
    return image;
  }

  clear(): void {
    this.#cache.clear();
    this.#cacheBytes = 0;
  }

  #evict(): void {
    for (const [key, entry] of this.#cache) {
      if (this.#cacheBytes <= this.#maxCacheBytes) break;
      this.#cache.delete(key);
      this.#cacheBytes -= entry.bytes;
    }
  }

  #keyOf(spec: RenderSpec, partialCount: number): string {
    const inputs = (spec.inputs ?? []).map((bytes) => this.#digest(bytes));
    return JSON.stringify([spec.prompt, spec.variant, spec.size, spec.transparent, spec.format, spec.compression ?? null, partialCount, inputs]);
  }

  #digest(bytes: Uint8Array): string {
    let digest = this.#digests.get(bytes);
    if (!digest) {
      digest = createHash('sha256').update(bytes).digest('hex');
      this.#digests.set(bytes, digest);
    }
    return digest;
  }
}

async function renderUncached(spec: RenderSpec, partialCount: number, signal: AbortSignal | undefined): Promise<RenderedImage> {
  const raw = spec.inputs && spec.inputs.length > 0 ? await renderEditRaw(spec, spec.inputs, signal) : await renderGenerationRaw(spec, signal);
  const final = encode(raw, spec, signal);
  final.catch(() => undefined);
  const partials = Array.from({ length: partialCount }, (_, index) =>
    pixelate(raw, partialDivisor(index, partialCount), signal).then((coarse) => encode(coarse, spec, signal)),
  );
  for (const partial of partials) partial.catch(() => undefined);
  return { final: await final, partials: await Promise.all(partials) };
}

/**
 * How coarse partial `index` of `count` is: blocks of 8 px for the last one,
 * doubling for each earlier one (3 partials: 32, 16, 8).
 */
export function partialDivisor(index: number, count: number): number {
  return 2 ** (3 + (count - 1 - index));
}

async function renderGenerationRaw(spec: RenderSpec, signal: AbortSignal | undefined): Promise<RawImage> {
  const { width, height } = parseSize(spec.size);
  const svg = artSvg({ prompt: spec.prompt, variant: spec.variant, width, height, transparent: spec.transparent });
  const data = await withImageWork(() => sharp(Buffer.from(svg)).resize(width, height, { fit: 'fill' }).ensureAlpha().raw().toBuffer(), signal);
  return { data, width, height };
}

async function renderEditRaw(spec: RenderSpec, inputs: readonly Uint8Array[], signal: AbortSignal | undefined): Promise<RawImage> {
  const { width, height } = parseSize(spec.size);
  const [first, ...others] = inputs;
  const base = await withImageWork(() => sharp(first!).rotate().resize(width, height, { fit: 'cover' }).ensureAlpha().raw().toBuffer(), signal);

  const composites: sharp.OverlayOptions[] = [];
  const thumb = Math.round(Math.min(width, height) / 7);
  const margin = Math.max(4, Math.round(thumb / 8));
  const perRow = Math.max(1, Math.floor((width - margin) / (thumb + margin)));
  const thumbs = await Promise.all(
    others.map((bytes) => withImageWork(() => sharp(bytes).rotate().resize(thumb, thumb, { fit: 'cover' }).ensureAlpha().png({ compressionLevel: 0 }).toBuffer(), signal)),
  );
  thumbs.forEach((input, i) => {
    const row = Math.floor(i / perRow);
    const top = height - (row + 1) * (thumb + margin);
    if (top < 0) return;
    composites.push({ input, left: margin + (i % perRow) * (thumb + margin), top });
  });
  const art = { prompt: spec.prompt, variant: spec.variant, width, height, transparent: spec.transparent };
  composites.push({ input: Buffer.from(editOverlaySvg(art)), left: 0, top: 0 });
  if (spec.transparent) composites.push({ input: Buffer.from(subjectMaskSvg(width, height)), left: 0, top: 0, blend: 'dest-in' });

  const data = await withImageWork(() => sharp(base, { raw: { width, height, channels: 4 } }).composite(composites).raw().toBuffer(), signal);
  return { data, width, height };
}

async function pixelate(raw: RawImage, divisor: number, signal: AbortSignal | undefined): Promise<RawImage> {
  const small = await withImageWork(() =>
    sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 4 } })
      .resize(Math.max(1, Math.ceil(raw.width / divisor)), Math.max(1, Math.ceil(raw.height / divisor)), { fit: 'fill' })
      .raw()
      .toBuffer({ resolveWithObject: true }),
    signal,
  );
  const data = await withImageWork(() =>
    sharp(small.data, { raw: { width: small.info.width, height: small.info.height, channels: 4 } })
      .resize(raw.width, raw.height, { fit: 'fill', kernel: 'nearest' })
      .raw()
      .toBuffer(),
    signal,
  );
  return { data, width: raw.width, height: raw.height };
}

function encode(raw: RawImage, spec: RenderSpec, signal: AbortSignal | undefined): Promise<Buffer> {
  let image = sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 4 } });
  if (!spec.transparent) image = image.flatten({ background: '#ffffff' });
  const quality = Math.max(1, Math.min(100, spec.compression ?? DEFAULT_QUALITY));
  switch (spec.format) {
    case 'png':
      return withImageWork(() => image.png({ compressionLevel: 6 }).toBuffer(), signal);
    case 'jpeg':
      return withImageWork(() => image.jpeg({ quality }).toBuffer(), signal);
    case 'webp':
      return withImageWork(() => image.webp({ quality, alphaQuality: 100, effort: 2 }).toBuffer(), signal);
  }
}
