// The reference for bench/cli-startup.ts: a one-off generation with the official `openai` client, written to files.
// Arguments: prompt, output file, and optionally n and size (image i > 1 goes to "<output>-<i>.png").
import { writeFileSync } from 'node:fs';
import OpenAI from 'openai';
const client = new OpenAI({ baseURL: `${process.env.PICTOR_BASE_URL}/v1`, apiKey: process.env.PICTOR_API_KEY });
const [prompt, out, n = '1', size] = process.argv.slice(2);
const result = await client.images.generate({ model: 'gpt-image-2', prompt, quality: 'low', n: Number(n), ...(size && { size }) });
result.data.forEach((image, i) => writeFileSync(i === 0 ? out : out.replace(/\.png$/, `-${i + 1}.png`), Buffer.from(image.b64_json, 'base64')));
