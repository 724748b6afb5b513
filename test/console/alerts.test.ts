import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { FileAlertLog } from '../../src/console/alerts/alert-log.js';
import { webhookChannel, type Alert } from '../../src/console/alerts/channels.js';
import { AlertWatcher } from '../../src/console/alerts/watcher.js';
import { signWebhook, verifyWebhook, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../src/console/alerts/webhook-signature.js';
import { silentLogger } from '../../src/internal.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { consoleReads, NO_ALERTS } from './console-harness.js';
import { LEDGER_WAIT_MS } from '../../src/console/server.js';

const SECRET = 'whsec-a-long-shared-secret';
const steps: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of steps.splice(0).reverse()) await step();
});

/** A webhook receiver: verifies each alert as docs/console.md says, answers with the next status of `statuses` (then 200). */
async function receiver(statuses: number[] = []) {
  const received: { alert: Alert; verified: boolean }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const verified = verifyWebhook(SECRET, { timestamp: req.headers[TIMESTAMP_HEADER] as string, signature: req.headers[SIGNATURE_HEADER] as string }, body);
      const status = statuses.shift() ?? 200;
      if (status === 200) received.push({ alert: JSON.parse(body) as Alert, verified });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  steps.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

/** A file ledger where the account spent `usd` today, and a watcher over it sending to `url` (a process of its own: restart by calling again). */
async function setUp(dir: string, url: string, caps = { accountDailyUsd: 1 }, logger = silentLogger()) {
  const store = new FileQuotaStore({ dir });
  await store.open();
  steps.push(() => store.close());
  const watcher = new AlertWatcher({
    readWaitMs: LEDGER_WAIT_MS,
    source: { store, operator: { caps, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' } },
    ...consoleReads(store),
    log: new FileAlertLog(dir),
    channels: [webhookChannel({ url, secret: SECRET })],
    config: NO_ALERTS,
    logger,
  });
  steps.push(() => watcher.stop());
  return { store, watcher };
}

async function spend(store: FileQuotaStore, jobId: string, usd: number) {
  expect(await store.reserve({ jobId, userKey: 'cli:me', scopeKey: 'cli', estimateUsd: usd, limits: {}, now: Date.now() })).toEqual({ ok: true });
  await store.markSent(jobId);
  await store.settle(jobId, usd);
}

describe('alerts', () => {
  it('signs every webhook alert: HMAC-SHA256 of "<timestamp>.<body>", refused when changed or stale', () => {
    const body = '{"id":"x"}';
    const signature = signWebhook(SECRET, 1_900_000_000, body);
    expect(signature).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(SECRET, { timestamp: '1900000000', signature }, body, 1_900_000_000_000)).toBe(true);
    expect(verifyWebhook(SECRET, { timestamp: '1900000000', signature }, '{"id":"y"}', 1_900_000_000_000)).toBe(false);
    expect(verifyWebhook('another-secret-of-16', { timestamp: '1900000000', signature }, body, 1_900_000_000_000)).toBe(false);
    expect(verifyWebhook(SECRET, { timestamp: '1900000000', signature }, body, 1_900_000_000_000 + 301_000)).toBe(false);
  });

  it('sends the highest threshold a cap passed, once per cap and period, also after a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-alerts-'));
    steps.push(() => rm(dir, { recursive: true, force: true }));
    const hook = await receiver();
    const first = await setUp(dir, hook.url);
    await spend(first.store, 'a', 0.55);
    expect((await first.watcher.check()).map((a) => a.id)).toEqual([expect.stringMatching(/^cap:account:account:day:\d{4}-\d\d-\d\d:1usd:50$/)]);
    expect(await first.watcher.check()).toEqual([]);
    await spend(first.store, 'b', 0.5); // 105 %: past 80 and 100 at once, only 100 is sent
    expect((await first.watcher.check()).map((a) => a.cap?.threshold)).toEqual([100]);
    expect(hook.received.map((r) => [r.alert.cap?.threshold, r.verified])).toEqual([
      [50, true],
      [100, true],
    ]);
    expect(hook.received[1]!.alert.text).toMatch(/^Pictor: the whole account has used \$1\.05 of its daily cap of \$1\.00 \(105 %, past 100 %, settled and reserved by running jobs\)\. Its jobs are refused until the cap resets at 00:00 UTC/);
    await first.watcher.stop();
    await first.store.close();
    // A restart: the same folder, a new process.
    const second = await setUp(dir, hook.url);
    expect(await second.watcher.check()).toEqual([]);
    expect(hook.received).toHaveLength(2);
  });

  it('tries an alert the destination did not take again at the next check', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-alerts-'));
    steps.push(() => rm(dir, { recursive: true, force: true }));
    const hook = await receiver([500]);
    const { store, watcher } = await setUp(dir, hook.url);
    await spend(store, 'a', 0.85);
    expect(await watcher.check()).toEqual([]);
    expect((await watcher.check()).map((a) => a.cap?.trigger)).toEqual(['full']);
    expect(hook.received).toHaveLength(1);
  });

  it('logs a webhook it could not send to by its origin only, never its path or query (where a webhook keeps its secret)', async () => {
    // A port nothing listens on; a receiver that redirects; and user:password@ in the URL, which fetch refuses.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const redirecting = createServer((_req, res) => res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end());
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    steps.push(() => new Promise((resolve) => redirecting.close(() => resolve())));
    const redirectPort = (redirecting.address() as AddressInfo).port;
    const secretPart = '/services/T000/B000/sekrit-path?token=sekrit-query';
    for (const [origin, url] of [
      [`http://127.0.0.1:${closedPort.port}`, `http://127.0.0.1:${closedPort.port}${secretPart}`],
      [`http://127.0.0.1:${redirectPort}`, `http://127.0.0.1:${redirectPort}${secretPart}`],
      [`http://127.0.0.1:${redirectPort}`, `http://user:sekrit-password@127.0.0.1:${redirectPort}${secretPart}`],
    ]) {
      const dir = await mkdtemp(join(tmpdir(), 'pictor-alerts-'));
      steps.push(() => rm(dir, { recursive: true, force: true }));
      const lines: string[] = [];
      const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
      const { store, watcher } = await setUp(dir, url!, { accountDailyUsd: 1 }, logger);
      await spend(store, 'a', 0.85);
      expect(await watcher.check()).toEqual([]);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(origin);
      expect(lines[0]).not.toMatch(/sekrit|services|T000/);
    }
  });
});
