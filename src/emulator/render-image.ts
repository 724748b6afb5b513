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
  /** Drawn: nobody's leaving stops it any more. */
  done: boolean;
  /** The drawing's own: aborted once no asker wants it any more (their signals all aborted). */
  drawing: AbortController;
  /** Askers with a signal still waiting for it; an asker without one wants it whatever happens. */
  waiting: number;
  /** An asker without a signal is waiting for it: it is never stopped. */
  wantedForGood: boolean;
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
   * request's: when it aborts, that request stops waiting (rejecting with its
   * reason). The drawing goes on, in its place in the image work's line, while
   * another request sharing it still wants it; once none does, its image work
   * still waiting leaves the line.
   */
  render(spec: RenderSpec, partialCount: number, signal?: AbortSignal): Promise<RenderedImage> {
    if (signal?.aborted) return Promise.reject(signal.reason as unknown);
    const key = this.#keyOf(spec, partialCount);
    const hit = this.#cache.get(key);
    if (hit && !hit.drawing.signal.aborted) {
      this.#cache.delete(key);
      this.#cache.set(key, hit);
      return this.#ask(hit, signal);
    }
    const drawing = new AbortController();
    const image = renderUncached(spec, partialCount, drawing.signal);
    const entry: CacheEntry = { image, bytes: 0, done: false, drawing, waiting: 0, wantedForGood: false };
    this.#cache.set(key, entry);
    image.then(
      (done) => {
        entry.done = true;
        if (this.#cache.get(key) !== entry) return;
        entry.bytes = done.final.length + done.partials.reduce((sum, p) => sum + p.length, 0);
        this.#cacheBytes += entry.bytes;
        this.#evict();
      },
      () => {
        if (this.#cache.get(key) === entry) this.#cache.delete(key);
      },
    );
    return this.#ask(entry, signal);
  }

  /** One more asker waits for `entry`; when its signal aborts it leaves, and the last to leave stops the drawing. */
  #ask(entry: CacheEntry, signal: AbortSignal | undefined): Promise<RenderedImage> {
    if (entry.done) return entry.image;
    if (!signal) {
      entry.wantedForGood = true;
      return entry.image;
    }
    entry.waiting++;
    return new Promise<RenderedImage>((resolve, reject) => {
      const leave = () => {
        entry.waiting--;
        reject(signal.reason as unknown);
        if (entry.waiting === 0 && !entry.wantedForGood && !entry.done) entry.drawing.abort(signal.reason);
      };
      signal.addEventListener('abort', leave, { once: true });
      // Settled by the drawing unless it left first (a promise settles once; leaving counted it out already).
      const settle = () => {
        if (signal.aborted) return;
        signal.removeEventListener('abort', leave);
        entry.waiting--;
      };
      entry.image.then(
        (image) => (settle(), resolve(image)),
        (err: unknown) => (settle(), reject(err)),
      );
    });
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
