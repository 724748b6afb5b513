import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../bots/main.js';
import { buttonsOf, FakeDiscord } from '../fakes/discord/FakeDiscord.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { createEmulator, DEV_API_KEY } from '../../src/emulator/index.js';
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

  it('on a deploy, refuses new jobs on both surfaces at once and lets the running one finish and be shown', async () => {
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    cleanup.push(() => discord.close());
    const slack = await new FakeSlack({ channelWriteIntervalMs: 30 }).start();
    cleanup.push(() => slack.close());
    const emulator = createEmulator({ latencyMs: 2500 });
    const upstream = await emulator.listen({ port: 0 });
    cleanup.push(async () => {
      await upstream.close();
      await emulator.close();
    });
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-service-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const lines: string[] = [];
    const service = await startService(
      {
        PICTOR_LOG_LEVEL: 'silent',
        PICTOR_DATA_DIR: dataDir,
        PICTOR_BASE_URL: upstream.url,
        PICTOR_API_KEY: DEV_API_KEY,
        PICTOR_UPDATE_INTERVAL_MS: '20',
        PICTOR_SHUTDOWN_GRACE_SECONDS: '60',
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
    let stopped = false;
    cleanup.push(async () => {
      if (!stopped) await service.stop();
    });
    slack.deliverOverHttp(/events at (\S+)\)/.exec(lines.join('\n'))![1]!);

    const running = discord.slashCommand('imagine', { prompt: 'a lighthouse during a deploy', quality: 'high' });
    await discord.waitFor(() => (discord.original(running)?.content.includes('Drawing') ? true : undefined), 'the job to start');
    const drained = service.drain();

    const late = discord.slashCommand('imagine', { prompt: 'one more, please' });
    const refused = await discord.waitFor(() => {
      const m = discord.original(late);
      return m && /restarting/.test(m.content) ? m : undefined;
    }, 'the refusal of a new job');
    expect(refused.content).toContain('The bot is restarting; try again in a minute.');
    const slackLate = await slack.command({ command: '/imagine', text: 'one more from Slack', channel: 'C0DEPLOY' });
    const slackNote = await slack.waitFor(() => slack.responses.find((r) => slackLate.responseUrl.endsWith(r.id)), 'the Slack refusal');
    expect(String(slackNote.body.text)).toBe('The bot is restarting; try again in a minute.');

    expect(await drained).toBe(0);
    const delivered = discord.original(running)!;
    expect(buttonsOf(delivered).some((b) => /^pictor:reroll:/.test(b.custom_id))).toBe(true);
    expect(delivered.attachments).toHaveLength(1);
    expect(emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(1);
    await service.stop();
    stopped = true;
  }, 60_000);
});
