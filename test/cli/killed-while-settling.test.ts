import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PRICE_TABLE } from '../../src/index.js';
import { estimatePrice } from '../../src/core/pricing.js';
import { interruptReport } from '../../src/cli/interrupt.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { LEDGER_FILES } from '../../src/spend/ledger-files.js';
import { makeImage } from '../helpers/images.js';
import { head, misbehavingServer, type MisbehavingServer } from '../client/misbehaving-server.js';
import { usageText } from '../helpers/usage-days.js';
import { cliInAProcess, run, tempDir } from './run-cli.js';

/**
 * `pictor generate` (a process of its own) killed with SIGKILL, or ended by a Ctrl+C whose wait for the ledger ran out,
 * once its settle reached its usage records and before the ledger took it: the file ledger appends the record first, then
 * writes the ledger, and the exit falls between the two.
 */

const LOW = PRICE_TABLE['1024x1024'].low;
const REQUEST_ID = 'req_7f3a9c0e2b41';
const png = Buffer.from(await makeImage('png', 8, 8));

let server: MisbehavingServer | undefined;
const stores: FileQuotaStore[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

/**
 * A service that holds each request until `answer()` is called, then makes one low image of it (asked `auto`: reserved
 * at the dearest quality's estimate), with its request id; `received` resolves once a request has arrived.
 */
async function serviceHoldingItsAnswer() {
  let answer = () => {};
  const answered = new Promise<void>((resolve) => (answer = resolve));
  let seen = () => {};
  const received = new Promise<void>((resolve) => (seen = resolve));
  server = await misbehavingServer(async (req) => {
    await req.body();
    if (req.method !== 'POST') return void req.socket.end(head(404, { 'content-type': 'application/json' }, '{}'));
    seen();
    await answered;
    const body = JSON.stringify({
      created: 1,
      data: [{ b64_json: png.toString('base64') }],
      size: '1024x1024',
      quality: 'low',
      background: 'opaque',
      output_format: 'png',
      usage: { total_tokens: 3, input_tokens: 1, output_tokens: 2 },
    });
    req.socket.end(head(200, { 'content-type': 'application/json', 'x-request-id': REQUEST_ID }, body));
  });
  return { url: server.url, received, answer };
}

/** Until the returned function is called, every write of the ledger in `dir` fails (its backup copy cannot take its name) and leaves the file as it was. */
async function ledgerWritesFail(dir: string): Promise<() => Promise<void>> {
  const backup = join(dir, `${LEDGER_FILES.ledger}.bak`);
  await rm(backup, { force: true });
  await mkdir(backup);
  await writeFile(join(backup, 'in-the-way'), '');
  return () => rm(backup, { recursive: true });
}

/** `pictor generate` of one fox, asked `auto` (reserved at the dearest quality's estimate), into `out`. */
const oneFox = (out: string) => ['generate', '--prompt', 'a fox', '--quality', 'auto', '--size', '1024x1024', '--out', out];

describe('pictor generate that exits after its settle reached the usage records and before the ledger took it', () => {
  it('killed, is charged what its record says by the next run, not its estimate: one record, its request id kept', async () => {
    const service = await serviceHoldingItsAnswer();
    const data = await tempDir();
    const out = `${await tempDir()}/`;
    const env = { PICTOR_BASE_URL: service.url, PICTOR_API_KEY: 'sk-test-killed-settling-0123', PICTOR_DATA_DIR: data, PICTOR_MAX_RETRIES: '0' };
    const child = cliInAProcess(oneFox(out), env);
    const exited = new Promise((resolve) => child.process.once('exit', resolve));
    // Sent: the ledger holds the job marked sent. From here on its writes fail, so its settle reaches the usage records only.
    await service.received;
    const writesWork = await ledgerWritesFail(data);
    service.answer();
    await vi.waitFor(async () => expect(await usageText(data)).toContain(REQUEST_ID), { timeout: 15_000 });
    child.process.kill('SIGKILL');
    await exited;
    await writesWork();
    // The image it paid for was put in place before its settle began: the kill did not take it.
    expect(await child.exited).toBeNull();
    expect(await readdir(out)).toEqual([expect.stringMatching(/^a-fox-.*\.png$/)]);

    const usage = await run(['usage', '--csv'], env);
    expect(usage.code).toBe(0);
    const [columns, ...rows] = usage.stdout.split('\n').map((line) => line.split(','));
    const cell = (row: string[], name: string) => row[columns!.indexOf(name)];
    expect(rows).toHaveLength(1);
    expect(cell(rows[0]!, 'basis')).toBe('table');
    expect(Number(cell(rows[0]!, 'cost_usd'))).toBeCloseTo(LOW, 9);
    expect(cell(rows[0]!, 'request_id')).toBe(REQUEST_ID);

    // The ledger counts that amount, once, and marks nothing uncertain; its estimate was four times as much.
    expect(estimatePrice({ operation: 'generate', size: '1024x1024', quality: 'auto', n: 1 }).totalUsd).toBeGreaterThan(LOW);
    const store = new FileQuotaStore({ dir: data });
    stores.push(store);
    expect(await store.reconcile(Date.now())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    expect(await store.spentToday('account', Date.now())).toBeCloseTo(LOW, 9);
    expect(JSON.parse(await readFile(store.path, 'utf8')).uncertain).toEqual({});
    expect((await store.usage({})).map((r) => r.jobId)).toHaveLength(1);
    expect(await readdir(data)).not.toContainEqual(expect.stringMatching(/\.tmp(\.bak)?$/));
  }, 60_000);

  it('stopped by a Ctrl+C whose wait for the ledger ran out, says a record already written may decide the charge, and the next run charges what it says', async () => {
    const service = await serviceHoldingItsAnswer();
    const data = await tempDir();
    const out = `${await tempDir()}/`;
    const env = { PICTOR_BASE_URL: service.url, PICTOR_API_KEY: 'sk-test-interrupted-settling-0123', PICTOR_DATA_DIR: data, PICTOR_MAX_RETRIES: '0' };
    const child = cliInAProcess(oneFox(out), env);
    await service.received;
    const writesWork = await ledgerWritesFail(data);
    service.answer();
    await vi.waitFor(async () => expect(await usageText(data)).toContain(REQUEST_ID), { timeout: 15_000 });
    // Its images written and its settle's record in the usage records, the ledger's change refused: the Ctrl+C waits 2 s, then exits.
    child.process.kill('SIGINT');
    const ended = await child.ended;
    await writesWork();
    expect(ended.code).toBe(130);
    // The report's sentence for that exit (its words are checked in interrupt.test.ts): it names the record's case.
    expect(ended.stderr).toContain(interruptReport({ phase: 'done', files: [], written: true, exitedBy: 'timer' })[0]);

    const usage = await run(['usage', '--csv'], env);
    const [columns, ...rows] = usage.stdout.split('\n').map((line) => line.split(','));
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]![columns!.indexOf('cost_usd')])).toBeCloseTo(LOW, 9);
    const store = new FileQuotaStore({ dir: data });
    stores.push(store);
    expect(await store.reconcile(Date.now())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    expect(await store.spentToday('account', Date.now())).toBeCloseTo(LOW, 9);
    expect(JSON.parse(await readFile(store.path, 'utf8')).uncertain).toEqual({});
  }, 60_000);
});
