import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Installation } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { startService } from '../../bots/main.js';
import { RequestStore } from '../../bots/slack/RequestStore.js';
import { slackInstallationStore } from '../../bots/slack/installation-store.js';
import { FileStateStore } from '../../bots/state/FileStateStore.js';
import { openBotState } from '../../bots/state/index.js';
import { botSpaces, stateKeyOf } from '../../bots/state/spaces.js';
import { UNREADABLE, type StateStore } from '../../bots/state/StateStore.js';
import { upgradeOldLayout } from '../../bots/state/upgrade.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { RedisLink, silentLogger, type ScopeSettingEntries } from '../../src/internal.js';
import { buttonsOf, FakeDiscord } from '../fakes/discord/FakeDiscord.js';
import { OLD_IDS, oldEditInput, restoreOldDataFolder, restoreOldRedis } from '../helpers/old-layout.js';
import { discordAnswer, discordResult, startUpstream, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const defer = useCleanup();
const redis = testRedis();

/** The Slack request each backend held (their ids were random when captured). */
const OLD_REQUEST = { file: 'nCC9_Yg9NdF8trUc', redis: 'tUZtOfCoB4xA70go' };

/** What version 0.1 left for these ids: a data folder, and on Redis its keys under a prefix of their own (with a link to them). */
async function whatOldLeft(backend: 'file' | 'redis', ids: Parameters<typeof restoreOldDataFolder>[1]) {
  const dataDir = await tempDataDir(defer, 'pictor-upgrade-');
  const prefix = uniquePrefix('upgrade');
  const link = backend === 'redis' ? await RedisLink.open({ url: requireRedisUrl(redis), prefix }) : undefined;
  defer(async () => {
    await link?.close();
    if (link) await deleteKeys(requireRedisUrl(redis), prefix);
  });
  if (link) await restoreOldRedis(link.commands, prefix, ids);
  else await restoreOldDataFolder(dataDir, ids);
  return { dataDir, prefix, link };
}

describe.each([
  { backend: 'file' as const, skip: undefined },
  { backend: 'redis' as const, skip: redis.skipReason },
])('npm start on what version 0.1 left ($backend)', ({ backend, skip }) => {
  it.skipIf(skip)('keeps the buttons, the history, the installations, the chat caps and the settings working, moved once with a log line, leaving no old copy', async () => {
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000, messageRateLimit: { limit: 30, windowMs: 5000 } });
    defer(() => discord.close());
    // Version 0.1 against the real service (as the fixture was captured): the account's ledger.
    const upstream = await startUpstream(defer, 50, { recordImageBytes: true, identifyAsEmulator: false });
    const bob = discord.newUser('bob');
    const ids = { alice: discord.user.id, bob: bob.id, channel: discord.channelId, guild: discord.guildId, application: discord.applicationId };
    const { dataDir, prefix, link } = await whatOldLeft(backend, ids);

    const log: string[] = [];
    const env = {
      PICTOR_LOG_LEVEL: 'info',
      PICTOR_DATA_DIR: dataDir,
      PICTOR_BASE_URL: upstream.url,
      PICTOR_API_KEY: DEV_API_KEY,
      PICTOR_PARTIAL_IMAGES: '0',
      // The fixture's history was kept when it was captured: a long retention keeps it for years of test runs.
      PICTOR_HISTORY_RETENTION_DAYS: '3650',
      DISCORD_TOKEN: discord.botToken,
      DISCORD_APPLICATION_ID: discord.applicationId,
      DISCORD_API_BASE_URL: discord.apiBaseUrl,
      ...(link && { REDIS_URL: requireRedisUrl(redis), PICTOR_REDIS_PREFIX: prefix }),
    };
    const service = await startService(env, () => {}, { writeLog: (line) => log.push(line) });
    let stopped = false;
    defer(async () => {
      if (!stopped) await service.stop();
    });
    const moved = log.filter((line) => line.includes('moved what an older version kept'));
    expect(moved).toHaveLength(1);
    expect(JSON.parse(moved[0]!)).toMatchObject({ moved: { 'chat settings': 2, 'history entries': 3 } });
    // The ledger's usage.jsonl, prompts inside, moved once into day files with the prompt apart: said in one line.
    const movedUsage = log.filter((line) => line.includes('usage records of usage.jsonl'));
    expect(movedUsage).toHaveLength(backend === 'file' ? 1 : 0);
    if (backend === 'file') {
      expect(JSON.parse(movedUsage[0]!)).toMatchObject({ records: 2, damaged: 0 });
      expect((await readdir(dataDir)).filter((name) => name.startsWith('usage'))).toEqual(['usage']);
    }

    // The history: both of alice's jobs, newest first, with Reroll buttons.
    const history = await discordAnswer(discord, discord.slashCommand('imagine-history', {}));
    expect(history.content).toContain('make it OLDMARKER blue');
    expect(history.content).toContain('a lighthouse OLDMARKER at dusk');

    // A button of a job made before the upgrade: the edit runs again, with its input image as it was kept.
    const reroll = discord.clickButton(history, buttonsOf(history).find((b) => b.label === 'Reroll 1')!.custom_id);
    await discordResult(discord, reroll);
    const edits = upstream.emulator.requests.filter((r) => r.route === 'edits');
    expect(edits).toHaveLength(1);
    expect(edits[0]!.fields).toMatchObject({ prompt: 'make it OLDMARKER blue' });
    expect(Buffer.from(edits[0]!.images[0]!.bytes!).equals(await oldEditInput())).toBe(true);

    // The server's settings: a blocked word, at most 2 images; and the cap its admin set.
    expect((await discordAnswer(discord, discord.slashCommand('imagine', { prompt: 'a forbidden fruit' }))).content).toContain('blocked here');
    expect((await discordAnswer(discord, discord.slashCommand('imagine', { prompt: 'three pears', count: 3 }))).content).toContain('At most 2 images');
    expect((await discordAnswer(discord, discord.slashCommand('imagine-usage', {}))).content).toMatch(/Your daily budget \(set by a server admin\): \$[\d.]+ left of \$0\.50/);
    expect(upstream.emulator.requests).toHaveLength(1);

    // The job a crash left running before the upgrade is swept once: its requester is told in the channel.
    await discord.waitFor(() => discord.channelMessages().find((m) => m.content.includes(`<@${bob.id}>`) && m.content.includes('restarted')), 'the old running job swept');

    await service.stop();
    stopped = true;
    // What was moved is gone from where it was: no copy of a prompt is left behind.
    if (link) {
      for (const pattern of ['history:*', 'slack:installation:*', 'quota:settings:*', 'quota:seen:*']) expect(await link.commands.keys(`${prefix}:${pattern}`)).toEqual([]);
    } else {
      expect(await readdir(join(dataDir, 'discord'))).not.toContain('jobs.json');
      expect(await readdir(join(dataDir, 'discord'))).not.toContain('jobs.json.bak');
      expect(await readdir(join(dataDir, 'discord'))).not.toContain('images');
      expect(await readdir(dataDir)).not.toContain('history.json');
      expect(await readdir(dataDir)).not.toContain('slack-replay.json');
      expect(JSON.parse(await readFile(join(dataDir, 'cap-overrides.json'), 'utf8'))).not.toHaveProperty('settings');
    }

    // Slack's installation and request are read by the new version; a second start moves nothing.
    const again: string[] = [];
    const logger = { ...silentLogger(), info: (obj: object, msg?: string) => void again.push(`${JSON.stringify(obj)} ${msg ?? ''}`) };
    const state = await openBotState({ dataDir, redis: link, logger });
    defer(() => state.close());
    const installation = await slackInstallationStore(state.store.space<Installation>(state.spaces.slackInstallations), silentLogger()).fetchInstallation({
      teamId: 'T0TEAM',
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(installation.bot?.token).toBe('xoxb-old-install-token');
    expect(await new RequestStore(state).get(OLD_REQUEST[backend])).toMatchObject({ prompt: 'a slack OLDMARKER fox', outputFiles: [{ id: 'F0OUT' }] });
    expect(again.filter((line) => line.includes('moved'))).toEqual([]);
    expect(OLD_IDS.alice).not.toBe(ids.alice);
  }, 60_000);

  it.skipIf(skip)('takes the chat settings 0.1 kept in the account’s ledger also when PICTOR_BASE_URL now answers as a Pictor emulator (whose jobs have a ledger of their own)', async () => {
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    defer(() => discord.close());
    // A Pictor emulator at PICTOR_BASE_URL: 0.1 counted its jobs in the account's ledger, this version in the emulator's.
    const upstream = await startUpstream(defer, 0);
    const ids = { alice: discord.user.id, bob: discord.newUser('bob').id, channel: discord.channelId, guild: discord.guildId, application: discord.applicationId };
    const { dataDir, prefix, link } = await whatOldLeft(backend, ids);
    const log: string[] = [];
    const service = await startService(
      {
        PICTOR_LOG_LEVEL: 'info',
        PICTOR_DATA_DIR: dataDir,
        PICTOR_BASE_URL: upstream.url,
        PICTOR_API_KEY: DEV_API_KEY,
        PICTOR_PARTIAL_IMAGES: '0',
        DISCORD_TOKEN: discord.botToken,
        DISCORD_APPLICATION_ID: discord.applicationId,
        DISCORD_API_BASE_URL: discord.apiBaseUrl,
        ...(link && { REDIS_URL: requireRedisUrl(redis), PICTOR_REDIS_PREFIX: prefix }),
      },
      () => {},
      { writeLog: (line) => log.push(line) },
    );
    defer(() => service.stop());
    const moved = log.filter((line) => line.includes('moved what an older version kept'));
    expect(moved).toHaveLength(1);
    expect(JSON.parse(moved[0]!)).toMatchObject({ moved: { 'chat settings': 2 } });
    // The server's settings hold: its blocked word is refused before anything is sent.
    expect((await discordAnswer(discord, discord.slashCommand('imagine', { prompt: 'a forbidden fruit' }))).content).toContain('blocked here');
    expect(upstream.emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(0);
    // Taken from the account's ledger: no copy left there.
    if (link) expect(await link.commands.keys(`${prefix}:quota:settings:*`)).toEqual([]);
    else expect(JSON.parse(await readFile(join(dataDir, 'cap-overrides.json'), 'utf8'))).not.toHaveProperty('settings');
  }, 60_000);
});

describe('the 0.1 upgrade stopped midway', () => {
  it('leaves the chat settings in the ledger when writing them into the bots’ state fails, and the next start moves them', async () => {
    const dataDir = await tempDataDir(defer, 'pictor-upgrade-');
    const ledgerDir = join(dataDir, 'ledger');
    await mkdir(ledgerDir);
    const channels = { value: ['C1'], by: 'discord:admin', at: 1 };
    await writeFile(join(ledgerDir, 'cap-overrides.json'), JSON.stringify({ version: 1, scopes: {}, settings: { 'discord:g1': { channels } } }));
    const ledger = new FileQuotaStore({ dir: ledgerDir });
    defer(() => ledger.close());
    const spaces = botSpaces();
    const store = new FileStateStore({ dataDir });
    defer(() => store.close());
    let blip = true;
    // The bots' state fails the settings' write once, as a Redis blip would.
    const blinking = new Proxy(store, {
      get(target, name) {
        if (name !== 'space') return Reflect.get(target, name, target) as unknown;
        return (settings: Parameters<StateStore['space']>[0]) => {
          const space = target.space(settings);
          if (!blip || settings !== spaces.scopeSettings) return space;
          return new Proxy(space, { get: (s, n) => (n === 'update' ? () => Promise.reject(new Error('the bots’ state did not answer')) : (Reflect.get(s, n, s) as unknown)) });
        };
      },
    }) as StateStore;
    const upgrade = () => upgradeOldLayout({ dataDir, ledger, logger: silentLogger(), store: blinking, spaces, redis: undefined });

    await expect(upgrade()).rejects.toThrow('the bots’ state did not answer');
    blip = false;
    await upgrade();
    expect(await store.space(spaces.scopeSettings).get(stateKeyOf('discord:g1'))).toEqual({ channels });
  });
});

/**
 * A data folder (or a Redis prefix) a 0.1 process still writes chat settings to beside this version (a rolling deploy):
 * `oldSets` writes a setting as 0.1 did (its ledger's `cap-overrides.json`, or `<p>:quota:settings:<scope>`), `start`
 * opens the ledger and the bots' state as a start does and answers what the state then keeps for the scope.
 */
async function besideAnOldProcess(backend: 'file' | 'redis') {
  const dataDir = await tempDataDir(defer, 'pictor-upgrade-');
  const prefix = uniquePrefix('upgrade-later');
  const link = backend === 'redis' ? await RedisLink.open({ url: requireRedisUrl(redis), prefix }) : undefined;
  defer(async () => {
    await link?.close();
    if (link) await deleteKeys(requireRedisUrl(redis), prefix);
  });
  const file = join(dataDir, 'cap-overrides.json');
  const oldSets = async (scopeKey: string, entries: ScopeSettingEntries) => {
    if (link) {
      for (const [name, entry] of Object.entries(entries)) await link.commands.hset(`${prefix}:quota:settings:${scopeKey}`, name, JSON.stringify(entry));
      return;
    }
    const kept = JSON.parse(await readFile(file, 'utf8').catch(() => '{"version":1,"scopes":{}}')) as { settings?: Record<string, ScopeSettingEntries> };
    kept.settings = { ...kept.settings, [scopeKey]: { ...kept.settings?.[scopeKey], ...entries } };
    await writeFile(file, JSON.stringify(kept));
  };
  const inLedger = async () =>
    link ? await link.commands.keys(`${prefix}:quota:settings:*`) : Object.keys((JSON.parse(await readFile(file, 'utf8')) as { settings?: object }).settings ?? {});
  const moved: unknown[] = [];
  const warned: unknown[] = [];
  /** Damages the scope's record in the bots' state (not JSON), as a torn write or a hand edit leaves it. */
  const damage = async (scopeKey: string) => {
    const spaces = botSpaces();
    if (!link) return writeFile(join(dataDir, spaces.scopeSettings.dir, `${stateKeyOf(scopeKey)}.json`), '{"pictorState":1,"holder":null,"value":{"blockedW');
    const [record] = await link.commands.keys(`${prefix}:*${spaces.scopeSettings.name}*:r:${stateKeyOf(scopeKey)}`);
    await link.commands.set(record!, '{"blockedW', 'KEEPTTL');
  };
  /** `before` runs on the state's settings once it is open; `withLedger: false` opens the state as a process that takes nothing. */
  const start = async (scopeKey: string, before?: (space: ReturnType<StateStore['space']>) => Promise<void>, withLedger = true) => {
    const ledger = !withLedger ? undefined : link ? new RedisQuotaStore({ redis: link.commands, prefix }) : new FileQuotaStore({ dir: dataDir });
    const logger = {
      ...silentLogger(),
      info: (obj: object, msg?: string) => void (msg?.startsWith('moved what an older version kept') && moved.push(obj)),
      warn: (obj: object) => void warned.push(obj),
    };
    try {
      const state = await openBotState({ dataDir, redis: link, ledger, logger });
      try {
        const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
        await before?.(space as ReturnType<StateStore['space']>);
        return await space.get(stateKeyOf(scopeKey));
      } finally {
        await state.close();
      }
    } finally {
      await ledger?.close();
    }
  };
  return { oldSets, inLedger, start, moved, warned, damage };
}

describe.each([
  { backend: 'file' as const, skip: undefined },
  { backend: 'redis' as const, skip: redis.skipReason },
])('a chat setting a 0.1 process still running writes after the upgrade ($backend)', ({ backend, skip }) => {
  const by = 'discord:admin';

  it.skipIf(skip)('is what the bots’ state serves after the next start, taken from the ledger with a log line', async () => {
    const old = await besideAnOldProcess(backend);
    await old.oldSets('discord:g1', { blockedWords: { value: ['forbidden'], by, at: 1 }, maxImages: { value: 2, by, at: 1 } });
    expect(await old.start('discord:g1')).toEqual({ blockedWords: { value: ['forbidden'], by, at: 1 }, maxImages: { value: 2, by, at: 1 } });

    // The 0.1 process, still running, changes both: each is newer than the state's copy.
    await old.oldSets('discord:g1', { blockedWords: { value: ['forbidden', 'newword'], by, at: 3 }, maxImages: { value: 4, by, at: 3 } });
    expect(await old.start('discord:g1')).toEqual({ blockedWords: { value: ['forbidden', 'newword'], by, at: 3 }, maxImages: { value: 4, by, at: 3 } });
    expect(await old.inLedger()).toEqual([]);
    expect(old.moved).toEqual([{ moved: { 'chat settings': 1 } }, { moved: { 'chat settings': 1 } }]);
    // Nothing left to take: a third start says nothing.
    await old.start('discord:g1');
    expect(old.moved).toHaveLength(2);
  });

  it.skipIf(skip)('never lets an older copy in the ledger overwrite a newer one in the state: each setting goes by when it was set', async () => {
    const old = await besideAnOldProcess(backend);
    await old.start('discord:g1', async (space) => {
      await space.put(stateKeyOf('discord:g1'), { maxImages: { value: 4, by, at: 10 }, blockedWords: { value: ['set-here'], by, at: 10 } });
    });
    await old.oldSets('discord:g1', { maxImages: { value: 3, by, at: 5 }, blockedWords: { value: ['set-by-0.1'], by, at: 20 }, channels: { value: ['C1'], by, at: 1 } });

    expect(await old.start('discord:g1')).toEqual({
      maxImages: { value: 4, by, at: 10 },
      blockedWords: { value: ['set-by-0.1'], by, at: 20 },
      channels: { value: ['C1'], by, at: 1 },
    });
    expect(await old.inLedger()).toEqual([]);
  });

  it.skipIf(skip)('brings back a setting 0.1 wrote after the upgrade that an admin then cleared through this version: a clear leaves no date (docs/shared-limits.md)', async () => {
    const old = await besideAnOldProcess(backend);
    await old.oldSets('discord:g1', { maxImages: { value: 2, by, at: 1 }, channels: { value: ['C1'], by, at: 1 } });
    await old.start('discord:g1');
    await old.oldSets('discord:g1', { maxImages: { value: 3, by, at: 5 } });
    // The running process (which took what 0.1 kept at its start): an admin clears the image limit after 0.1 set it.
    await old.start('discord:g1', async (space) => void (await space.update(stateKeyOf('discord:g1'), (now) => ({ channels: (now as ScopeSettingEntries).channels }))), false);

    expect(await old.start('discord:g1')).toEqual({ maxImages: { value: 3, by, at: 5 }, channels: { value: ['C1'], by, at: 1 } });
  });
  it.skipIf(skip)('leaves a damaged settings record locked (fail closed) and the scope’s 0.1 settings in the ledger, with a warning naming the scope, until an admin repairs it', async () => {
    const old = await besideAnOldProcess(backend);
    await old.start('discord:g1', async (space) => void (await space.put(stateKeyOf('discord:g1'), { blockedWords: { value: ['forbidden'], by, at: 10 } })));
    await old.damage('discord:g1');
    await old.oldSets('discord:g1', { maxImages: { value: 3, by, at: 20 } });

    let found: unknown;
    await old.start('discord:g1', async (space) => void (found = await space.read(stateKeyOf('discord:g1'))));
    // Still damaged: the server's blocked words stay unreadable (every job refused) rather than lifted by the take.
    expect(found).toBe(UNREADABLE);
    expect(await old.inLedger()).toEqual([expect.stringMatching(/(^|:)discord:g1$/)]);
    expect(old.warned).toEqual([expect.objectContaining({ scopeKey: 'discord:g1' })]);
    expect(old.moved).toEqual([]);

    // The admin's repair writes the record anew; the next start then takes what 0.1 kept, by when each was set.
    const repaired = { blockedWords: { value: ['forbidden'], by, at: 30 } };
    await old.start('discord:g1', async (space) => void (await space.update(stateKeyOf('discord:g1'), () => repaired)), false);
    expect(await old.start('discord:g1')).toEqual({ ...repaired, maxImages: { value: 3, by, at: 20 } });
    expect(await old.inLedger()).toEqual([]);
  });
});
