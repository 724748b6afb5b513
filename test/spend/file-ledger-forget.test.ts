import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { FileQuotaStore } from '../../src/internal.js';
import { spyOnInstance } from '../helpers/instance-spy.js';
import { useTempDirs } from '../helpers/runner-harness.js';

const newDir = useTempDirs();
const open: FileQuotaStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const job = (prompt: string) => ({ operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low', prompt });

async function settledJob(store: FileQuotaStore, jobId: string, userKey: string, prompt: string, now = Date.now()): Promise<void> {
  await store.reserve({ jobId, userKey, scopeKey: 'slack:T1', estimateUsd: 0.02, limits: {}, now, job: job(prompt) });
  await store.settle(jobId, 0.011);
}

/** Runs `meanwhile` once the forget has looked through usage.jsonl without the lock, before it takes the lock. */
function betweenLookAndLock(store: FileQuotaStore, meanwhile: () => Promise<void>): void {
  const look = FileQuotaStore.prototype.lookForPromptsOf;
  const spy = spyOnInstance(FileQuotaStore.prototype, 'lookForPromptsOf', (s) => s === store).mockImplementationOnce(async function (this: FileQuotaStore, userKey: string) {
    const seen = await look.call(this, userKey);
    await meanwhile();
    return seen;
  });
  onTestFinished(() => spy.mockRestore());
}

describe('forgetting a member’s prompts in the file ledger', () => {
  it('erases the prompt of a usage line of theirs a crash cut short (skipped when read), and keeps the whole records', async () => {
    const store = new FileQuotaStore({ dir: await newDir() });
    open.push(store);
    await store.open();
    await settledJob(store, 'other', 'slack:U2', 'a calm lake');
    await settledJob(store, 'theirs', 'slack:U1', 'a QUIXOTIC fox');
    // The last append cut short after its prompt: not a record any more, the prompt still in the file.
    const text = await readFile(store.usagePath, 'utf8');
    await writeFile(store.usagePath, text.trimEnd().slice(0, -20));
    expect(await readFile(store.usagePath, 'utf8')).toContain('QUIXOTIC');

    await store.forgetPrompts('slack:U1');

    expect(await readFile(store.usagePath, 'utf8')).not.toContain('QUIXOTIC');
    expect((await store.usage({})).map((r) => [r.jobId, r.prompt])).toEqual([['other', 'a calm lake']]);
  });

  it('leaves usage.jsonl as it is for a member with no prompt in it, though another member’s id begins with theirs', async () => {
    const store = new FileQuotaStore({ dir: await newDir() });
    open.push(store);
    await store.open();
    await settledJob(store, 'other', 'slack:U10', 'a calm lake');
    const before = await readFile(store.usagePath, 'utf8');

    await store.forgetPrompts('slack:U1');

    // Not rewritten (a rewrite starts with a rewrite line of its own): nothing of theirs to erase.
    expect(await readFile(store.usagePath, 'utf8')).toBe(before);
  });

  it('keeps another member’s damaged line as written when it erases theirs, so reads still say it was skipped', async () => {
    const store = new FileQuotaStore({ dir: await newDir() });
    open.push(store);
    await store.open();
    await settledJob(store, 'other', 'slack:U2', 'a calm lake');
    await settledJob(store, 'theirs', 'slack:U1', 'a QUIXOTIC fox');
    await writeFile(store.usagePath, `${await readFile(store.usagePath, 'utf8')}{"jobId":"damaged","userKey":"slack:U2"\n`);
    const damagedBefore: number[] = [];
    await store.usage({ onDamagedLines: (n) => damagedBefore.push(n) });

    await store.forgetPrompts('slack:U1');

    expect(await readFile(store.usagePath, 'utf8')).not.toContain('QUIXOTIC');
    const damaged: number[] = [];
    expect((await store.usage({ onDamagedLines: (n) => damaged.push(n) })).map((r) => [r.jobId, r.prompt])).toEqual([['other', 'a calm lake'], ['theirs', undefined]]);
    expect(damaged).toEqual(damagedBefore);
    expect(damaged).toEqual([1]);
  });

  it('erases the prompts of their lines another process appended after the look, and keeps the other members’ lines appended then', async () => {
    const store = new FileQuotaStore({ dir: await newDir() });
    open.push(store);
    await store.open();
    await settledJob(store, 'other', 'slack:U2', 'a calm lake');
    await settledJob(store, 'theirs', 'slack:U1', 'a QUIXOTIC fox');
    betweenLookAndLock(store, async () => {
      await settledJob(store, 'theirs-later', 'slack:U1', 'a ZEPHYR owl');
      await settledJob(store, 'other-later', 'slack:U2', 'a slow river');
    });

    await store.forgetPrompts('slack:U1');

    const text = await readFile(store.usagePath, 'utf8');
    expect(text).not.toContain('QUIXOTIC');
    expect(text).not.toContain('ZEPHYR');
    expect((await store.usage({})).map((r) => [r.jobId, r.prompt])).toEqual([
      ['other', 'a calm lake'],
      ['theirs', undefined],
      ['theirs-later', undefined],
      ['other-later', 'a slow river'],
    ]);
  });

  it('brings back nothing a rewrite of usage.jsonl after the look took out (another forget)', async () => {
    const store = new FileQuotaStore({ dir: await newDir() });
    open.push(store);
    await store.open();
    await settledJob(store, 'other', 'slack:U2', 'a calm lake');
    await settledJob(store, 'theirs', 'slack:U1', 'a QUIXOTIC fox');
    betweenLookAndLock(store, () => store.forgetPrompts('slack:U2'));

    await store.forgetPrompts('slack:U1');

    const text = await readFile(store.usagePath, 'utf8');
    expect(text).not.toContain('QUIXOTIC');
    expect(text).not.toContain('calm lake');
    expect((await store.usage({})).map((r) => [r.jobId, r.prompt])).toEqual([
      ['other', undefined],
      ['theirs', undefined],
    ]);
  });

  it('does not rewrite usage.jsonl again when another forget of the member erased their prompts after the look', async () => {
    const store = new FileQuotaStore({ dir: await newDir() });
    open.push(store);
    await store.open();
    await settledJob(store, 'theirs', 'slack:U1', 'a QUIXOTIC fox');
    let afterOther = '';
    betweenLookAndLock(store, async () => {
      await store.forgetPrompts('slack:U1');
      afterOther = (await readFile(store.usagePath, 'utf8')).split('\n')[0]!;
    });

    await store.forgetPrompts('slack:U1');

    const text = await readFile(store.usagePath, 'utf8');
    expect(text).not.toContain('QUIXOTIC');
    // The same rewrite id: nothing of theirs was left, so the file was not rewritten again.
    expect(afterOther).not.toBe('');
    expect(text.split('\n')[0]).toBe(afterOther);
  });

  it('brings back no record the daily clean-up took out of usage.jsonl after the look', async () => {
    const DAY = 24 * 60 * 60 * 1000;
    let now = Date.UTC(2026, 0, 10, 12);
    const store = new FileQuotaStore({ dir: await newDir(), usageRetentionDays: 2, clock: () => now });
    open.push(store);
    await store.open();
    await settledJob(store, 'expiring', 'slack:U2', 'a calm lake', now);
    now += DAY / 2;
    await settledJob(store, 'theirs', 'slack:U1', 'a QUIXOTIC fox', now);
    betweenLookAndLock(store, async () => {
      // Two days on, the next append first drops the records older than the two days kept.
      now += 2 * DAY;
      await settledJob(store, 'fresh', 'slack:U3', 'a red kite', now);
    });

    await store.forgetPrompts('slack:U1');

    const text = await readFile(store.usagePath, 'utf8');
    expect(text).not.toContain('QUIXOTIC');
    expect(text).not.toContain('calm lake');
    expect((await store.usage({})).map((r) => [r.jobId, r.prompt])).toEqual([
      ['theirs', undefined],
      ['fresh', 'a red kite'],
    ]);
  });

  /** A forget of slack:U1 beside another member's damaged line that names slack:U1's id only as text. */
  async function forgetBesideDamagedLine(damagedLine: string, otherUserKey: string): Promise<void> {
    const store = new FileQuotaStore({ dir: await newDir() });
    open.push(store);
    await store.open();
    await settledJob(store, 'other', otherUserKey, 'a calm lake');
    await writeFile(store.usagePath, `${await readFile(store.usagePath, 'utf8')}${damagedLine}\n`);
    await settledJob(store, 'other-later', otherUserKey, 'a slow river');
    const before = await readFile(store.usagePath, 'utf8');

    await store.forgetPrompts('slack:U1');

    // Not rewritten (a rewrite starts with a rewrite line of its own): the damaged line is not theirs.
    expect(await readFile(store.usagePath, 'utf8')).toBe(before);
    const damaged: number[] = [];
    expect((await store.usage({ onDamagedLines: (n) => damaged.push(n) })).map((r) => r.jobId)).toEqual(['other', 'other-later']);
    expect(damaged).toEqual([1]);
  }

  it('keeps the damaged line of a member whose id begins with theirs, and does not rewrite usage.jsonl for it', async () => {
    await forgetBesideDamagedLine('{"jobId":"damaged","userKey":"slack:U10","prompt":"a calm', 'slack:U10');
  });

  it('keeps another member’s damaged line whose prompt names their id, and does not rewrite usage.jsonl for it', async () => {
    await forgetBesideDamagedLine('{"jobId":"damaged","userKey":"slack:U2","prompt":"ask slack:U1 about', 'slack:U2');
  });

  it('drops a damaged line cut off right after their id, as theirs', async () => {
    const store = new FileQuotaStore({ dir: await newDir() });
    open.push(store);
    await store.open();
    await settledJob(store, 'theirs', 'slack:U1', 'a QUIXOTIC fox');
    await writeFile(store.usagePath, `${await readFile(store.usagePath, 'utf8')}{"jobId":"damaged","time":1,"userKey":"slack:U1\n`);

    await store.forgetPrompts('slack:U1');

    const text = await readFile(store.usagePath, 'utf8');
    expect(text).not.toContain('QUIXOTIC');
    expect(text).not.toContain('"damaged"');
  });
});
