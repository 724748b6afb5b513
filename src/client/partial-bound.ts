import { LIMITS } from '../spec/constants.js';

/**
 * Which partial images of a stream are handed on: at most the `partial_images` asked for per image (the most the
 * field takes when it was not sent), each with an index below that, and none for an image past the `n` asked for.
 * A partial is a preview the caller may write or upload, so a service that sends more (or without end) must not
 * fill a disk or a channel with them; the ones past the bound are skipped, never failing the job, whose final
 * images are paid for.
 *
 * A partial belongs to the image being made: the one after the completed events received so far.
 */
export class PartialBound {
  readonly #perImage: number;
  readonly #images: number;
  /** The image the partials counted below belong to. */
  #image = 0;
  /** Partials of that image handed on. */
  #passed = 0;

  constructor(partialImages: number | undefined, n: number) {
    this.#perImage = partialImages ?? LIMITS.partialImagesMax;
    this.#images = n;
  }

  /** The partials handed on for each image, at most. */
  get perImage(): number {
    return this.#perImage;
  }

  /** Whether the partial `index` of image `image` (0-based: the completed events before it) is handed on; counts it if so. */
  admits(image: number, index: number): boolean {
    if (image !== this.#image) {
      this.#image = image;
      this.#passed = 0;
    }
    if (image >= this.#images || index >= this.#perImage || this.#passed >= this.#perImage) return false;
    this.#passed++;
    return true;
  }
}
