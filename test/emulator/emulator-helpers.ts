import sharp from 'sharp';
import { DEV_API_KEY, type Emulator } from '../../src/emulator/index.js';

export const AUTH = { authorization: `Bearer ${DEV_API_KEY}` };

type Fetcher = Pick<Emulator, 'fetch'> | { fetch: typeof fetch };

/** POSTs a JSON generation request in process (or to `base` over HTTP when given). */
export function generate(
  target: Fetcher,
  body: unknown,
  options: { headers?: Record<string, string>; base?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  return target.fetch(`${options.base ?? ''}/v1/images/generations`, {
    method: 'POST',
    ...(options.signal ? { signal: options.signal } : {}),
    headers: { ...AUTH, 'content-type': 'application/json', ...options.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export interface FilePart {
  bytes: Uint8Array;
  type?: string;
  name?: string;
  field?: string;
}

export function editForm(files: FilePart[], fields: Record<string, string>): FormData {
  const form = new FormData();
  for (const file of files) {
    form.append(file.field ?? 'image[]', new Blob([file.bytes], { type: file.type ?? 'image/png' }), file.name ?? 'input.png');
  }
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  return form;
}

/** POSTs a multipart edit request. */
export function edit(
  target: Fetcher,
  files: FilePart[],
  fields: Record<string, string>,
  options: { headers?: Record<string, string>; base?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  return target.fetch(`${options.base ?? ''}/v1/images/edits`, {
    method: 'POST',
    ...(options.signal ? { signal: options.signal } : {}),
    headers: { ...AUTH, ...options.headers },
    body: editForm(files, fields),
  });
}

export interface SseEvent {
  event: string | undefined;
  data: string;
}

/** Splits an SSE text into events (LF framing, as the emulator writes it). */
export function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      return { event, data: data.join('\n') };
    });
}

/** The JSON of an image event (the fields tests read most; the rest stay unknown). */
export interface EventJson {
  type: string;
  b64_json: string;
  partial_image_index?: number;
  [field: string]: unknown;
}

export async function readEvents(response: Response): Promise<{ event: string | undefined; json: EventJson }[]> {
  return parseSse(await response.text()).map((e) => ({ event: e.event, json: JSON.parse(e.data) as EventJson }));
}

export function bytesOf(b64: string): Buffer {
  return Buffer.from(b64, 'base64');
}

export async function metadataOf(b64: string): Promise<sharp.Metadata> {
  return sharp(bytesOf(b64)).metadata();
}

/** Decodes to RGBA pixels. */
export async function pixelsOf(bytes: Uint8Array): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** Mean absolute difference per channel between two decoded images of the same size. */
export async function meanDifference(a: Uint8Array, b: Uint8Array): Promise<number> {
  const [pa, pb] = await Promise.all([pixelsOf(a), pixelsOf(b)]);
  if (pa.data.length !== pb.data.length) throw new Error('images differ in size');
  let sum = 0;
  for (let i = 0; i < pa.data.length; i++) sum += Math.abs(pa.data[i]! - pb.data[i]!);
  return sum / pa.data.length;
}

/** A solid-colour test image. */
export function solidImage(color: string, options: { width?: number; height?: number; format?: 'png' | 'jpeg' | 'webp' } = {}): Promise<Buffer> {
  const image = sharp({ create: { width: options.width ?? 64, height: options.height ?? 64, channels: 3, background: color } });
  const format = options.format ?? 'png';
  return (format === 'png' ? image.png() : format === 'jpeg' ? image.jpeg() : image.webp()).toBuffer();
}

export async function errorOf(response: Response): Promise<{ message: string; type: string; param: string | null; code: string | null }> {
  const body = (await response.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
  return body.error;
}
