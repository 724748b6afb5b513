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

/**
 * Shapes a finished request as n8n items: one item per image (or all on one),
 * each image in a binary field with its real MIME type (the format the client
 * labelled it with, told by its bytes),
 * file extension and name, and json saying what was made and what it cost.
 */
export async function toOutputItems(ctx: IExecuteFunctions, result: ImageJobResult, shape: OutputShape): Promise<INodeExecutionData[]> {
  const buffers = decodeImages(result);
  const images = await Promise.all(
    buffers.map(async (bytes, imageIndex) => {
      // The client's label: each image's real format, told by its bytes when the answer was checked (an answer may mix them).
      const format = result.data[imageIndex]?.output_format ?? (result.output_format as OutputFormat);
      const fileName = `pictor-${shape.operation}-${result.created}-${shape.itemIndex + 1}-${imageIndex + 1}.${FILE_EXTENSIONS[format] ?? format}`;
      const binary = await ctx.helpers.prepareBinaryData(bytes, fileName, MIME_TYPES[format] ?? 'application/octet-stream');
      return { imageIndex, format, fileName, binary };
    }),
  );
  const common: IDataObject = {
    operation: shape.operation,
    prompt: shape.prompt,
    itemIndex: shape.itemIndex,
    size: result.size,
    quality: result.quality,
    background: result.background,
    imagesInRequest: images.length,
    usage: (result.usage as IDataObject | undefined) ?? null,
    requestId: result.requestId ?? null,
    created: result.created,
  };
  const pairedItem = { item: shape.itemIndex };

  if (shape.allImagesOnOneItem) {
    const binary: IBinaryKeyData = {};
    for (const image of images) binary[`${shape.binaryPropertyName}_${image.imageIndex}`] = image.binary;
    return [
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
  }
  return images.map((image) => ({
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
}
