import { LIMITS } from '../spec/constants.js';
import type { PartialImageEvent } from '../spec/result-schemas.js';

/**
 * The image a partial names itself (`image_index`, else `output_index`: a 0-based whole number), when the service
 * labels it; the events of wire-format.md carry no such label.
 */
export function imageLabelOf(event: PartialImageEvent): number | undefined {
  const labels = event as Record<string, unknown>;
  const label = labels.image_index ?? labels.output_index;
  return typeof label === 'number' && Number.isInteger(label) && label >= 0 ? label : undefined;
}

/**
 * Which output image (0-based) a partial belongs to: the one the service names (`imageLabelOf`), else the image
 * after the `completedSoFar` completed events received before it — images mostly stream one after the other, so
 * this is the best guess for an unlabelled partial, good for showing it, never for deciding whether to drop it
 * (see `PartialBound`).
 */
export function imageOfPartial(event: PartialImageEvent, completedSoFar: number): number {
  return imageLabelOf(event) ?? completedSoFar;
}

/**
 * Which partial images of a stream are handed on: at most the `partial_images` asked for per image (the most the
 * field takes when it was not sent), each with an index below that, for the `n` images asked for. A partial is a
 * preview the caller may write or upload, so a service that sends more (or without end) must not fill a disk or a
 * channel with them; the ones past the bound are skipped, never failing the job, whose final images are paid for.
 *
 * Partials are counted whatever order they come in, images interleaved or finishing out of turn:
 * - a partial the service labels with its image (`imageLabelOf`) is handed on once per image and index, for an image
 *   below `n`;
 * - an unlabelled one cannot be told apart by image, so it is counted per index over the whole stream: handed on
 *   while that index has been seen fewer than `n` times.
 * Either way a stream hands on at most `n` × `partial_images` partials.
 */
export class PartialBound {
  readonly #perImage: number;
  readonly #images: number;
  /** Unlabelled partials handed on, by index. */
  readonly #byIndex = new Map<number, number>();
  /** Labelled partials handed on, as `image:index`. */
  readonly #labelled = new Set<string>();
  #passed = 0;

  constructor(partialImages: number | undefined, n: number) {
    this.#perImage = partialImages ?? LIMITS.partialImagesMax;
    this.#images = n;
  }

  /** The partials handed on for each image, at most. */
  get perImage(): number {
    return this.#perImage;
  }

  /** Whether `event` is handed on; counts it if so. */
  admits(event: PartialImageEvent): boolean {
    const index = event.partial_image_index;
    if (index >= this.#perImage || this.#passed >= this.#perImage * this.#images) return false;
    const image = imageLabelOf(event);
    if (image === undefined) {
      const seen = this.#byIndex.get(index) ?? 0;
      if (seen >= this.#images) return false;
      this.#byIndex.set(index, seen + 1);
    } else {
      const key = `${image}:${index}`;
      if (image >= this.#images || this.#labelled.has(key)) return false;
      this.#labelled.add(key);
    }
    this.#passed++;
    return true;
  }
}
