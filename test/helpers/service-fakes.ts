import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { buttonsOf, FakeDiscord, type FakeInteraction, type FakeMessage } from '../fakes/discord/FakeDiscord.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { startService, type Service } from '../../bots/main.js';

/** Registers a step to run after the current test; steps run last registered first. */
export type Defer = (step: () => Promise<void>) => void;

/** The `defer` of a test file: everything deferred in a test is undone after it, in reverse order. */
export function useCleanup(): Defer {
  let steps: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of steps.reverse()) await step();
    steps = [];
  });
  return (step) => void steps.push(step);
}

/** The fake Discord and the fake Slack `npm start` talks to, closed after the test. */
export async function startChatFakes(defer: Defer, options: { slackWriteIntervalMs?: number } = {}): Promise<{ discord: FakeDiscord; slack: FakeSlack }> {
  const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
  defer(() => discord.close());
  const slack = await new FakeSlack({ channelWriteIntervalMs: options.slackWriteIntervalMs ?? 30 }).start();
  defer(() => slack.close());
  return { discord, slack };
}

/** A data folder of its own for one test, removed after it. */
export async function tempDataDir(defer: Defer, prefix = 'pictor-service-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  defer(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** An emulator as the upstream service (`PICTOR_BASE_URL`), stopped after the test. */
export async function startUpstream(defer: Defer, latencyMs: number, options: { identifyAsEmulator?: boolean; recordImageBytes?: boolean } = {}): Promise<{ emulator: Emulator; url: string }> {
  const emulator = createEmulator({ latencyMs, ...options });
  const upstream = await emulator.listen({ port: 0 });
  defer(async () => {
    await upstream.close();
    await emulator.close();
  });
  return { emulator, url: upstream.url };
}

/**
 * A Slack bot in HTTP mode whose service and Slack are unreachable (port 9): for what `npm start` decides before it asks
 * either anything (its settings, its data folder, its ledger).
 */
export function unreachableSlackEnv(dataDir: string): Record<string, string> {
  return {
    PICTOR_DATA_DIR: dataDir,
    PICTOR_BASE_URL: 'http://127.0.0.1:9',
    PICTOR_API_KEY: 'k',
    SLACK_BOT_TOKEN: 'xoxb-1',
    SLACK_SIGNING_SECRET: 's',
    SLACK_MODE: 'http',
    SLACK_API_URL: 'http://127.0.0.1:9/api/',
    PICTOR_LOG_LEVEL: 'silent',
  };
}

/**
 * The settings that point `npm start`'s surfaces at the fakes: Discord at the
 * fake's REST API and gateway, Slack in HTTP mode on a free loopback port (its
 * events URL is printed at start; see `slackEventsUrl`).
 */
export function surfaceEnv(fakes: { discord?: FakeDiscord | undefined; slack?: FakeSlack | undefined }): Record<string, string> {
  const { discord, slack } = fakes;
  return {
    ...(discord && { DISCORD_TOKEN: discord.botToken, DISCORD_APPLICATION_ID: discord.applicationId, DISCORD_API_BASE_URL: discord.apiBaseUrl }),
    ...(slack && {
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: slack.signingSecret,
      SLACK_MODE: 'http',
      SLACK_PORT: '0',
      SLACK_HOST: '127.0.0.1',
      SLACK_API_URL: slack.apiUrl,
    }),
  };
}

/**
 * `npm start` in this process with both bots on the fakes (a data folder of its own, logs silent), Slack's events
 * delivered over HTTP: `env` adds to or overrides the settings. The service is stopped after the test unless
 * `stopped()` says the test stopped it; `printed` is what it printed.
 */
export async function startBothBots(defer: Defer, env: Record<string, string> = {}): Promise<{ discord: FakeDiscord; slack: FakeSlack; service: Service; printed: string; stopped(): void }> {
  const { discord, slack } = await startChatFakes(defer);
  const lines: string[] = [];
  const service = await startService(
    { PICTOR_LOG_LEVEL: 'silent', PICTOR_DATA_DIR: await tempDataDir(defer), ...surfaceEnv({ discord, slack }), ...env },
    (line) => lines.push(line),
  );
  let stopped = false;
  defer(async () => {
    if (!stopped) await service.stop();
  });
  const printed = lines.join('\n');
  slack.deliverOverHttp(slackEventsUrl(printed)!);
  return { discord, slack, service, printed, stopped: () => void (stopped = true) };
}

/** The Slack events URL `npm start` printed, or undefined before it did. */
export function slackEventsUrl(printed: string): string | undefined {
  return /events at (\S+)\)/.exec(printed)?.[1];
}

/** The first answer `npm start` gave an interaction on the fake Discord, once it has text. */
export function discordAnswer(discord: FakeDiscord, ix: FakeInteraction): Promise<FakeMessage> {
  return discord.waitFor(() => {
    const message = discord.original(ix);
    return message?.content ? message : undefined;
  }, `the answer to ${ix.name}`);
}

/**
 * The note only the member sees that answers an interaction on the fake Discord: an ephemeral first answer, or an
 * ephemeral follow-up once a public one was given (an edit whose kept images are gone is admitted, then told).
 */
export function discordPrivateNote(discord: FakeDiscord, ix: FakeInteraction, timeoutMs?: number): Promise<FakeMessage> {
  return discord.waitFor(() => [...discord.messages.values()].find((m) => m.interactionId === ix.id && (m.flags & 64) !== 0 && m.content !== ''), `a private note answering ${ix.name}`, timeoutMs);
}

/** An interaction's reply once it shows a job's end with its Reroll button. */
export function discordResult(discord: FakeDiscord, ix: FakeInteraction, timeoutMs?: number): Promise<FakeMessage> {
  return discord.waitFor(
    () => {
      const message = discord.original(ix);
      return message && buttonsOf(message).some((b) => /^pictor:reroll:/.test(b.custom_id)) ? message : undefined;
    },
    `the result of ${ix.name}`,
    timeoutMs,
  );
}
