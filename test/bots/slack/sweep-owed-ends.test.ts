import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OwedWrites } from '../../../bots/runner/owed-writes.js';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { spyOnInstance } from '../../helpers/instance-spy.js';
import { refused, refuseStateWrites } from '../../helpers/refusing-state.js';
import { RecordingLogger } from '../discord/harness.js';
import { finishedJob, hasButton, jobMessages, startHarness, statusOf, type Harness } from './harness.js';

/** The saved request of the only job run in a data folder, as its file holds it. */
async function savedRequest(dataDir: string): Promise<Record<string, unknown>> {
  const dir = join(dataDir, 'slack', 'requests');
  const [file] = (await readdir(dir)).filter((name) => name.endsWith('.json'));
  return (JSON.parse(await readFile(join(dir, file!), 'utf8')) as { value: Record<string, unknown> }).value;
}

describe('a Slack job that ends while the bots’ state refuses writes (a full Redis, a full disk)', () => {
  const open: Harness[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const h of open.splice(0).reverse()) await h.close();
  });

  it('writes its end once the state takes writes again, so a restart never tells the member a delivered job stopped', async () => {
    const logger = new RecordingLogger();
    const before = await startHarness({ emulator: { latencyMs: 400 }, logger });
    const { fake, dataDir } = before;
    await fake.command({ command: '/imagine', text: 'a fox delivered into a full state --quality low', channel: 'C0FOXES', user: 'U0ALICE' });
    await fake.waitFor(() => jobMessages(fake, 'C0FOXES').find((m) => hasButton(m, 'pictor_cancel')), 'the job drawing');
    const { id } = await savedRequest(dataDir);
    const full = refuseStateWrites(before);
    full.now = true;
    const done = await finishedJob(fake, 'C0FOXES');
    expect(statusOf(done)).toContain('Done');
    // Its end's write refused, and the runner's record of it (the history is in the same state) too.
    await fake.waitFor(() => logger.entries.some((e) => e.msg === 'could not record the end of a job') || undefined, 'the end’s record refused');
    await fake.waitFor(() => logger.entries.some((e) => e.msg === 'could not save the end of a request') || undefined, 'the end’s write refused');
    full.now = false;
    await before.close({ fake: true, dataDir: true });

    const after = await startHarness({ fake, dataDir });
    open.push(after);
    // The next start found nothing to say of it: its end was written, then recorded, once.
    await vi.waitFor(async () => expect(await savedRequest(dataDir)).toMatchObject({ id, status: 'ended', endRecorded: true }), { timeout: 15_000 });
    const shown = jobMessages(fake, 'C0FOXES');
    expect(shown).toHaveLength(1);
    expect(statusOf(shown[0]!)).not.toContain('Stopped');
    expect(statusOf(shown[0]!)).toBe(statusOf(done));
    const alice = { platform: 'slack' as const, userId: 'U0ALICE', channelId: '', scopeId: 'T0PICTOR' };
    const entries = (await after.runner.history!.mine(alice)).filter((e) => e.prompt === 'a fox delivered into a full state');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ status: 'completed', quality: 'low' });
  });

  it('writes an end refused while the stop waits for it, its first write still under way when the stop came', async () => {
    const logger = new RecordingLogger();
    const before = await startHarness({ emulator: { latencyMs: 400 }, logger });
    const { fake, dataDir } = before;
    await fake.command({ command: '/imagine', text: 'a fox ending as the bot stops --quality low', channel: 'C0FOXES', user: 'U0ALICE' });
    await fake.waitFor(() => jobMessages(fake, 'C0FOXES').find((m) => hasButton(m, 'pictor_cancel')), 'the job drawing');
    const { id } = await savedRequest(dataDir);
    // The end's first write stays on its way (a slow Redis round trip), and is refused only once the stop waits for the ends owed.
    let refuse: (() => void) | undefined;
    const mine = (_store: RequestStore, key: string, patch: { status?: string }) => key === id && patch.status === 'ended';
    spyOnInstance(RequestStore.prototype, 'update', mine).mockImplementationOnce(
      () => new Promise((resolve) => (refuse = () => resolve(refused()))),
    );
    const realPayWithin = OwedWrites.prototype.payWithin;
    spyOnInstance(OwedWrites.prototype, 'payWithin', () => refuse !== undefined).mockImplementationOnce(function (this: OwedWrites, ...args) {
      const waited = realPayWithin.apply(this, args);
      refuse!();
      return waited;
    });
    expect(statusOf(await finishedJob(fake, 'C0FOXES'))).toContain('Done');
    await fake.waitFor(() => refuse, 'the end’s write under way');
    await before.close({ dataDir: true });

    // Written on its second try, before the state closed: nothing lost, nothing for a sweep to say stopped.
    expect(await savedRequest(dataDir)).toMatchObject({ id, status: 'ended' });
    expect(logger.entries.filter((e) => e.level === 'error')).toEqual([]);
  });
});
