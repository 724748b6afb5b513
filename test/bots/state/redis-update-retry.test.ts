import { describe, expect, it, vi } from 'vitest';
import { RedisStateStore, type SpaceDefinition } from '../../../bots/state/index.js';
import { RedisLink } from '../../../src/internal.js';
import { useCleanup } from '../../helpers/service-fakes.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';

const defer = useCleanup();
const redis = testRedis();

interface Job {
  status: 'running' | 'ended';
  /** Its end is in the history and the audit channel: nothing left for its holder to do. */
  recorded?: boolean;
  progress?: number;
}

const SPACE: SpaceDefinition = { name: 'test-jobs', dir: 'test/jobs', ttlMs: 60_000, maxValueBytes: 1024 };
/** Held while anything of it is left to do, released once its end is recorded. */
const holdUnlessRecorded = (job: Job) => !(job.status === 'ended' && job.recorded === true);

/** Two processes on one Redis, each on a link of its own. */
async function twoProcesses() {
  const url = requireRedisUrl(redis);
  const prefix = uniquePrefix('update-hold');
  defer(() => deleteKeys(url, prefix));
  const open = async () => {
    const link = await RedisLink.open({ url, prefix });
    const store = await RedisStateStore.open({ link });
    defer(async () => {
      await store.close();
      await link.close();
    });
    return { link, store, jobs: store.space<Job>(SPACE) };
  };
  return { prefix, a: await open(), b: await open() };
}

/**
 * Makes `meanwhile` happen between the first read of an update by `link`'s process and its write (the backend's put
 * script, which writes only if the record is still as read); answers the spy counting its writes.
 */
function meanwhileBeforeFirstWrite(link: RedisLink, meanwhile: () => Promise<void>) {
  const commands = link.commands as RedisLink['commands'] & { pictorStatePut: (...args: unknown[]) => Promise<number> };
  const put = commands.pictorStatePut.bind(commands);
  const written = vi.spyOn(commands, 'pictorStatePut').mockImplementation(async (...args: unknown[]) => {
    if (written.mock.calls.length === 1) await meanwhile();
    return put(...args);
  });
  return written;
}

describe.skipIf(redis.skipReason)('a Redis update written again because the record changed under it', () => {
  it('holds or releases the record as its hold decides from the value finally written, asked again on the try that wrote it', async () => {
    const { a, b } = await twoProcesses();
    await a.jobs.put('k', { status: 'running' }, { hold: true });
    // Between a's read and its write, b records the job's end (a write that leaves the holder as it is).
    const written = meanwhileBeforeFirstWrite(a.link, () => b.jobs.put('k', { status: 'ended', recorded: true }));
    const asked: Job[] = [];

    const { before, after } = await a.jobs.update('k', (job) => job && { ...job, progress: 100 }, { hold: (job) => (asked.push(job), holdUnlessRecorded(job)) });

    expect(written).toHaveBeenCalledTimes(2);
    expect(asked).toEqual([
      { status: 'running', progress: 100 },
      { status: 'ended', recorded: true, progress: 100 },
    ]);
    expect({ before, after }).toEqual({ before: { status: 'ended', recorded: true }, after: { status: 'ended', recorded: true, progress: 100 } });
    expect(await b.jobs.get('k')).toEqual(after);
    // Released by that write: no process is left holding an ended, recorded job (its sweep has nothing to take).
    expect(await b.jobs.heldElsewhere('k')).toBe(false);
  });

  it('keeps holding a record the value finally written still needs held, though the value first read would have released it', async () => {
    const { a, b } = await twoProcesses();
    await a.jobs.put('k', { status: 'ended', recorded: true }, { hold: false });
    // Between a's read and its write, b writes the record as running again.
    const written = meanwhileBeforeFirstWrite(a.link, () => b.jobs.put('k', { status: 'running' }));

    const { after } = await a.jobs.update('k', (job) => job && { ...job, progress: 0 }, { hold: holdUnlessRecorded });

    expect(written).toHaveBeenCalledTimes(2);
    expect(after).toEqual({ status: 'running', progress: 0 });
    expect(await b.jobs.heldElsewhere('k')).toBe(true);
  });
});
