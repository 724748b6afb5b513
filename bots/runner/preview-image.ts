import sharp from 'sharp';
import { type LoggerLike, type OutputFormat } from 'pictor';
import { SlotSemaphore, withImageWork } from 'pictor/internal';
import type { PreviewImage } from './types.js';

/** Longest side of a light preview, in pixels: about what Discord and Slack show of an image inline. */
export const PREVIEW_LONGEST_SIDE = 512;
/** JPEG quality of a light preview of an opaque partial. */
const PREVIEW_JPEG_QUALITY = 80;
/** Re-encodings of one runner at once (each uses libvips' threads, and the process's image work: `withImageWork`); the others wait their turn. */
const DEFAULT_MAX_AT_ONCE = 2;

export interface PreviewEncoderOptions {
  /** Re-encode previews (`PICTOR_LIGHT_PREVIEWS`); false: every preview is the partial as the service sent it. Default true. */
  enabled?: boolean | undefined;
  logger: LoggerLike;
  /** Re-encodings at once. Default 2. */
  maxAtOnce?: number | undefined;
}

/**
 * Turns a partial image into the preview a surface uploads: at most
 * `PREVIEW_LONGEST_SIDE` px on its longest side, as JPEG (an opaque image,
 * which both Discord and Slack show inline) or as a palette PNG (an image with
 * transparency). A partial that cannot be re-encoded, or that would not get
 * smaller, is shown as it came: the preview never fails the job. Finals never
 * pass through here.
 */
export class PreviewEncoder {
  readonly enabled: boolean;
  readonly #logger: LoggerLike;
  readonly #slots: SlotSemaphore;

  constructor(options: PreviewEncoderOptions) {
    this.enabled = options.enabled ?? true;
    this.#logger = options.logger;
    this.#slots = new SlotSemaphore(options.maxAtOnce ?? DEFAULT_MAX_AT_ONCE);
  }

  /** Re-encodings waiting for their turn. */
  get waiting(): number {
    return this.#slots.waiting;
  }

  /** The preview of one partial; never rejects. */
  async encode(image: Buffer, format: OutputFormat, jobId: string): Promise<PreviewImage> {
    const original: PreviewImage = { data: image, format, light: false };
    if (!this.enabled) return original;
    const release = await this.#slots.take();
    try {
      const light = await withImageWork(() => reencode(image));
      return light.data.length < image.length ? light : original;
    } catch (error) {
      this.#logger.warn({ jobId, bytes: image.length, err: error instanceof Error ? error.message : String(error) }, 'could not re-encode a preview; showing the partial as it came');
      return original;
    } finally {
      release();
    }
  }
}

async function reencode(image: Buffer): Promise<PreviewImage> {
  // One instance: the header read for the alpha check is not parsed twice.
  const pipeline = sharp(image);
  const { hasAlpha } = await pipeline.metadata();
  pipeline.resize({ width: PREVIEW_LONGEST_SIDE, height: PREVIEW_LONGEST_SIDE, fit: 'inside', withoutEnlargement: true });
  if (hasAlpha) return { data: await pipeline.png({ palette: true }).toBuffer(), format: 'png', light: true };
  // libjpeg-turbo's defaults, not mozjpeg: about a third faster here, and a preview lives seconds.
  return { data: await pipeline.jpeg({ quality: PREVIEW_JPEG_QUALITY }).toBuffer(), format: 'jpeg', light: true };
}
