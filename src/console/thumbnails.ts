import { withImageWork } from '../core/image-work.js';
import { mimeTypeOf, sniffImageType } from '../spec/image-type.js';
import type { BotsView, KeptImages } from './source.js';

/** A thumbnail's longest side, in pixels (shown at 64, sharp on dense screens). */
const THUMB_PX = 128;
const CACHED = 64;

/**
 * Thumbnails of the images the bots keep (`BotsView.images`), made when
 * first asked for (sharp, WebP) and kept for the last 64 asked: a job nobody
 * looks at costs nothing. A thumbnail is served from there only while the bots
 * still keep its image (a member's forget, or the images' bound, drops it): `KeptImages.has`, asked of that
 * image alone.
 * `full` gives the kept image as it is.
 */
export class Thumbnails {
  readonly #images: KeptImages | undefined;
  readonly #cache = new Map<string, { data: Buffer; type: string }>();

  constructor(bots: BotsView | undefined) {
    this.#images = bots?.images;
  }

  async get(jobId: string, index: number, full: boolean): Promise<{ data: Buffer; type: string } | undefined> {
    const images = this.#images;
    if (!images) return undefined;
    const key = `${jobId}/${index}/${full ? 'full' : 'thumb'}`;
    const cached = this.#cache.get(key);
    if (cached) {
      this.#cache.delete(key);
      if (!(await images.has(jobId, index).catch(() => false))) return undefined;
      this.#cache.set(key, cached);
      return cached;
    }
    const kept = await images.read(jobId, index).catch(() => undefined);
    if (!kept) return undefined;
    const format = sniffImageType(kept.data);
    // Only images of the formats the service makes are served (never whatever bytes a store held).
    if (!format) return undefined;
    let image: { data: Buffer; type: string };
    if (full) {
      image = { data: kept.data, type: mimeTypeOf(format) };
    } else {
      const { default: sharp } = await import('sharp');
      // Within the process's bound on image work: a page of thumbnails never takes the thread pool the bots' state needs.
      const data = await withImageWork(() => sharp(kept.data).resize(THUMB_PX, THUMB_PX, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 70 }).toBuffer());
      image = { data, type: 'image/webp' };
    }
    if (!full) {
      this.#cache.set(key, image);
      while (this.#cache.size > CACHED) this.#cache.delete(this.#cache.keys().next().value!);
    }
    return image;
  }
}
