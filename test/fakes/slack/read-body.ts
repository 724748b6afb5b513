import type { IncomingMessage } from 'node:http';

/** Reads a whole request body. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A Web API call's arguments, as @slack/web-api sends them: form-encoded with
 * objects as JSON strings, or JSON. Values that hold JSON (blocks, files) are parsed.
 */
export function parseApiArgs(body: Buffer, contentType: string | undefined): Record<string, unknown> {
  const text = body.toString('utf8');
  const raw: Record<string, unknown> = {};
  if ((contentType ?? '').includes('application/json')) {
    Object.assign(raw, text ? (JSON.parse(text) as Record<string, unknown>) : {});
  } else {
    for (const [key, value] of new URLSearchParams(text)) raw[key] = value;
  }
  for (const key of ['blocks', 'files', 'view', 'attachments', 'outputs']) {
    const value = raw[key];
    if (typeof value === 'string' && /^[[{]/.test(value.trim())) raw[key] = JSON.parse(value) as unknown;
  }
  return raw;
}

export function bearerOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
}
