import { afterEach, describe, expect, it } from 'vitest';
import { head, misbehavingServer, type MisbehavingServer } from '../../client/misbehaving-server.js';
import { run, tempDir } from '../run-cli.js';

/** `pictor generate` against a service that refuses the key and echoes a part of it back, in its message and its request id. */

// A key of no known shape (not `sk-`): only the registry knows it is one. Put together from pieces, as the redaction tests do.
const KEY = ['img', 'live', '4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c'].join('_');

let server: MisbehavingServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serviceEchoing(part: (key: string) => string): Promise<MisbehavingServer> {
  server = await misbehavingServer(async (req) => {
    await req.body();
    const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const body = JSON.stringify({ error: { message: `Incorrect API key provided: ${part(key)}`, type: 'invalid_request_error', code: 'invalid_api_key', param: null } });
    req.socket.end(head(401, { 'content-type': 'application/json', 'x-request-id': `req_${part(key)}` }, body));
  });
  return server;
}

describe('pictor generate refused by a service that echoes a part of the key', () => {
  it.each([
    ['its first half', (key: string) => `${key.slice(0, key.length / 2)}...`],
    ['its last 12 characters', (key: string) => `...${key.slice(-12)}`],
    ['a piece of its middle', (key: string) => `…${key.slice(9, 25)}…`],
  ])('never prints %s, plain or with --json', async (_what, part) => {
    const s = await serviceEchoing(part);
    const env = { PICTOR_BASE_URL: s.url, PICTOR_API_KEY: KEY, PICTOR_MAX_RETRIES: '0', PICTOR_DATA_DIR: await tempDir() };
    for (const json of [[], ['--json']]) {
      const { code, stdout, stderr } = await run(['generate', '--prompt', 'a fox', '--quality', 'low', '--out', `${await tempDir()}/`, ...json], env);
      expect(code).toBe(1);
      const printed = `${stdout}\n${stderr}`;
      expect(printed).toContain('[redacted]');
      expect(printed).not.toContain(part(KEY).replace(/[.…]/g, ''));
      if (json.length) expect(JSON.parse(stdout)).toMatchObject({ ok: false, code: 'authentication_failed' });
    }
  });
});
