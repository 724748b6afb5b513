import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from '@slack/bolt';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { privateAnswerVia, type BotContext } from '../../../bots/slack/bot-context.js';
import { silentLogger } from '../../../src/internal.js';

/**
 * `privateAnswerVia` against a response URL served here (a real HTTP server, so fetch's own errors are the ones met):
 * what becomes of a note whose answer is not the few bytes of JSON Slack answers.
 */
let server: Server | undefined;
/** Whether a certificate can be made here (openssl), for a real TLS server. */
const HAS_OPENSSL = spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
  vi.unstubAllGlobals();
});

/** A response URL whose every answer is `answer`'s. */
async function responseUrl(answer: (res: ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/actions/T0/1/x`;
}

/** A bot context whose warnings are kept (message and code) and whose direct messages are recorded. */
function botContext() {
  const warnings: { code: unknown; msg: string }[] = [];
  const direct: string[] = [];
  const logger = { ...silentLogger(), warn: (fields: { code?: unknown }, msg?: string) => void warnings.push({ code: fields.code, msg: String(msg) }) };
  const client = { chat: { postMessage: async ({ text }: { text: string }) => void direct.push(text) } };
  const context = {
    logger,
    writer: { write: (_channel: string, task: { run: () => Promise<unknown> }) => task.run() },
    workspace: () => ({ client }),
  } as unknown as Pick<BotContext, 'writer' | 'logger' | 'workspace'>;
  return { context, warnings, direct };
}

describe('a private note through a response URL whose answer is not Slack’s few bytes of JSON', () => {
  it('an answer whose body breaks after its status: logged with fetch’s own code, as a note that may have reached the member, and not sent again', async () => {
    const url = await responseUrl((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"ok":');
      setImmediate(() => res.socket?.destroy());
    });
    const { context, warnings, direct } = botContext();
    await privateAnswerVia(context, {} as Context, { userId: 'U0ALICE', responseUrl: url })('only its member may delete it');
    expect(warnings).toEqual([{ code: 'UND_ERR_SOCKET', msg: 'a response_url did not answer a private note it may have taken: it is not sent again' }]);
    expect(direct).toEqual([]);
  });

  // Not Slack's JSON whatever its first bytes say (a cut document is not parsed): as any 2xx that is not JSON.
  it('a 2xx answer that never ends: the note is done with after its first 16 KiB (the rest is never waited for), counted delivered, and not sent again', async () => {
    const url = await responseUrl((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"ok":false,"error":"expired_url"}');
      const more = () => {
        while (!res.destroyed && res.write(' '.repeat(64 * 1024)));
      };
      res.on('drain', more);
      more();
    });
    const { context, warnings, direct } = botContext();
    await privateAnswerVia(context, {} as Context, { userId: 'U0ALICE', responseUrl: url })('only its member may delete it');
    expect(warnings).toEqual([]);
    expect(direct).toEqual([]);
  });

  const TOOK_NONE = 'a response_url took no private note (used up, expired or unreachable): it goes to the member’s direct messages';

  it.skipIf(!HAS_OPENSSL)('a response URL behind a certificate fetch does not trust (a proxy that intercepts TLS): nothing was sent, so the note goes to the member’s direct messages, logged with the TLS failure’s own code', async () => {
    const url = await selfSignedResponseUrl();
    const { context, warnings, direct } = botContext();
    await privateAnswerVia(context, {} as Context, { userId: 'U0ALICE', responseUrl: url })('only its member may delete it');
    expect(warnings).toEqual([{ code: 'DEPTH_ZERO_SELF_SIGNED_CERT', msg: TOOK_NONE }]);
    expect(direct).toEqual(['only its member may delete it']);
  });

  it.each(['CERT_HAS_EXPIRED', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'ERR_TLS_CERT_ALTNAME_INVALID'])('a fetch whose handshake fails on its certificate (%s): the note goes to the member’s direct messages, logged with that code, not as a TypeError', async (code) => {
    vi.stubGlobal('fetch', () => Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('certificate refused'), { code }) })));
    const { context, warnings, direct } = botContext();
    await privateAnswerVia(context, {} as Context, { userId: 'U0ALICE', responseUrl: 'https://hooks.slack.test/actions/T0/1/x' })('only its member may delete it');
    expect(warnings).toEqual([{ code, msg: TOOK_NONE }]);
    expect(direct).toEqual(['only its member may delete it']);
  });

  it('a fetch whose every address failed, one refused and one on its certificate: nothing was sent, so the note goes to the member’s direct messages', async () => {
    const failures = [Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }), Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' })];
    vi.stubGlobal('fetch', () => Promise.reject(new TypeError('fetch failed', { cause: new AggregateError(failures) })));
    const { context, direct } = botContext();
    await privateAnswerVia(context, {} as Context, { userId: 'U0ALICE', responseUrl: 'https://hooks.slack.test/actions/T0/1/x' })('only its member may delete it');
    expect(direct).toEqual(['only its member may delete it']);
  });
});

/**
 * A response URL served over TLS with a certificate made here, signed by itself (as a proxy that intercepts TLS shows
 * one the machine does not trust), answering as Slack does. Without openssl, the fake cause above stands for it.
 */
async function selfSignedResponseUrl(): Promise<string> {
  const folder = mkdtempSync(join(tmpdir(), 'pictor-tls-'));
  try {
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', join(folder, 'key.pem'), '-out', join(folder, 'cert.pem')], { stdio: 'ignore' });
    if (made.status !== 0) throw new Error('openssl could not make a certificate');
    const tls = createTlsServer({ key: readFileSync(join(folder, 'key.pem')), cert: readFileSync(join(folder, 'cert.pem')) }, (_req, res) => res.end('{"ok":true}'));
    server = tls as unknown as Server;
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    return `https://127.0.0.1:${(tls.address() as AddressInfo).port}/actions/T0/1/x`;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
