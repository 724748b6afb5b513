import { DEV_API_KEY, type Emulator } from '../../src/emulator/index.js';

/**
 * The images the emulator streams for a generation request, as the service
 * sends them (the emulator gives the same bytes for the same request): each
 * partial, then each finished image.
 */
export async function streamedImages(emulator: Emulator, fields: Record<string, unknown>): Promise<{ partials: Buffer[]; finals: Buffer[] }> {
  const response = await emulator.fetch('http://emulator.test/v1/images/generations', {
    method: 'POST',
    headers: { authorization: `Bearer ${DEV_API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...fields, stream: true }),
  });
  if (!response.ok) throw new Error(`the emulator answered ${response.status}`);
  const events = (await response.text())
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as { b64_json?: string; partial_image_index?: number });
  const bytes = (e: { b64_json?: string }) => Buffer.from(e.b64_json ?? '', 'base64');
  return {
    partials: events.filter((e) => e.partial_image_index !== undefined).map(bytes),
    finals: events.filter((e) => e.partial_image_index === undefined && e.b64_json).map(bytes),
  };
}
