import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { privateAnswerVia, type BotContext } from '../../../bots/slack/bot-context.js';
import { silentLogger } from '../../../src/internal.js';

/**
 * `privateAnswerVia` against a response URL served here (a real HTTP server, so fetch's own errors are the ones met):
 * what becomes of a note whose answer is not the few bytes of JSON Slack answers.
 */
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
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
  it('a 2xx answer longer than 16 KiB: read no further, counted delivered, and not sent again', async () => {
    const url = await responseUrl((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"ok":false,"error":"expired_url"}${' '.repeat(64 * 1024)}`);
    });
    const { context, warnings, direct } = botContext();
    await privateAnswerVia(context, {} as Context, { userId: 'U0ALICE', responseUrl: url })('only its member may delete it');
    expect(warnings).toEqual([]);
    expect(direct).toEqual([]);
  });
});
