import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startService } from '../../bots/main.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { buttonsOf } from '../fakes/slack/slack-objects.js';
import { useEmulator } from '../helpers/emulator.js';
import { waitUntil } from '../helpers/runner-harness.js';
import { slackEventsUrl, surfaceEnv, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { finishedJob, jobMessages, statusOf } from './slack/harness.js';

const MAIN = fileURLToPath(new URL('../../bots/main.ts', import.meta.url));
const redis = testRedis();
const emu = useEmulator();
const defer = useCleanup();
const LEASE_SECONDS = 1;

describe.skipIf(redis.skipReason)(`two npm start processes on one Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  const prefix = uniquePrefix('replicas');
  afterAll(async () => {
    if (redis.url) await deleteKeys(redis.url, prefix);
  });

  it('serve one Slack app: a button on A’s message works on B, and when A is killed (-9) mid-job B marks its job interrupted within the lease', async () => {
    const slack = await new FakeSlack({ channelWriteIntervalMs: 10 }).start();
    defer(() => slack.close());
    const env = {
      PATH: process.env.PATH,
      PICTOR_LOG_LEVEL: 'silent',
      PICTOR_BASE_URL: emu.url,
      PICTOR_API_KEY: DEV_API_KEY,
      PICTOR_PARTIAL_IMAGES: '0',
      REDIS_URL: requireRedisUrl(redis),
      PICTOR_REDIS_PREFIX: prefix,
      PICTOR_REPLICA_LEASE_SECONDS: String(LEASE_SECONDS),
      ...surfaceEnv({ slack }),
    };

    // Replica A, a process of its own (it is killed below); replica B in this process. Each has its own data folder:
    // what they share goes through Redis only.
    const a = spawn(process.execPath, ['--import', 'tsx', MAIN], { env: { ...env, PICTOR_DATA_DIR: await tempDataDir(defer, 'pictor-replica-a-') }, stdio: ['ignore', 'pipe', 'inherit'] });
    defer(async () => {
      if (a.exitCode === null && a.signalCode === null) {
        a.kill('SIGKILL');
        await new Promise((resolve) => a.once('exit', resolve));
      }
    });
    let printedByA = '';
    a.stdout.on('data', (chunk: Buffer) => (printedByA += chunk.toString()));
    const printedByB: string[] = [];
    const b = await startService({ ...env, PICTOR_DATA_DIR: await tempDataDir(defer, 'pictor-replica-b-') }, (line) => printedByB.push(line));
    defer(() => b.stop());
    await waitUntil(() => slackEventsUrl(printedByA) !== undefined, 'replica A is online', 30_000);
    const urlOfA = slackEventsUrl(printedByA)!;
    const urlOfB = slackEventsUrl(printedByB.join('\n'))!;

    // A job made on A; its Reroll button pressed on B.
    slack.deliverOverHttp(urlOfA);
    await slack.command({ command: '/imagine', text: 'a lighthouse --quality low', user: 'U0ANN', channel: 'C0REPL' });
    const done = await finishedJob(slack, 'C0REPL', 0);
    slack.deliverOverHttp(urlOfB);
    expect((await slack.clickButton(done, 'pictor_reroll', 'U0BOB')).status).toBe(200);
    const reroll = await finishedJob(slack, 'C0REPL', 1);
    expect(statusOf(reroll)).toContain('Done');
    expect(JSON.stringify(reroll.blocks)).toContain('<@U0BOB> asked for: “a lighthouse”');

    // A job on A, still being drawn when A is killed.
    emu.emulator.configure({ latencyMs: 60_000 });
    slack.deliverOverHttp(urlOfA);
    await slack.command({ command: '/imagine', text: 'a slow lighthouse --quality low', user: 'U0CAT', channel: 'C0KILL' });
    await waitUntil(() => emu.emulator.stats().openStreams === 1, 'the job reached the service', 30_000);
    await slack.waitFor(() => jobMessages(slack, 'C0KILL')[0], 'the job’s message');
    a.kill('SIGKILL');
    const killedAt = Date.now();
    await new Promise((resolve) => a.once('exit', resolve));

    // B takes it over once A's lease lapses (the lease, then at most a third of it for B's next sweep).
    const stopped = await slack.waitFor(() => {
      const message = jobMessages(slack, 'C0KILL')[0];
      return message && statusOf(message).includes('Stopped because the bot restarted') ? message : undefined;
    }, 'replica B to mark A’s job interrupted');
    const tookMs = Date.now() - killedAt;
    expect(tookMs).toBeLessThan(LEASE_SECONDS * 1000 * (1 + 1 / 3) + 1500);
    expect(buttonsOf(stopped).map((button) => button.actionId)).toEqual(['pictor_reroll']);
    emu.emulator.configure({ latencyMs: 0 });
  }, 90_000);
});
