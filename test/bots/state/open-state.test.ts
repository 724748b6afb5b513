import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { botSpaces, openBotState } from '../../../bots/state/index.js';
import { DATA_FOLDER_LOCK, DATA_FOLDER_LOCK_STALE_MS, holdDataFolder, RedisLink, silentLogger } from '../../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { testTempDir } from '../../helpers/temp-dir.js';
import { run } from '../../cli/run-cli.js';

const open = (dataDir: string) => openBotState({ dataDir, logger: silentLogger() });

/** The pid of a process that ran on this machine and is gone. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid!;
}

describe('openBotState on a data folder (no Redis)', () => {
  it('holds the folder while open, for this process only (its states share it), and gives it back when the last closes', async () => {
    const dataDir = await testTempDir('pictor-state-lock-');
    const lock = join(dataDir, DATA_FOLDER_LOCK);
    const first = await open(dataDir);
    expect(readFileSync(lock, 'utf8')).toMatch(new RegExp(`^${process.pid}\n${hostname()}\n`));
    const second = await open(dataDir);
    await first.close();
    expect(existsSync(lock)).toBe(true);
    await second.close();
    expect(existsSync(lock)).toBe(false);
    const again = await open(dataDir);
    await again.close();
  });

  it('refuses the folder while another live process of this machine holds it', async () => {
    const dataDir = await testTempDir('pictor-state-lock-');
    writeFileSync(join(dataDir, DATA_FOLDER_LOCK), `${process.ppid}\n${hostname()}\n`);
    await expect(open(dataDir)).rejects.toMatchObject({ param: 'PICTOR_DATA_DIR', message: expect.stringContaining(`(pid ${process.ppid} on ${hostname()})`) });
  });

  it('takes over a lock of another machine only once it has not been renewed for 90 s (a network folder, a container made again under a new host name)', async () => {
    const dataDir = await testTempDir('pictor-state-lock-');
    const lock = join(dataDir, DATA_FOLDER_LOCK);
    writeFileSync(lock, `4242\nanother-host.example\n`);
    await expect(open(dataDir)).rejects.toMatchObject({ param: 'PICTOR_DATA_DIR', message: expect.stringContaining(`(pid 4242 on another-host.example)`) });
    const past = new Date(Date.now() - DATA_FOLDER_LOCK_STALE_MS - 5000);
    utimesSync(lock, past, past);
    const state = await open(dataDir);
    await state.close();
  });

  it('takes over a lock this very pid left before once it is older than two renewals (a container started again, pid 1 both times), never a fresh one (another container with the same pid and host name)', async () => {
    const dataDir = await testTempDir('pictor-state-lock-');
    const lock = join(dataDir, DATA_FOLDER_LOCK);
    writeFileSync(lock, `${process.pid}\n${hostname()}\n`);
    await expect(open(dataDir)).rejects.toMatchObject({ param: 'PICTOR_DATA_DIR' });
    const past = new Date(Date.now() - 60_000);
    utimesSync(lock, past, past);
    const state = await open(dataDir);
    await state.close();
  });

  it('renews the lock while held, so another machine never takes over a live holder', async () => {
    const dataDir = await testTempDir('pictor-state-lock-');
    const lock = join(dataDir, DATA_FOLDER_LOCK);
    const held = await holdDataFolder(dataDir, { renewMs: 20 });
    try {
      const past = new Date(Date.now() - DATA_FOLDER_LOCK_STALE_MS - 5000);
      utimesSync(lock, past, past);
      await vi.waitFor(() => expect(Date.now() - statSync(lock).mtimeMs).toBeLessThan(DATA_FOLDER_LOCK_STALE_MS));
    } finally {
      await held.release();
    }
  });

  it('takes over a lock left by a process of this machine that is gone (a kill -9)', async () => {
    const dataDir = await testTempDir('pictor-state-lock-');
    writeFileSync(join(dataDir, DATA_FOLDER_LOCK), `${deadPid()}\n${hostname()}\n`);
    const state = await open(dataDir);
    await state.close();
  });

  it('lets the CLI, which shares only the ledger there, run beside the bots', async () => {
    const dataDir = await testTempDir('pictor-state-lock-');
    const state = await open(dataDir);
    try {
      const out = await testTempDir('pictor-state-lock-out-');
      const { code } = await run(['generate', '--prompt', 'a fox', '--quality', 'low', '--out', join(out, 'fox.png')], { PICTOR_DATA_DIR: dataDir, PICTOR_EMULATOR_LATENCY_MS: '0' });
      expect(code).toBe(0);
    } finally {
      await state.close();
    }
  }, 60_000);
});

describe('openBotState on a data folder: what a write a kill cut short left', () => {
  it('removes it from every space at the start, used yet or not, and again from every space when a member is forgotten', async () => {
    const dataDir = await testTempDir('pictor-state-leftovers-');
    // Each a whole version of its file (a record with its prompt, a kept image), left by a process killed before its rename.
    const pid = deadPid();
    const leftovers = Object.values(botSpaces()).flatMap(({ dir }) => ['mine.json', 'mine.bin'].map((file) => join(dataDir, dir, `${file}.${pid}.0a1b2c3d.tmp`)));
    const leave = () => {
      for (const file of leftovers) {
        mkdirSync(join(file, '..'), { recursive: true });
        writeFileSync(file, 'a fox');
        writeFileSync(`${file}.bak`, 'a fox');
      }
    };
    const kept = () => leftovers.flatMap((file) => [file, `${file}.bak`]).filter((file) => existsSync(file));
    leave();
    const state = await open(dataDir);
    try {
      expect(kept()).toEqual([]);
      // A forget, which uses few spaces, removes them from every one too.
      leave();
      await state.forget('discord:42');
      expect(kept()).toEqual([]);
    } finally {
      await state.close();
    }
  });
});

const redis = testRedis();

describe.each([
  { name: 'the data folder', backend: 'file' as const, skip: undefined },
  { name: 'Redis', backend: 'redis' as const, skip: redis.skipReason },
])('a Slack member’s forget on $name', ({ backend, skip }) => {
  it.skipIf(skip)('erases them from who opened the Home tab lately, in every workspace, and leaves the others', async () => {
    const prefix = uniquePrefix('home-viewers');
    const link = backend === 'redis' ? await RedisLink.open({ url: requireRedisUrl(redis), prefix }) : undefined;
    const state = await openBotState({ dataDir: await testTempDir('pictor-home-viewers-'), redis: link, logger: silentLogger() });
    try {
      const viewers = state.store.space<Record<string, { seenAt: number }>>(state.spaces.slackHomeViewers);
      await viewers.put('slack-T0ONE', { U0ALICE: { seenAt: 1 }, U0BOB: { seenAt: 2 } });
      await viewers.put('slack-T0TWO', { U0ALICE: { seenAt: 3 } });
      await state.forget('slack:U0ALICE');
      expect(await viewers.get('slack-T0ONE')).toEqual({ U0BOB: { seenAt: 2 } });
      expect(await viewers.get('slack-T0TWO')).toEqual({});
    } finally {
      await state.close();
      if (link) {
        await link.close();
        await deleteKeys(requireRedisUrl(redis), prefix);
      }
    }
  });
});
