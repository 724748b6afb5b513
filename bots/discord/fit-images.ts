import sharp from 'sharp';
import { FILE_EXTENSIONS, MIME_TYPES, type OutputFormat } from 'pictor';
import { withImageWork } from 'pictor/internal';

/** A file ready to upload. */
export interface OutgoingFile {
  name: string;
  data: Buffer;
  contentType: string;
}

export interface FitOutcome {
  file: OutgoingFile | undefined;
  /** The format it was re-encoded to, when it had to be. */
  reencodedAs: OutputFormat | undefined;
  /** Shrunk to this share of its width and height, when it had to be. */
  scale: number | undefined;
}

interface Attempt {
  format: OutputFormat;
  quality: number;
  scale: number;
}

/** Tried in order until one fits: keep the pixels first, then shrink. WebP keeps transparency; JPEG only for opaque images. */
const ATTEMPTS: readonly Attempt[] = [
  { format: 'webp', quality: 90, scale: 1 },
  { format: 'jpeg', quality: 85, scale: 1 },
  { format: 'webp', quality: 75, scale: 1 },
  { format: 'webp', quality: 75, scale: 0.75 },
  { format: 'webp', quality: 70, scale: 0.5 },
  { format: 'webp', quality: 60, scale: 0.35 },
  { format: 'webp', quality: 50, scale: 0.25 },
];

/**
 * Makes an image fit Discord's per-file upload limit: as it is when it fits,
 * else re-encoded (and if need be shrunk) with sharp, one attempt at a time
 * among the process's image work (`withImageWork`). `file` is undefined when
 * nothing fits, so the caller can say so.
 */
export async function fitImage(image: Buffer, format: OutputFormat, baseName: string, limitBytes: number): Promise<FitOutcome> {
  if (image.length <= limitBytes) {
    return { file: { name: `${baseName}.${FILE_EXTENSIONS[format]}`, data: image, contentType: MIME_TYPES[format] }, reencodedAs: undefined, scale: undefined };
  }
  let meta: sharp.Metadata;
  try {
    meta = await withImageWork(() => sharp(image).metadata());
  } catch {
    return { file: undefined, reencodedAs: undefined, scale: undefined };
  }
  const hasAlpha = meta.hasAlpha === true;
  for (const attempt of ATTEMPTS) {
    if (attempt.format === 'jpeg' && hasAlpha) continue;
    let pipeline = sharp(image);
    if (attempt.scale < 1 && meta.width) pipeline = pipeline.resize({ width: Math.max(1, Math.round(meta.width * attempt.scale)) });
    const data = await withImageWork(() => (attempt.format === 'jpeg' ? pipeline.jpeg({ quality: attempt.quality }) : pipeline.webp({ quality: attempt.quality })).toBuffer());
    if (data.length <= limitBytes) {
      return {
        file: { name: `${baseName}.${FILE_EXTENSIONS[attempt.format]}`, data, contentType: MIME_TYPES[attempt.format] },
        reencodedAs: attempt.format,
        scale: attempt.scale < 1 ? attempt.scale : undefined,
      };
    }
  }
  return { file: undefined, reencodedAs: undefined, scale: undefined };
}

/** "10 MB", "512 KB". */
export function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Number((bytes / 1024 / 1024).toFixed(1))} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}
