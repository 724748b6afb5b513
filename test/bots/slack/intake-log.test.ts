import { afterEach, describe, expect, it } from 'vitest';
import { editBeingFetched } from '../../helpers/runner-harness.js';
import { RecordingLogger } from '../discord/harness.js';
import { png, startHarness, type Harness } from './harness.js';

/**
 * What an edit asked by a mention did not start is one line in the operator's log, by the one rule: the runner's for
 * what its intake refused or could not start (with the job's id), the bot's for the images it refused itself before
 * asking the runner — never both. (Every entry point's refusal by a rule or a budget: intake.test.ts.)
 */
describe('an edit asked by a mention that did not start, in the operator’s log', () => {
  const MEMBER = 'U0ALICE';
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** Mentions the bot with `file`, and answers the lines with `code` once the member was told privately why nothing started. */
  async function linesOnceTold(harness: Harness, logger: RecordingLogger, file: { name: string; bytes: Buffer; size?: number }, code: string) {
    const { fake } = harness;
    await fake.userMessage({ channel: 'C0TEAM', user: MEMBER, text: `<@${fake.botUserId}> make the sky purple --quality low`, files: [fake.addFile(file)] });
    await fake.waitFor(() => fake.ephemerals.find((e) => e.user === MEMBER), 'the private note');
    return logger.entries.filter((e) => (e.obj as { code?: string }).code === code);
  }

  it('refused by a full queue: one warn line, with its id', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ maxQueuedInputBytes: 50_000, logger });
    // Another edit's images hold 40 KB of the queue's 50 KB while they download.
    const other = editBeingFetched(h.runner, { platform: 'slack', userId: 'U0OTHER', channelId: 'C0TEAM', scopeId: h.fake.teamId }, 40_000);
    expect(await other.admitted).toBeUndefined();
    const lines = await linesOnceTold(h, logger, { name: 'sky.png', bytes: await png(20, 20), size: 20_000 }, 'queue_full');
    other.giveUp();
    await other.handle;
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', obj: expect.objectContaining({ jobId: expect.any(String), limit: 50_000 }) })]);
  });

  it('with an image the bot refused itself (larger than the service takes, as Slack says): one info line, the member’s, naming who asked', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ logger });
    const lines = await linesOnceTold(h, logger, { name: 'sky.png', bytes: await png(20, 20), size: 60_000_000 }, 'file_too_large');
    expect(lines).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'slack', userId: MEMBER }) })]);
  });

  it('admitted, then its image turned out not to be one: one info line, with the job’s id', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ logger });
    const lines = await linesOnceTold(h, logger, { name: 'notes.png', bytes: Buffer.from('these are my notes, not a picture') }, 'file_not_image');
    expect(lines).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ jobId: expect.any(String), userId: MEMBER }) })]);
  });
});
