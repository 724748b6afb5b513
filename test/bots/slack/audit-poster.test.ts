import type { webApi } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../bots/runner/index.js';
import type { ChannelWriter } from '../../../bots/slack/ChannelWriter.js';
import { slackAuditPoster } from '../../../bots/slack/audit-poster.js';

/** A writer that runs each write at once (the pace is not what this is about). */
const writer = { write: async (_channel: string, { run }: { run: () => Promise<unknown> }) => run() } as unknown as ChannelWriter;

describe('audit posts on Slack', () => {
  it('answers not_found to an edit of a deleted message; channel_not_found (also a channel the bot was removed from, the message still shown) and other failures as they came', async () => {
    const entry: AuditEntry = { type: 'job', userId: 'U', channelId: 'C', kind: 'generate', prompt: '', erased: true, status: 'completed', at: 0 };
    // As the Web API client rejects a platform error: its `data.error`.
    const failing = (error: string) => ({ chat: { update: async () => Promise.reject(Object.assign(new Error(`An API error occurred: ${error}`), { code: 'slack_webapi_platform_error', data: { ok: false, error } })) } }) as unknown as webApi.WebClient;
    const edit = (client: webApi.WebClient) => slackAuditPoster({ clientFor: async () => client, writer }).edit({ platform: 'slack', scopeId: 'T', channelId: 'C', locale: 'en', entries: [entry], skipped: 0, messageId: '1.2' });
    await expect(edit(failing('message_not_found'))).rejects.toMatchObject({ problem: 'not_found', platformCode: 'message_not_found' });
    for (const error of ['channel_not_found', 'ratelimited']) await expect(edit(failing(error))).rejects.toMatchObject({ data: { error } });
  });
});
