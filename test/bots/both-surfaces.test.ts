import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../bots/main.js';
import { buttonsOf, FakeDiscord } from '../fakes/discord/FakeDiscord.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { finishedJob, statusOf } from './slack/harness.js';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe('npm start with Discord and Slack configured', () => {
  it('runs both bots in one process on one runner and one limiter, against the embedded emulator', async () => {
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    cleanup.push(() => discord.close());
    const slack = await new FakeSlack({ channelWriteIntervalMs: 30 }).start();
    cleanup.push(() => slack.close());
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-service-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));

    const lines: string[] = [];
    const service: Service = await startService(
      {
        PICTOR_LOG_LEVEL: 'silent',
        PICTOR_DATA_DIR: dataDir,
        PICTOR_MAX_CONCURRENT: '1',
        PICTOR_UPDATE_INTERVAL_MS: '20',
        DISCORD_TOKEN: discord.botToken,
        DISCORD_APPLICATION_ID: discord.applicationId,
        DISCORD_API_BASE_URL: discord.apiBaseUrl,
        SLACK_BOT_TOKEN: slack.botToken,
        SLACK_SIGNING_SECRET: slack.signingSecret,
        SLACK_MODE: 'http',
        SLACK_PORT: '0',
        SLACK_HOST: '127.0.0.1',
        SLACK_API_URL: slack.apiUrl,
      },
      (line) => lines.push(line),
    );
    cleanup.push(() => service.stop());
    const printed = lines.join('\n');
    expect(printed).toContain('Discord bot is online.');
    const eventsUrl = /events at (\S+)\)/.exec(printed)?.[1];
    expect(eventsUrl).toBeDefined();
    slack.deliverOverHttp(eventsUrl!);

    // One job from each surface at once, through the one runner and its one-slot limiter.
    const ix = discord.slashCommand('imagine', { prompt: 'a lighthouse from Discord', quality: 'low' });
    const ack = await slack.command({ command: '/imagine', text: 'a lighthouse from Slack --quality low', channel: 'C0BOTH' });
    expect(ack.status).toBe(200);

    const discordFinal = await discord.waitFor(() => {
      const message = discord.original(ix);
      return message && buttonsOf(message).some((b) => /^pictor:reroll:/.test(b.custom_id)) ? message : undefined;
    }, 'the Discord result');
    expect(discordFinal.attachments).toHaveLength(1);
    const slackFinal = await finishedJob(slack, 'C0BOTH');
    expect(statusOf(slackFinal)).toMatch(/Done · 1024x1024 · low · png · \$0\.0064/);
  }, 60_000);
});
