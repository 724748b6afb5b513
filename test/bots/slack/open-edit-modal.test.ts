import { webApi } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { say } from '../../../bots/runner/index.js';
import { openEditModal } from '../../../bots/slack/bot-context.js';
import { silentLogger } from '../../../src/internal.js';
import { FakeSlack } from '../../fakes/slack/FakeSlack.js';

let fake: FakeSlack | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('an edit form Slack did not open', () => {
  it('a views.open Slack answered with a 503: its line in the log holds the status with the client’s code, never the bot token; the member is told privately', async () => {
    fake = await new FakeSlack().start();
    fake.failNext('views.open', { status: 503, error: undefined });
    const lines: Record<string, unknown>[] = [];
    const logger = { ...silentLogger(), warn: (fields: Record<string, unknown>, msg?: string) => void lines.push({ ...fields, msg }) };
    const told: string[] = [];
    // The client sends each call once: the 503 is what reaches the bot, not a try after it.
    const client = new webApi.WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, logLevel: webApi.LogLevel.ERROR });
    await openEditModal({ logger }, client, 'trigger-1', async (text) => void told.push(text), { channelId: 'C0EDIT' }, 'en');
    expect(lines).toEqual([{ code: 'slack_webapi_http_error', err: expect.objectContaining({ code: 'slack_webapi_http_error', status: 503 }), msg: 'could not open the edit modal' }]);
    expect(JSON.stringify(lines)).not.toContain(fake.botToken);
    expect(JSON.stringify(lines)).not.toContain(fake.apiUrl);
    expect(told).toEqual([say('en', 'slack.edit.could_not_open')]);
  });
});
