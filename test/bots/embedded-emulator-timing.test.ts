import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../../bots/main.js';
import { buttonsOf, FakeDiscord } from '../fakes/discord/FakeDiscord.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { finishedJob, visibleText } from './slack/harness.js';
import { runTryLine } from '../helpers/try-line.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe("npm start's embedded emulator, with nothing configured about its timing", () => {
  it('takes long enough that Discord and Slack users see a live preview, at the default update interval', async () => {
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    cleanup.push(() => discord.close());
    const slack = await new FakeSlack({ channelWriteIntervalMs: 30 }).start();
    cleanup.push(() => slack.close());
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-timing-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));

    const lines: string[] = [];
    // No PICTOR_EMULATOR_LATENCY_MS and no PICTOR_UPDATE_INTERVAL_MS: the defaults a new user gets.
    const service = await startService(
      {
        PICTOR_LOG_LEVEL: 'silent',
        PICTOR_DATA_DIR: dataDir,
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
    expect(printed).toMatch(/Image service emulator listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(printed).toMatch(/Timing: takes about 6 s per medium 1024x1024 image/);
    slack.deliverOverHttp(/events at (\S+)\)/.exec(printed)![1]!);

    // The quality a user gets by not choosing one.
    const ix = discord.slashCommand('imagine', { prompt: 'a lighthouse at dusk' });
    const ack = await slack.command({ command: '/imagine', text: 'a lighthouse at dusk', channel: 'C0TIME' });
    expect(ack.status).toBe(200);

    const discordFinal = await discord.waitFor(() => {
      const message = discord.original(ix);
      return message && buttonsOf(message).some((b) => /^pictor:reroll:/.test(b.custom_id)) ? message : undefined;
    }, 'the Discord result', 30_000);
    const discordPreviews = discordFinal.history.filter((state) => state.attachments.some((a) => a.filename.startsWith('preview-')));
    expect(discordPreviews.length).toBeGreaterThanOrEqual(1);

    const slackFinal = await finishedJob(slack, 'C0TIME');
    expect(slackFinal.edits.map((edit) => visibleText(edit)).some((text) => /preview \d is in the thread/.test(text))).toBe(true);
    expect(slack.replies('C0TIME', slackFinal.ts).filter((m) => m.text.startsWith('Preview')).length).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('is instant with PICTOR_EMULATOR_LATENCY_MS=0, says so, and prints a Try line that runs as printed with the key it printed', async () => {
    const lines: string[] = [];
    const service = await startService({ PICTOR_LOG_LEVEL: 'silent', PICTOR_EMULATOR_LATENCY_MS: '0' }, (line) => lines.push(line));
    cleanup.push(() => service.stop());
    expect(lines.join('\n')).toMatch(/Timing: answers instantly/);
    const tryLine = lines.find((l) => l.startsWith('Try:'))!;
    expect(tryLine).toContain(`PICTOR_BASE_URL=${service.emulatorUrl} PICTOR_API_KEY=${DEV_API_KEY} npm run pictor -- generate`);
    const result = await runTryLine(tryLine);
    expect(result.code).toBe(0);
    expect(result.files.some((f) => f.endsWith('.png'))).toBe(true);
  });
});
