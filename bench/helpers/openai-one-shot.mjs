// The reference for bench/cli-startup.ts: a one-off generation with the official `openai` client, written to a file.
import { writeFileSync } from 'node:fs';
import OpenAI from 'openai';
const client = new OpenAI({ baseURL: `${process.env.PICTOR_BASE_URL}/v1`, apiKey: process.env.PICTOR_API_KEY });
const result = await client.images.generate({ model: 'gpt-image-2', prompt: process.argv[2], quality: 'low' });
writeFileSync(process.argv[3], Buffer.from(result.data[0].b64_json, 'base64'));
