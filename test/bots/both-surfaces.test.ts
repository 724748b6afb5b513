import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { beforeAll, describe, expect, it } from 'vitest';
import { buttonsOf } from '../fakes/discord/FakeDiscord.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { slackEventsUrl, startBothBots, startChatFakes, startUpstream, surfaceEnv, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { buttonsOf as slackButtons } from '../fakes/slack/slack-objects.js';
import { finishedJob, jobMessages, statusOf } from './slack/harness.js';
import { builtFile } from '../helpers/built.js';
import { untilPrinted } from '../helpers/until-printed.js';

const defer = useCleanup();

/** The built service (`npm start`); set before the tests, which fail at once saying "build first" on a tree not built (or built before its sources changed). */
let builtService: string;
beforeAll(() => {
  builtService = builtFile('dist/bots/main.js');
});

describe('npm start with Discord and Slack configured', () => {
  it('runs both bots in one process on one runner and one limiter, against the embedded emulator', async () => {
    const { discord, slack, printed } = await startBothBots(defer, { PICTOR_MAX_CONCURRENT: '1', PICTOR_UPDATE_INTERVAL_MS: '20', PICTOR_EMULATOR_LATENCY_MS: '0' });
    expect(printed).toContain('Discord bot is online.');
    expect(slackEventsUrl(printed)).toBeDefined();

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
    const upstream = await startUpstream(defer, 2500);
    const { emulator } = upstream;
    const { discord, slack, service, stopped } = await startBothBots(defer, {
      PICTOR_BASE_URL: upstream.url,
      PICTOR_API_KEY: DEV_API_KEY,
      PICTOR_UPDATE_INTERVAL_MS: '20',
      PICTOR_SHUTDOWN_GRACE_SECONDS: '60',
    });

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
    stopped();
  }, 60_000);

  it('stops both bots by the stop’s until, a job’s last message on each still unanswered by its platform', async () => {
    const { discord, slack, service, stopped } = await startBothBots(defer, {
      PICTOR_EMULATOR_LATENCY_MS: '0',
      PICTOR_PARTIAL_IMAGES: '0',
      PICTOR_UPDATE_INTERVAL_MS: '20',
      PICTOR_SHUTDOWN_GRACE_SECONDS: '1',
    });
    // Slack and Discord take the jobs' messages and never answer their updates (let go after the test).
    const slackHeld = slack.holdOpen('chat.update');
    defer(async () => slackHeld.release());
    await slack.command({ command: '/imagine', text: 'a lighthouse Slack never shows --quality low', channel: 'C0STOP' });
    const ix = discord.slashCommand('imagine', { prompt: 'a lighthouse Discord never shows', quality: 'low' });
    const releaseDiscord = discord.holdWebhookCalls(ix);
    defer(async () => releaseDiscord());
    await slack.waitFor(() => slackHeld.arrived() > 0, 'an update of the Slack job held');
    await discord.waitFor(() => discord.webhookCallsHeld > 0, 'an update of the Discord job held');

    // As npm start stops: the drain, then the rest with a deadline for the surfaces. Without it the Slack bot alone
    // would wait 20 s, the Discord bot 10 s more (past the test's timeout, with the runner's own few seconds).
    await service.drain();
    await service.stop({ until: Date.now() + 1000 });
    stopped();
  }, 20_000);

  it('after a kill -9 of npm start, the next start marks both surfaces’ running jobs interrupted, with Retry and Reroll', async () => {
    const { discord, slack } = await startChatFakes(defer);
    const upstream = await startUpstream(defer, 60_000);
    const dataDir = await tempDataDir(defer);
    const env = {
      PATH: process.env.PATH,
      PICTOR_LOG_LEVEL: 'silent',
      PICTOR_DATA_DIR: dataDir,
      PICTOR_BASE_URL: upstream.url,
      PICTOR_API_KEY: DEV_API_KEY,
      PICTOR_UPDATE_INTERVAL_MS: '20',
      ...surfaceEnv({ discord, slack }),
    };

    const first = await startProcess(env);
    defer(() => first.stop());
    slack.deliverOverHttp(first.eventsUrl);
    const ix = discord.slashCommand('imagine', { prompt: 'a lighthouse before the crash' });
    await slack.command({ command: '/imagine', text: 'a lighthouse before the crash', channel: 'C0CRASH' });
    await discord.waitFor(() => (discord.original(ix)?.content.includes('Drawing') ? true : undefined), 'the Discord job to start');
    await slack.waitFor(() => jobMessages(slack, 'C0CRASH').find((m) => statusOf(m).includes('Drawing')), 'the Slack job to start');
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');

    const second = await startProcess(env);
    defer(() => second.stop());
    const discordSwept = await discord.waitFor(() => {
      const m = discord.original(ix);
      return m?.content.includes('restarted') ? m : undefined;
    }, 'the Discord reply to be swept');
    expect(buttonsOf(discordSwept).map((b) => b.label)).toEqual(['Retry']);
    const slackSwept = await slack.waitFor(() => jobMessages(slack, 'C0CRASH').find((m) => statusOf(m).includes('restarted')), 'the Slack message to be swept');
    expect(slackButtons(slackSwept).map((b) => b.actionId)).toEqual(['pictor_reroll']);

    // A deploy of the second process: SIGTERM, nothing running, a clean exit.
    second.child.kill('SIGTERM');
    const [code] = (await once(second.child, 'exit')) as [number | null];
    expect(code).toBe(0);
  }, 90_000);
});

describe('npm start on signals', () => {
  it('keeps running a job through the first SIGTERM, and stops at once on a second one', async () => {
    const { discord, slack } = await startChatFakes(defer);
    const upstream = await startUpstream(defer, 60_000);
    const dataDir = await tempDataDir(defer);
    const started = await startProcess({
      PATH: process.env.PATH,
      PICTOR_LOG_LEVEL: 'silent',
      PICTOR_DATA_DIR: dataDir,
      PICTOR_BASE_URL: upstream.url,
      PICTOR_API_KEY: DEV_API_KEY,
      ...surfaceEnv({ discord, slack }),
    });
    defer(() => started.stop());
    const ix = discord.slashCommand('imagine', { prompt: 'a job through a deploy' });
    await discord.waitFor(() => (discord.original(ix)?.content.includes('Drawing') ? true : undefined), 'the job to start');

    started.child.kill('SIGTERM');
    // Draining, and still answering: a new command is told the bot is restarting.
    await discord.waitFor(() => started.printed().includes('SIGTERM: taking no new jobs'), 'the first SIGTERM to be taken');
    const refused = discord.slashCommand('imagine', { prompt: 'during the deploy' });
    await discord.waitFor(() => /restarting/.test(discord.original(refused)?.content ?? ''), 'a new job to be refused');
    expect(started.child.exitCode).toBeNull();
    expect(discord.original(ix)!.content).toContain('Drawing');

    const exited = once(started.child, 'exit');
    const sentAt = Date.now();
    started.child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(1);
    expect(Date.now() - sentAt).toBeLessThan(5000);
  }, 60_000);
});

interface StartedProcess {
  child: ChildProcess;
  eventsUrl: string;
  /** What it wrote so far, stdout and stderr. */
  printed(): string;
  stop(): Promise<void>;
}

/**
 * `npm start` (`node dist/bots/main.js`) as its own process, once both bots are online. Waited for by what it prints, with
 * no clock of its own: on a loaded machine a start took more than the 30 s a timer here gave it (the sources compiled
 * as they were loaded, then), and only the test's timeout bounds it now; a start that failed fails at once, with what it
 * printed.
 */
async function startProcess(env: Record<string, string | undefined>): Promise<StartedProcess> {
  const child = spawn(process.execPath, [builtService], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  await untilPrinted(child, () => slackEventsUrl(output) !== undefined && output.includes('Discord bot is online.'), 'both bots were online').catch((error: Error) => {
    throw new Error(`${error.message}: ${output}`);
  });
  const eventsUrl = slackEventsUrl(output)!;
  return {
    child,
    eventsUrl,
    printed: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}
