import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { historyOf } from '../../../bots/state/history.js';
import { openBotState } from '../../../bots/state/index.js';
import { RedisLink, silentLogger } from '../../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { RecordingLogger } from '../discord/harness.js';
import { tempDataDir, useCleanup } from '../../helpers/service-fakes.js';

const defer = useCleanup();
const redis = testRedis();
const MEMBER = 'slack:U0ONE';
const whole = () => JSON.stringify({ version: 1, users: { [MEMBER]: [{ key: 'j1', scopeKey: 'slack:T0PICTOR', at: Date.now(), prompt: 'a fox' }] } });

describe('the upgrade of a 0.1 history.json', () => {
  it('stops the start naming a history.json that cannot be read and has no usable backup, and leaves it where it is', async () => {
    const dataDir = await tempDataDir(defer, 'pictor-upgrade-history-');
    const file = join(dataDir, 'history.json');
    await writeFile(file, whole().slice(0, -5));
    await expect(openBotState({ dataDir, logger: silentLogger() })).rejects.toMatchObject({ code: 'history_store_unreadable', file, message: expect.stringContaining('move it aside') });
    expect(existsSync(file)).toBe(true);
  });

  it('moves the backup copy’s entries when history.json cannot be read, then removes both', async () => {
    const dataDir = await tempDataDir(defer, 'pictor-upgrade-history-');
    await writeFile(join(dataDir, 'history.json'), whole().slice(0, -5));
    await writeFile(join(dataDir, 'history.json.bak'), whole());
    const state = await openBotState({ dataDir, logger: silentLogger() });
    defer(() => state.close());
    expect((await historyOf(state, MEMBER)).map((entry) => entry.key)).toEqual(['j1']);
    expect([existsSync(join(dataDir, 'history.json')), existsSync(join(dataDir, 'history.json.bak'))]).toEqual([false, false]);
  });

  it('reads only history.json when it is good, not its backup copy (here one it could not read, a folder), then removes both', async () => {
    const dataDir = await tempDataDir(defer, 'pictor-upgrade-history-');
    await writeFile(join(dataDir, 'history.json'), whole());
    await mkdir(join(dataDir, 'history.json.bak'));
    const state = await openBotState({ dataDir, logger: silentLogger() });
    defer(() => state.close());
    expect((await historyOf(state, MEMBER)).map((entry) => entry.key)).toEqual(['j1']);
    expect([existsSync(join(dataDir, 'history.json')), existsSync(join(dataDir, 'history.json.bak'))]).toEqual([false, false]);
  });

  it('stops the start on a history.json it cannot read for another reason than its absence (here a folder), naming it, and leaves it', async () => {
    const dataDir = await tempDataDir(defer, 'pictor-upgrade-history-');
    const file = join(dataDir, 'history.json');
    await mkdir(file);
    await expect(openBotState({ dataDir, logger: silentLogger() })).rejects.toThrow(`could not read ${file}, kept by an older version (EISDIR)`);
    expect(existsSync(file)).toBe(true);
  });
});

describe.skipIf(redis.skipReason)('the upgrade of the job history 0.1 kept in Redis', () => {
  it('moves the entries it can read and logs how many it dropped as damaged, and where, never their text', async () => {
    const [url, prefix] = [requireRedisUrl(redis), uniquePrefix('upgrade-history')];
    const link = await RedisLink.open({ url, prefix });
    defer(async () => {
      await link.close();
      await deleteKeys(url, prefix);
    });
    const key = `${prefix}:history:user:${MEMBER}`;
    await link.commands.rpush(key, JSON.stringify({ key: 'j1', scopeKey: 'slack:T0PICTOR', at: Date.now(), prompt: 'a fox' }), '{"key":"j2","prompt":"a SECRETIVE owl', '42');
    const logger = new RecordingLogger();
    const state = await openBotState({ dataDir: await tempDataDir(defer, 'pictor-upgrade-history-'), redis: link, logger });
    defer(() => state.close());
    expect((await historyOf(state, MEMBER)).map((entry) => entry.key)).toEqual(['j1']);
    const told = logger.entries.filter((e) => e.level === 'warn' && e.msg?.includes('damaged entries'));
    expect(told.map((e) => e.obj)).toEqual([{ key, damaged: 2 }]);
    expect(JSON.stringify(logger.entries)).not.toContain('SECRETIVE');
    expect(await link.commands.exists(key)).toBe(0);
  });
});
