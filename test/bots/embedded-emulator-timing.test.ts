import { describe, expect, it } from 'vitest';
import { startService } from '../../bots/main.js';
import { buttonsOf } from '../fakes/discord/FakeDiscord.js';
import { finishedJob, visibleText } from './slack/harness.js';
import { runTryLine } from '../helpers/try-line.js';
import { slackEventsUrl, startChatFakes, surfaceEnv, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';

const defer = useCleanup();

describe("npm start's embedded emulator, with nothing configured about its timing", () => {
  it('takes long enough that Discord and Slack users see a live preview, at the default update interval', async () => {
    const { discord, slack } = await startChatFakes(defer);
    const dataDir = await tempDataDir(defer, 'pictor-timing-');

    const lines: string[] = [];
    // No PICTOR_EMULATOR_LATENCY_MS and no PICTOR_UPDATE_INTERVAL_MS: the defaults a new user gets.
    const service = await startService(
      { PICTOR_LOG_LEVEL: 'silent', PICTOR_DATA_DIR: dataDir, ...surfaceEnv({ discord, slack }) },
      (line) => lines.push(line),
    );
    defer(() => service.stop());
    const printed = lines.join('\n');
    expect(printed).toMatch(/Image service emulator listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(printed).toMatch(/Timing: takes about 6 s per medium 1024x1024 image/);
    slack.deliverOverHttp(slackEventsUrl(printed)!);

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
    defer(() => service.stop());
    expect(lines.join('\n')).toMatch(/Timing: answers instantly/);
    const tryLine = lines.find((l) => l.startsWith('Try:'))!;
    expect(tryLine).toContain(`PICTOR_BASE_URL=${service.emulatorUrl} PICTOR_API_KEY=${DEV_API_KEY} npm run pictor -- generate`);
    const result = await runTryLine(tryLine);
    expect(result.code).toBe(0);
    expect(result.files.some((f) => f.endsWith('.png'))).toBe(true);
  });
});
