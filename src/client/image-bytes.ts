/**
 * The bytes of the images the client hands over, decoded once. The client
 * decodes every image to check it (see check-result.ts) and keeps the bytes
 * here, keyed by the object that carries the image's base64 (a result's
 * `data` entry, a completed event), for as long as that object lives.
 */
const decoded = new WeakMap<object, Buffer>();

/**
 * The bytes of one image of a result or of a completed event: the ones the
 * client decoded when it checked the image, else decoded now and kept, so an
 * image is decoded once however often it is asked for. Every caller gets the
 * same Buffer: copy it before changing it.
 */
export function imageBytes(image: { readonly b64_json: string }): Buffer {
  let bytes = decoded.get(image);
  if (bytes === undefined) {
    bytes = Buffer.from(image.b64_json, 'base64');
    decoded.set(image, bytes);
  }
  return bytes;
}

/** Keeps the bytes of `image`'s base64, decoded by the client's check. */
export function keepImageBytes(image: object, bytes: Buffer): void {
  decoded.set(image, bytes);
}

/** Hands the bytes kept for `from` (if any) to `to`, an object carrying the same base64. */
export function carryImageBytes(from: object, to: object): void {
  const bytes = decoded.get(from);
  if (bytes !== undefined) decoded.set(to, bytes);
}
