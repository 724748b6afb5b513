import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { decodeImages, resultFromCompleted, type ImageJobResult } from '../../client/job-result.js';
import { ValidationError } from '../../core/errors.js';
import { describeQuote, estimatePrice } from '../../core/pricing.js';
import type { OutputFormat } from '../../spec/constants.js';
import { parseEditRequest, parseGenerationRequest } from '../../spec/validate.js';
import { isPartialEvent, type CompletedEvent } from '../../spec/result-schemas.js';
import { IMAGE_FLAGS, parseFlags, requestFieldsFromFlags, withFlagName } from '../flags.js';
import { jobNameOf, planOutput, writeOutput } from '../output-paths.js';
import type { CliContext } from '../context.js';

const EDIT_FLAGS = { ...IMAGE_FLAGS, image: { type: 'string', multiple: true } } as const;

/** `pictor generate …` and `pictor edit …`: validate, send (streamed or not), write the files, print where and the cost. */
export async function runImageJob(operation: 'generate' | 'edit', args: string[], ctx: CliContext): Promise<number> {
  const values = parseFlags(args, operation === 'edit' ? EDIT_FLAGS : IMAGE_FLAGS);
  if (values.help) {
    ctx.stdout(operation === 'edit' ? EDIT_USAGE : GENERATE_USAGE);
    return 0;
  }
  const fields = requestFieldsFromFlags(values);
  let input: Record<string, unknown> = fields;
  if (operation === 'edit') {
    const files = (values as { image?: string[] }).image ?? [];
    if (files.length === 0) throw new ValidationError('image', '--image is required: give at least one PNG, JPEG or WebP file');
    const image = await Promise.all(
      files.map(async (file) => {
        try {
          return { data: new Uint8Array(await readFile(file)), filename: basename(file) };
        } catch (error) {
          throw new ValidationError('image', `--image: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
        }
      }),
    );
    input = { ...fields, image };
  }

  // Validate before connecting: bad input never reaches the service.
  let request;
  try {
    request = operation === 'edit' ? parseEditRequest(input) : parseGenerationRequest(input);
  } catch (error) {
    throw error instanceof ValidationError ? withFlagName(error) : error;
  }
  const estimate = estimatePrice({ operation, size: request.size, quality: request.quality, n: request.n });
  const plan = await planOutput(values.out, jobNameOf(request.prompt));
  const connection = await ctx.connect();
  try {
    if (connection.emulatorUrl) ctx.stderr(`No PICTOR_BASE_URL set: using an embedded emulator at ${connection.emulatorUrl} (no money is spent).`);
    const started = Date.now();
    const partialFiles: string[] = [];
    let result: ImageJobResult;
    const requestOptions = {
      onQueuePosition: (ahead: number) => ahead > 0 && ctx.stderr(`queued, ${ahead} ahead`),
      onRetry: ({ attempt, delayMs, error }: { attempt: number; delayMs: number; error: { code: string } }) =>
        ctx.stderr(`retry ${attempt} in ${(delayMs / 1000).toFixed(1)} s (${error.code})`),
    };
    if (values.stream) {
      const stream =
        operation === 'edit'
          ? ctx.client(connection).editStream(input as never, requestOptions)
          : ctx.client(connection).generateStream(input as never, requestOptions);
      const completed: CompletedEvent[] = [];
      const wanted = request.partial_images;
      let imageIndex = 0;
      for await (const event of stream) {
        if (isPartialEvent(event)) {
          const bytes = Buffer.from(event.b64_json, 'base64');
          const path = plan.partialPath(imageIndex, event.partial_image_index, request.n, event.output_format);
          await writeOutput(path, bytes);
          partialFiles.push(path);
          ctx.stderr(`partial ${event.partial_image_index + 1}${wanted !== undefined ? `/${wanted}` : ''} of image ${imageIndex + 1}/${request.n} → ${path}`);
        } else {
          completed.push(event);
          imageIndex++;
          ctx.stderr(`image ${imageIndex}/${request.n} done`);
        }
      }
      result = resultFromCompleted(completed, { operation, size: request.size, quality: request.quality }, stream.requestId);
    } else {
      result =
        operation === 'edit'
          ? await ctx.client(connection).edit(input as never, requestOptions)
          : await ctx.client(connection).generate(input as never, requestOptions);
    }
    const images = decodeImages(result);
    const files: string[] = [];
    for (const [i, bytes] of images.entries()) {
      const path = plan.finalPath(i, images.length, result.output_format as OutputFormat);
      await writeOutput(path, bytes);
      files.push(path);
    }
    const seconds = (Date.now() - started) / 1000;
    if (values.json) {
      ctx.stdout(
        JSON.stringify({
          ok: true,
          operation,
          files,
          partials: partialFiles,
          size: result.size,
          quality: result.quality,
          background: result.background,
          output_format: result.output_format,
          usage: result.usage ?? null,
          cost: result.cost,
          estimate,
          requestId: result.requestId ?? null,
          seconds,
        }),
      );
    } else {
      ctx.stdout(`Wrote ${files.length} image${files.length === 1 ? '' : 's'} (${result.size}, ${result.quality}, ${result.output_format}) in ${seconds.toFixed(1)} s:`);
      for (const f of files) ctx.stdout(`  ${f}`);
      if (partialFiles.length) ctx.stdout(`and ${partialFiles.length} partial image${partialFiles.length === 1 ? '' : 's'} beside them.`);
      ctx.stdout(`Cost: ${describeQuote(result.cost)}`);
    }
    return 0;
  } finally {
    await connection.close();
  }
}

const COMMON_OPTIONS = `  --n N                 images to make, 1–10 (default 1)
  --size WxH            1024x1024 (default), 1024x1536, 1536x1024
  --quality Q           low, medium, high, auto (default auto)
  --background B        transparent, opaque, auto (default auto)
  --format F            png (default), jpeg, webp
  --compression C       0–100, jpeg or webp only
  --moderation M        low, auto (default auto)
  --user U              end-user identifier passed to the service
  --stream              stream partial images as they come
  --partial-images K    partial images per image when streaming, 0–3
  --out PATH            a directory, or a file name (numbered siblings for several images)
  --json                print one machine-readable result`;

export const GENERATE_USAGE = `Usage: pictor generate --prompt TEXT [options]

${COMMON_OPTIONS}`;

export const EDIT_USAGE = `Usage: pictor edit --prompt TEXT --image FILE [--image FILE …] [options]

  --image FILE          a PNG, JPEG or WebP file to edit (up to 16)
${COMMON_OPTIONS}`;
