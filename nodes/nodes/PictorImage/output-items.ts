import type { IBinaryKeyData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { type PriceQuote, decodeImages, describeQuote, type ImageJobResult, FILE_EXTENSIONS, MIME_TYPES, type OutputFormat } from 'pictor';
import type { Operation } from './node-properties.js';

export interface OutputShape {
  itemIndex: number;
  operation: Operation;
  prompt: string;
  binaryPropertyName: string;
  allImagesOnOneItem: boolean;
}

/**
 * The cost of `images` images of a result, with its basis (`table` or `estimate`) spelled out. Its `text` is the core's
 * description of the quote with its breakdown always shown, so one format reads on every item (one image, or all of a
 * request's on one) and its figures are those of `usd` and `perImageUsd`: "$0.00636 (1 × $0.00636)".
 */
function costOf(quote: PriceQuote, images: number): IDataObject {
  const share: PriceQuote = { ...quote, n: images, totalUsd: Math.round(quote.perImageUsd * images * 1e6) / 1e6 };
  return {
    usd: share.totalUsd,
    perImageUsd: quote.perImageUsd,
    basis: quote.basis,
    ...(quote.reason ? { reason: quote.reason } : {}),
    text: describeQuote(share, { breakdown: 'always' }),
  };
}

/** A request's images as n8n items, and how many of its images n8n could not store (they were made, so paid). */
export interface OutputItems {
  items: INodeExecutionData[];
  /** How many images the service made for the request (each paid for), stored or not. */
  made: number;
  /** How many of the request's images n8n's binary data store refused (a full disk, a binary data mode error). */
  notStored: number;
  /** Why the first of them was refused. */
  storeError?: unknown;
}

/**
 * Shapes a finished request as n8n items: one item per image (or all on one),
 * each image in a binary field with its real MIME type (the format the client
 * labelled it with, told by its bytes),
 * file extension and name, and json saying what was made and what it cost.
 * Every image n8n stored is output, whatever became of the others: they are paid.
 */
export async function toOutputItems(ctx: IExecuteFunctions, result: ImageJobResult, shape: OutputShape): Promise<OutputItems> {
  const buffers = decodeImages(result);
  const settled = await Promise.allSettled(
    buffers.map(async (bytes, imageIndex) => {
      // The client's label: each image's real format, told by its bytes when the answer was checked (an answer may mix them).
      const format = result.data[imageIndex]?.output_format ?? (result.output_format as OutputFormat);
      const fileName = `pictor-${shape.operation}-${result.created}-${shape.itemIndex + 1}-${imageIndex + 1}.${FILE_EXTENSIONS[format] ?? format}`;
      const binary = await ctx.helpers.prepareBinaryData(bytes, fileName, MIME_TYPES[format] ?? 'application/octet-stream');
      return { imageIndex, format, fileName, binary };
    }),
  );
  const images = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  const refused = settled.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
  const stored = { made: buffers.length, notStored: refused.length, ...(refused.length > 0 ? { storeError: refused[0] } : {}) };
  if (images.length === 0) return { items: [], ...stored };
  const common: IDataObject = {
    operation: shape.operation,
    prompt: shape.prompt,
    itemIndex: shape.itemIndex,
    size: result.size,
    quality: result.quality,
    background: result.background,
    imagesInRequest: buffers.length,
    usage: (result.usage as IDataObject | undefined) ?? null,
    requestId: result.requestId ?? null,
    created: result.created,
  };
  const pairedItem = { item: shape.itemIndex };

  if (shape.allImagesOnOneItem) {
    const binary: IBinaryKeyData = {};
    for (const image of images) binary[`${shape.binaryPropertyName}_${image.imageIndex}`] = image.binary;
    const items: INodeExecutionData[] = [
      {
        json: {
          ...common,
          format: images[0]?.format ?? result.output_format,
          cost: costOf(result.cost, images.length),
          images: images.map((image) => ({
            imageIndex: image.imageIndex,
            binaryField: `${shape.binaryPropertyName}_${image.imageIndex}`,
            fileName: image.fileName,
            format: image.format,
          })),
        },
        binary,
        pairedItem,
      },
    ];
    return { items, ...stored };
  }
  const items = images.map((image) => ({
    json: {
      ...common,
      imageIndex: image.imageIndex,
      format: image.format,
      fileName: image.fileName,
      cost: costOf(result.cost, 1),
    },
    binary: { [shape.binaryPropertyName]: image.binary },
    pairedItem,
  }));
  return { items, ...stored };
}
