import { describe, expect, it, vi } from 'vitest';
import { settingsInState } from '../../../bots/runner/scope-settings.js';
import { openBotState } from '../../../bots/state/index.js';
import { RedisStateStore } from '../../../bots/state/RedisStateStore.js';
import { stateKeyOf } from '../../../bots/state/spaces.js';
import { RedisQuotaStore } from '../../../src/spend/RedisQuotaStore.js';
import { RedisLink, silentLogger, type ScopeSettingEntries } from '../../../src/internal.js';
import { restoreOldRedis } from '../../helpers/old-layout.js';
import { upgradeGiveUpHeard } from '../../helpers/upgrade-lease.js';
import { tempDataDir, useCleanup } from '../../helpers/service-fakes.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { startThrowawayRedis } from '../../setup/redis-server.js';
import { spyOnInstance } from '../../helpers/instance-spy.js';

const defer = useCleanup();
const redis = testRedis();
const GUILD = 'discord:333333333333333333';
/**
 * Short leases: a process waiting for another's upgrade looks again every third of one. Not shorter: a holder gives its
 * lease up when Redis has not confirmed it for two thirds of one, which an event loop held up on a busy machine must not reach.
 */
const leaseMs = 1_000;

/** One process on a Redis holding what 0.1 kept under `prefix`: its own link and ledger, `takeLegacy` spied. */
async function replica(prefix: string, url = requireRedisUrl(redis)) {
  const link = await RedisLink.open({ url, prefix });
  const ledger = new RedisQuotaStore({ redis: link.commands, prefix });
  defer(async () => {
    await ledger.close();
    await link.close();
  });
  const take = ledger.takeLegacy.bind(ledger);
  return { link, ledger, take, takeLegacy: vi.spyOn(ledger, 'takeLegacy') };
}

async function oldRedis(url = requireRedisUrl(redis)) {
  const prefix = uniquePrefix('upgrade-once');
  defer(() => deleteKeys(url, prefix));
  const first = await replica(prefix, url);
  await restoreOldRedis(first.link.commands, prefix, {});
  return { prefix, first, dataDir: await tempDataDir(defer, 'pictor-upgrade-once-') };
}

describe.skipIf(redis.skipReason)('the 0.1 upgrade with replicas on one Redis', () => {
  it('is done by one process: the second starting meanwhile takes nothing, so a setting an admin cleared after the first start stays cleared', async () => {
    const { prefix, first: a, dataDir } = await oldRedis();
    const b = await replica(prefix);
    // B starts while A is taking the records; A writes them only once B has either read them too or found A at it
    // five times (longer than a lease: A's is renewed meanwhile).
    let bThere!: () => void;
    const bArrived = new Promise<void>((resolve) => (bThere = resolve));
    const setByB = b.link.commands.set.bind(b.link.commands) as (...args: unknown[]) => Promise<unknown>;
    let tries = 0;
    vi.spyOn(b.link.commands, 'set').mockImplementation(((...args: unknown[]) => {
      if (String(args[0]).endsWith(':bots:upgrading') && ++tries === 5) bThere();
      return setByB(...args);
    }) as never);
    let cleared!: () => void;
    const adminCleared = new Promise<void>((resolve) => (cleared = resolve));
    const handedToB: unknown[] = [];
    b.takeLegacy.mockImplementation((accept) => b.take(async (records) => (handedToB.push(records), bThere(), await adminCleared, await accept(records))));
    let bStarted: ReturnType<typeof openBotState> | undefined;
    a.takeLegacy.mockImplementation((accept) => a.take(async (records) => {
      bStarted = openBotState({ dataDir, redis: b.link, ledger: b.ledger, logger: silentLogger(), leaseMs });
      await bArrived;
      await accept(records);
    }));

    const stateA = await openBotState({ dataDir, redis: a.link, ledger: a.ledger, logger: silentLogger(), leaseMs });
    defer(() => stateA.close());
    const settings = settingsInState(stateA.store.space<ScopeSettingEntries>(stateA.spaces.scopeSettings));
    expect((await settings.get(GUILD)).values.blockedWords).toEqual(['forbidden']);
    await settings.set(GUILD, 'blockedWords', undefined, { by: 'discord:admin', at: Date.now() });
    cleared();
    const stateB = await bStarted!;
    defer(() => stateB.close());

    const stored = await stateB.store.space<ScopeSettingEntries>(stateB.spaces.scopeSettings).get(stateKeyOf(GUILD));
    expect(stored).not.toHaveProperty('blockedWords');
    expect(stored).toHaveProperty('maxImages');
    expect(a.takeLegacy).toHaveBeenCalledTimes(1);
    // B looks at the ledger once the upgrade is done (as every start does, for what a 0.1 process wrote since): nothing is left.
    expect(handedToB).toEqual([{ settings: {}, seen: [] }]);
    expect(await a.link.commands.exists(`${prefix}:bots:upgrading`)).toBe(0);
  });

  it('is given up by a process whose lease lapsed while it upgraded: its start fails with state_upgrade_lost and the records are taken once, by the process that took the upgrade over', async () => {
    const { prefix, first: a, dataDir } = await oldRedis();
    const b = await replica(prefix);
    // A's renewal finds the lease gone (held up: a blocked event loop, a slow Redis): A gives the upgrade up.
    const aLost = upgradeGiveUpHeard();
    let bStarted: ReturnType<typeof openBotState> | undefined;
    let accepted = 0;
    a.takeLegacy.mockImplementation((accept) => a.take(async (records) => {
      await a.link.commands.del(`${prefix}:bots:upgrading`);
      bStarted = openBotState({ dataDir, redis: b.link, ledger: b.ledger, logger: silentLogger(), leaseMs });
      await bStarted;
      await aLost.gaveUp;
      await accept(records);
      accepted += 1;
    }));
    b.takeLegacy.mockImplementation((accept) => b.take(async (records) => void (await accept(records), (accepted += 1))));

    await expect(openBotState({ dataDir, redis: a.link, ledger: a.ledger, logger: aLost.logger, leaseMs })).rejects.toMatchObject({
      code: 'state_upgrade_lost',
      message: expect.stringMatching(/bots:upgrading.*start this one again/),
    });
    const stateB = await bStarted!;
    defer(() => stateB.close());
    expect(accepted).toBe(1);
    expect(b.takeLegacy).toHaveBeenCalledTimes(1);
    expect(await stateB.store.space(stateB.spaces.scopeSettings).get(stateKeyOf(GUILD))).toHaveProperty('blockedWords');
    expect(await a.link.commands.get(`${prefix}:bots:layout`)).toBe('2');
    // B's lease was given back, and A did not take one again.
    expect(await a.link.commands.exists(`${prefix}:bots:upgrading`)).toBe(0);
  });

  it.each([
    ['the chat settings', { settings: { [GUILD]: { maxImages: { value: 2, by: 'discord:admin', at: 1 } }, 'discord:444444444444444444': { maxImages: { value: 3, by: 'discord:admin', at: 1 } } }, seen: [] }],
    ['the Slack signatures seen', { settings: {}, seen: ['v0=first-signature', 'v0=second-signature'] }],
  ])('stops between two records of %s it moves once its lease is given up: the step waiting as it was lost writes no further record', async (_, records) => {
    const { prefix, first: a, dataDir } = await oldRedis();
    const aLost = upgradeGiveUpHeard();
    // The first record's write waits until A has given its lease up (another process may hold the upgrade by then).
    const written: string[] = [];
    let moving = false;
    const spaceOf = RedisStateStore.prototype.space;
    // This test's stores (under its prefix), not another file's.
    const spied = spyOnInstance(RedisStateStore.prototype, 'space', (store) => store.leaseKey(store.owner) === `${prefix}:bots:lease:${store.owner}`);
    defer(async () => void vi.restoreAllMocks());
    spied.mockImplementation(function (this: RedisStateStore, definition) {
      const space = spaceOf.call(this, definition);
      if (!moving) return space;
      const wrote = async <R>(key: string, write: Promise<R>) => {
        const result = await write;
        written.push(key);
        if (written.length === 1) {
          await a.link.commands.del(`${prefix}:bots:upgrading`);
          await aLost.gaveUp;
        }
        return result;
      };
      const [update, claimOnce] = [space.update.bind(space), space.claimOnce.bind(space)];
      return Object.assign(space, {
        update: (key: string, change: never) => wrote(key, update(key, change)),
        claimOnce: (key: string) => wrote(key, claimOnce(key)),
      });
    } as typeof spaceOf);
    a.takeLegacy.mockImplementation((accept) => a.take(async () => {
      moving = true;
      try {
        await accept(records);
      } finally {
        moving = false;
      }
    }));

    await expect(openBotState({ dataDir, redis: a.link, ledger: a.ledger, logger: aLost.logger, leaseMs })).rejects.toMatchObject({ code: 'state_upgrade_lost' });
    expect(written).toHaveLength(1);
  });

  it('is taken over once the lease of a process that died upgrading lapses', async () => {
    const { prefix, first, dataDir } = await oldRedis();
    await first.link.commands.set(`${prefix}:bots:upgrading`, 'a-process-gone', 'PX', leaseMs);

    const state = await openBotState({ dataDir, redis: first.link, ledger: first.ledger, logger: silentLogger(), leaseMs });
    defer(() => state.close());
    expect(first.takeLegacy).toHaveBeenCalledTimes(1);
    expect(await state.store.space(state.spaces.scopeSettings).get(stateKeyOf(GUILD))).toHaveProperty('blockedWords');
    expect(await first.link.commands.get(`${prefix}:bots:layout`)).toBe('2');
  });

  it('fails the start with state_upgrade_held when the process upgrading neither finishes nor lets its lease lapse within the bound', async () => {
    const { prefix, first, dataDir } = await oldRedis();
    await first.link.commands.set(`${prefix}:bots:upgrading`, 'a-process-stuck', 'PX', 60_000);

    await expect(openBotState({ dataDir, redis: first.link, ledger: first.ledger, logger: silentLogger(), leaseMs, upgradeWaitMs: 300 })).rejects.toMatchObject({
      code: 'state_upgrade_held',
      message: expect.stringMatching(/bots:upgrading.*PICTOR_REPLICA_LEASE_SECONDS/),
    });
    expect(first.takeLegacy).not.toHaveBeenCalled();
    expect(await first.link.commands.exists(`${prefix}:quota:settings:${GUILD}`)).toBe(1);
    // Its own lease was given back: the live processes are the other one's.
    expect(await first.link.commands.keys(`${prefix}:bots:lease:*`)).toEqual([]);
  });
});

describe.skipIf(redis.skipReason)('the 0.1 upgrade when its Redis stops answering (a Redis of its own, paused)', () => {
  it('is given up by its holder before the lease can lapse, while the step it is in waits: its start fails with state_upgrade_lost and the records are merged once, by the process that took the upgrade over', async () => {
    requireRedisUrl(redis);
    const own = await startThrowawayRedis();
    if (!own) throw new Error('redis-server is needed to pause the Redis under an upgrade');
    defer(() => own.stop());
    const { prefix, first: a, dataDir } = await oldRedis(own.url);
    const b = await replica(prefix, own.url);
    const pauser = await RedisLink.open({ url: own.url, prefix });
    defer(() => pauser.close());
    const [aLogger, bLogger] = [silentLogger(), silentLogger()];
    const gaveUp = vi.spyOn(aLogger, 'warn');
    const waiting = vi.spyOn(bLogger, 'info');
    let bStarted: ReturnType<typeof openBotState> | undefined;
    let accepted = 0;
    a.takeLegacy.mockImplementation((accept) => a.take(async (records) => {
      // B waits for the upgrade A holds; then Redis answers nobody (its clients' commands wait, its clock runs on) for
      // far longer than a lease.
      bStarted = openBotState({ dataDir, redis: b.link, ledger: b.ledger, logger: bLogger, leaseMs });
      await vi.waitFor(() => expect(waiting).toHaveBeenCalledWith(expect.anything(), expect.stringMatching(/^waiting for another process/)), { timeout: 15_000 });
      await pauser.commands.call('CLIENT', 'PAUSE', String(3 * leaseMs), 'ALL');
      // A cannot have had an answer since: what it knows is that none came. It gives the lease up before it can lapse.
      await vi.waitFor(() => expect(gaveUp).toHaveBeenCalledWith({ key: `${prefix}:bots:upgrading`, why: 'Redis has not confirmed the lease in time' }, expect.any(String)), { timeout: 4 * leaseMs });
      await accept(records);
      accepted += 1;
    }));
    b.takeLegacy.mockImplementation((accept) => b.take(async (records) => void (await accept(records), (accepted += 1))));

    await expect(openBotState({ dataDir, redis: a.link, ledger: a.ledger, logger: aLogger, leaseMs })).rejects.toMatchObject({ code: 'state_upgrade_lost' });
    const stateB = await bStarted!;
    defer(() => stateB.close());
    expect(accepted).toBe(1);
    expect(b.takeLegacy).toHaveBeenCalledTimes(1);
    expect(await stateB.store.space(stateB.spaces.scopeSettings).get(stateKeyOf(GUILD))).toHaveProperty('blockedWords');
    expect(await b.link.commands.get(`${prefix}:bots:layout`)).toBe('2');
    expect(await b.link.commands.exists(`${prefix}:bots:upgrading`)).toBe(0);
  });
});
