import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webApi } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { AuditPostLost, type AuditEntry } from '../../../bots/runner/index.js';
import type { ChannelWriter } from '../../../bots/slack/ChannelWriter.js';
import { slackAuditPoster } from '../../../bots/slack/audit-poster.js';
import { sentOnceClient, type SentOnceClient } from '../../../bots/slack/sent-once-client.js';

/** A writer that runs each write at once (the pace is not what this is about). */
const writer = { write: async (_channel: string, { run }: { run: () => Promise<unknown> }) => run() } as unknown as ChannelWriter;

describe('audit posts on Slack', () => {
  it('answers not_found to an edit of a deleted message; channel_not_found (also a channel the bot was removed from, the message still shown) and other failures as they came', async () => {
    const entry: AuditEntry = { type: 'job', userId: 'U', channelId: 'C', kind: 'generate', prompt: '', erased: true, status: 'completed', at: 0 };
    // As the Web API client rejects a platform error: its `data.error`.
    const failing = (error: string) => ({ chat: { update: async () => Promise.reject(Object.assign(new Error(`An API error occurred: ${error}`), { code: 'slack_webapi_platform_error', data: { ok: false, error } })) } }) as unknown as SentOnceClient;
    const edit = (client: SentOnceClient) => slackAuditPoster({ clientFor: async () => client, writer }).edit({ platform: 'slack', scopeId: 'T', channelId: 'C', locale: 'en', entries: [entry], skipped: 0, messageId: '1.2' });
    await expect(edit(failing('message_not_found'))).rejects.toMatchObject({ problem: 'not_found', platformCode: 'message_not_found' });
    for (const error of ['channel_not_found', 'ratelimited']) await expect(edit(failing(error))).rejects.toMatchObject({ data: { error } });
  });

  it('answers AuditPostLost where Slack’s answer to a post was lost (the request failed on the way, a 5xx without Slack’s answer, no ts); Slack’s refusals as they came', async () => {
    const entry: AuditEntry = { type: 'job', userId: 'U', channelId: 'C', kind: 'generate', prompt: 'a fox', status: 'completed', at: 0 };
    const answering = (answer: () => Promise<unknown>) => ({ chat: { postMessage: answer } }) as unknown as SentOnceClient;
    const post = (client: SentOnceClient) => slackAuditPoster({ clientFor: async () => client, writer }).post({ platform: 'slack', scopeId: 'T', channelId: 'C', locale: 'en', entries: [entry], skipped: 0 });
    const lost = [
      Object.assign(new Error('A request error occurred: socket hang up'), { code: 'slack_webapi_request_error' }),
      Object.assign(new Error('An HTTP protocol error occurred: statusCode = 502'), { code: 'slack_webapi_http_error', statusCode: 502, body: '<html>Bad Gateway</html>' }),
    ];
    for (const error of lost) await expect(post(answering(async () => Promise.reject(error)))).rejects.toBeInstanceOf(AuditPostLost);
    await expect(post(answering(async () => ({ ok: true })))).rejects.toMatchObject({ code: 'no_ts' });
    const refusals = [
      Object.assign(new Error('An API error occurred: not_in_channel'), { code: 'slack_webapi_platform_error', data: { ok: false, error: 'not_in_channel' } }),
      Object.assign(new Error('An HTTP protocol error occurred: statusCode = 500'), { code: 'slack_webapi_http_error', statusCode: 500, body: { ok: false, error: 'internal_error' } }),
    ];
    for (const error of refusals) await expect(post(answering(async () => Promise.reject(error)))).rejects.toBe(error);
  });

  it('answers a post that never reached Slack (its connection refused) as it came, not as lost: nothing was posted, so its entries are tried again', async () => {
    const entry: AuditEntry = { type: 'job', userId: 'U', channelId: 'C', kind: 'generate', prompt: 'a fox', status: 'completed', at: 0 };
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const client = sentOnceClient('xoxb-test', { slackApiUrl: `http://127.0.0.1:${port}/api/`, logLevel: webApi.LogLevel.ERROR });
    const posted = slackAuditPoster({ clientFor: async () => client, writer }).post({ platform: 'slack', scopeId: 'T', channelId: 'C', locale: 'en', entries: [entry], skipped: 0 });
    const error = await posted.then(() => undefined, (e: unknown) => e);
    expect(error).not.toBeInstanceOf(AuditPostLost);
    expect(error).toMatchObject({ code: 'slack_webapi_request_error' });
  });
});
