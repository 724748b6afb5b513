import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { openBotState } from '../../../bots/state/index.js';
import { silentLogger } from '../../../src/internal.js';

const request = { kind: 'generate' as const, prompt: 'a private prompt', options: {}, teamId: 'T1', userId: 'U1', channelId: 'C1', status: 'active' as const };

/** The requests are a space of the bots' state: its folders, bounds and backends are the state store's contract. */
describe('the Slack request store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pictor-requests-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads request files of older versions (the bare record), and hands an active one to the sweep once', async () => {
    const folder = join(dir, 'slack', 'requests');
    await mkdir(folder, { recursive: true });
    const old = { version: 1, id: 'OLDOLDOLDOLDOLD1', kind: 'generate', prompt: 'from before', options: {}, teamId: 'T1', userId: 'U1', channelId: 'C1', messageTs: '1.2', createdAt: 1, status: 'active' };
    const ended = { ...old, id: 'OLDOLDOLDOLDOLD2', status: 'ended' };
    await writeFile(join(folder, `${old.id}.json`), JSON.stringify(old));
    await writeFile(join(folder, `${ended.id}.json`), JSON.stringify(ended));
    const state = await openBotState({ dataDir: dir, logger: silentLogger() });
    const store = new RequestStore(state);
    try {
      expect(await store.get(old.id)).toMatchObject({ prompt: 'from before', status: 'active' });
      expect((await store.claimInterrupted()).map((r) => r.id)).toEqual([old.id]);
      expect(await store.claimInterrupted()).toEqual([]);
      expect(await store.get(ended.id)).toMatchObject({ status: 'ended' });
    } finally {
      await state.close();
    }
  });

  it('releases a claimed request with nothing left to do as it is then: one its member’s forget deleted after the claim stays deleted', async () => {
    const state = await openBotState({ dataDir: dir, logger: silentLogger() });
    const saved = await new RequestStore(state).create(request);
    // Held though ended with no end to record (a process stopped between its two writes): the claim releases it.
    await new RequestStore(state).space.put(saved.id, { ...saved, status: 'ended' }, { hold: true });
    await state.close();
    const next = await openBotState({ dataDir: dir, logger: silentLogger() });
    const store = new RequestStore(next);
    try {
      const claimOrphans = store.space.claimOrphans.bind(store.space);
      vi.spyOn(store.space, 'claimOrphans').mockImplementation(async () => {
        const claimed = await claimOrphans();
        // The member's forget, between the claim and the release.
        await store.space.delete(saved.id);
        return claimed;
      });
      expect(await store.claimInterrupted()).toEqual([]);
      expect(await store.get(saved.id)).toBeUndefined();
    } finally {
      await next.close();
    }
  });

  it('hands a request’s Workflow Builder step, token and all, to one taker only, and keeps it no more', async () => {
    const state = await openBotState({ dataDir: dir, logger: silentLogger() });
    const store = new RequestStore(state);
    try {
      const saved = await store.create({ ...request, step: { executionId: 'Fx1', token: 'xwfp-T1-secret' } });
      const [first, second] = await Promise.all([store.takeStep(saved.id), store.takeStep(saved.id)]);
      expect([first, second].filter(Boolean)).toEqual([{ executionId: 'Fx1', token: 'xwfp-T1-secret' }]);
      expect(JSON.stringify(await store.space.get(saved.id))).not.toContain('xwfp-T1-secret');
      expect(await store.get(saved.id)).toMatchObject({ prompt: 'a private prompt', status: 'active' });
    } finally {
      await state.close();
    }
  });

  it('changes a request in one step, and lets go of it (nobody sweeps it) once its end is shown', async () => {
    const state = await openBotState({ dataDir: dir, logger: silentLogger() });
    const store = new RequestStore(state);
    const saved = await store.create(request);
    await Promise.all([store.update(saved.id, { messageTs: '1.1' }), store.update(saved.id, { threadTs: '0.9' })]);
    expect(await store.get(saved.id)).toMatchObject({ messageTs: '1.1', threadTs: '0.9', status: 'active' });
    await store.update(saved.id, { status: 'ended' });
    await state.close();
    const next = await openBotState({ dataDir: dir, logger: silentLogger() });
    expect(await new RequestStore(next).claimInterrupted()).toEqual([]);
    expect(await new RequestStore(next).update('not-an-id', { status: 'ended' })).toBeUndefined();
    await next.close();
  });
});

describe('a Slack request whose end its message showed', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pictor-requests-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** What the next start's sweep is handed of the data folder's requests. */
  async function claimedAfterRestart(): Promise<string[]> {
    const next = await openBotState({ dataDir: dir, logger: silentLogger() });
    try {
      return (await new RequestStore(next).claimInterrupted()).map((r) => r.id);
    } finally {
      await next.close();
    }
  }

  const end = { type: 'completed' as const, size: '1024x1024', quality: 'low', cost: { totalUsd: 0.011 } };

  it('stays held with its end until the runner recorded it, whichever of the two marks comes first, then is let go', async () => {
    const state = await openBotState({ dataDir: dir, logger: silentLogger() });
    const store = new RequestStore(state);
    const viewFirst = await store.create(request);
    const runnerFirst = await store.create(request);
    await store.update(viewFirst.id, { status: 'ended', end });
    await store.update(runnerFirst.id, { endRecorded: true });
    await state.close();
    expect((await claimedAfterRestart()).sort()).toEqual([viewFirst.id, runnerFirst.id].sort());

    const again = await openBotState({ dataDir: dir, logger: silentLogger() });
    const store2 = new RequestStore(again);
    await store2.claimInterrupted();
    // The end, once recorded, is not kept.
    for (const marked of [await store2.update(viewFirst.id, { endRecorded: true }), await store2.update(runnerFirst.id, { status: 'ended', end })]) {
      expect(marked).toMatchObject({ status: 'ended', endRecorded: true });
      expect(marked).not.toHaveProperty('end');
    }
    await again.close();
    expect(await claimedAfterRestart()).toEqual([]);
  });

  it('costs one write a mark, its release in the second one, whichever of the two comes last', async () => {
    const state = await openBotState({ dataDir: dir, logger: silentLogger() });
    const store = new RequestStore(state);
    const viewFirst = await store.create(request);
    const runnerFirst = await store.create(request);
    const updates = vi.spyOn(store.space, 'update');
    const puts = vi.spyOn(store.space, 'put');
    await store.update(viewFirst.id, { status: 'ended', end });
    await store.update(viewFirst.id, { endRecorded: true });
    await store.update(runnerFirst.id, { endRecorded: true });
    await store.update(runnerFirst.id, { status: 'ended', end });
    expect([updates.mock.calls.length, puts.mock.calls.length]).toEqual([4, 0]);
    await state.close();
    expect(await claimedAfterRestart()).toEqual([]);
  });

  it('is handed to the sweep with the end to record, once; one an older version ended (no end kept) is not', async () => {
    const state = await openBotState({ dataDir: dir, logger: silentLogger() });
    const store = new RequestStore(state);
    const shown = await store.create(request);
    const older = await store.create(request);
    await store.update(shown.id, { status: 'ended', end: { type: 'failed', code: 'upstream_error' } });
    await store.update(older.id, { status: 'ended' });
    await state.close();
    const next = await openBotState({ dataDir: dir, logger: silentLogger() });
    const claimed = await new RequestStore(next).claimInterrupted();
    expect(claimed).toMatchObject([{ id: shown.id, status: 'ended', end: { type: 'failed', code: 'upstream_error' } }]);
    expect(await new RequestStore(next).claimInterrupted()).toEqual([]);
    await next.close();
  });
});
