import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startService } from '../../bots/main.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { useEmulator } from '../helpers/emulator.js';
import { slackEventsUrl, surfaceEnv, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { waitUntil } from '../helpers/runner-harness.js';
import { untilPrinted } from '../helpers/until-printed.js';
import { scrape } from '../metrics/scrape.js';
import { finishedJob, statusOf } from './slack/harness.js';

const MAIN = fileURLToPath(new URL('../../bots/main.ts', import.meta.url));
// Posing as the real service: its jobs are the account's.
const emu = useEmulator({ identifyAsEmulator: false });
const defer = useCleanup();

describe('npm start killed with SIGKILL in the middle of a paid job, then started again', () => {
  it('charges the job that reached the service at its estimate (uncertain) and lets the same user start a new job at once', async () => {
    const slack = await new FakeSlack({ channelWriteIntervalMs: 10 }).start();
    defer(() => slack.close());
    const dataDir = await tempDataDir(defer, 'pictor-killed-');
    const env = {
      PATH: process.env.PATH,
      PICTOR_LOG_LEVEL: 'silent',
      PICTOR_BASE_URL: emu.url,
      PICTOR_API_KEY: DEV_API_KEY,
      PICTOR_DATA_DIR: dataDir,
      PICTOR_USER_CONCURRENT_JOBS: '1',
      PICTOR_PARTIAL_IMAGES: '0',
      ...surfaceEnv({ slack }),
    };

    // The first life: one job, sent and still being drawn when the process is killed.
    emu.emulator.configure({ latencyMs: 60_000 });
    const first = spawn(process.execPath, ['--import', 'tsx', MAIN], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let printed = '';
    first.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    try {
      await untilPrinted(first, () => slackEventsUrl(printed) !== undefined, 'the first process is online');
      slack.deliverOverHttp(slackEventsUrl(printed)!);
      expect((await slack.command({ command: '/imagine', text: 'a paid lighthouse --quality low --size 1024x1024', user: 'U0PAYER', channel: 'C0KILL' })).status).toBe(200);
      await waitUntil(() => emu.emulator.stats().openStreams === 1, 'the request reached the service', 30_000);
    } finally {
      first.kill('SIGKILL');
    }
    await new Promise((resolve) => first.once('exit', resolve));

    // The second life: started again on the same data folder.
    emu.emulator.configure({ latencyMs: 0 });
    const lines: string[] = [];
    const service = await startService({ ...env, PICTOR_LOG_LEVEL: 'silent', PICTOR_METRICS_PORT: '0' }, (l) => lines.push(l));
    defer(() => service.stop());
    const ledger = JSON.parse(await readFile(join(dataDir, 'quota-ledger.json'), 'utf8'));
    expect(Object.keys(ledger.reservations)).toEqual([]);
    expect(Object.values(ledger.uncertain)).toEqual([expect.objectContaining({ userKey: 'slack:U0PAYER', usd: 0.00636 })]);
    const today = new Date().toISOString().slice(0, 10);
    expect(ledger.spent[today]['slack:U0PAYER']).toBeCloseTo(0.00636, 9);
    // What the reconcile at start charged is spent, for the metrics too.
    const metricsBase = /Metrics for Prometheus at (\S+)\/metrics/.exec(lines.join('\n'))![1]!;
    expect((await scrape(`${metricsBase}/metrics`)).value('pictor_spent_usd_total')).toBeCloseTo(0.00636, 9);

    // Not "you already have 1 job running": the dead process's slot is free.
    slack.deliverOverHttp(slackEventsUrl(lines.join('\n'))!);
    await slack.command({ command: '/imagine', text: 'another lighthouse --quality low', user: 'U0PAYER', channel: 'C0AGAIN' });
    expect(statusOf(await finishedJob(slack, 'C0AGAIN'))).toMatch(/Done/);
  }, 90_000);
});
