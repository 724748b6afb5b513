import { NodeOperationError, type IExecuteFunctions } from 'n8n-workflow';
import type { EditImage } from 'pictor';
import { FIELD_PARAMETERS } from './node-properties.js';

/**
 * Reads the input images of an Edit from the item's binary fields, in the
 * order named. Their real type is checked later by the core, from the bytes.
 */
export async function readInputImages(ctx: IExecuteFunctions, itemIndex: number, fieldNames: readonly string[]): Promise<EditImage[]> {
  const binary = ctx.getInputData()[itemIndex]?.binary ?? {};
  const images: EditImage[] = [];
  for (const [index, name] of fieldNames.entries()) {
    if (!binary[name]) {
      const present = Object.keys(binary);
      const error = new NodeOperationError(ctx.getNode(), `${FIELD_PARAMETERS.image.displayName}: the input item has no binary field "${name}"`, {
        itemIndex,
        description: present.length
          ? `Binary fields on this item: ${present.join(', ')}.`
          : 'This item has no binary data. Put the images to edit in binary fields first (e.g. with Read/Write Files from Disk or HTTP Request).',
      });
      // Bad input like any the core refuses: the request's field is the image at this place, as the core names it.
      Object.assign(error.context, { parameter: `image[${index}]`, code: 'validation_error' });
      throw error;
    }
    const meta = ctx.helpers.assertBinaryData(itemIndex, name);
    const bytes = await ctx.helpers.getBinaryDataBuffer(itemIndex, name);
    images.push({ data: new Uint8Array(bytes), filename: meta.fileName ?? name });
  }
  return images;
}
