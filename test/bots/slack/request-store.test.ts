import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RequestStore } from '../../../bots/slack/RequestStore.js';

const request = { kind: 'generate' as const, prompt: 'a private prompt', options: {}, teamId: 'T1', userId: 'U1', channelId: 'C1' };

describe('the Slack request store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pictor-requests-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps its folders private (0700) and its files readable by the bot’s user only (0600), older ones included', async () => {
    const dataDir = join(dir, 'data');
    await mkdir(join(dataDir, 'slack', 'requests'), { recursive: true, mode: 0o755 });
    await chmod(join(dataDir, 'slack'), 0o755);
    const old = join(dataDir, 'slack', 'requests', 'AAAAAAAAAAAAAAAA.json');
    await writeFile(old, '{}', { mode: 0o644 });
    const store = new RequestStore({ dataDir });
    await store.open();
    const saved = await store.create(request);
    store.close();
    const mode = async (path: string) => (await stat(path)).mode & 0o777;
    expect(await mode(join(dataDir, 'slack'))).toBe(0o700);
    expect(await mode(store.dir!)).toBe(0o700);
    expect(await mode(join(store.dir!, `${saved.id}.json`))).toBe(0o600);
    expect(await mode(old)).toBe(0o600);
  });

  it('prunes requests past their age while running, not only at start', async () => {
    const store = new RequestStore({ dataDir: dir, maxAgeDays: 0.5 / 86_400, pruneEveryMs: 100 });
    await store.open();
    try {
      const saved = await store.create(request);
      expect(await store.get(saved.id)).toBeDefined();
      await new Promise((r) => setTimeout(r, 1200));
      expect(await store.get(saved.id)).toBeUndefined();
      expect(await readdir(store.dir!)).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('reads request files of older versions (the bare record), and hands an active one to the sweep once', async () => {
    const folder = join(dir, 'slack', 'requests');
    await mkdir(folder, { recursive: true });
    const old = { version: 1, id: 'OLDOLDOLDOLDOLD1', kind: 'generate', prompt: 'from before', options: {}, teamId: 'T1', userId: 'U1', channelId: 'C1', messageTs: '1.2', createdAt: 1, status: 'active' };
    const ended = { ...old, id: 'OLDOLDOLDOLDOLD2', status: 'ended' };
    await writeFile(join(folder, `${old.id}.json`), JSON.stringify(old));
    await writeFile(join(folder, `${ended.id}.json`), JSON.stringify(ended));
    const store = new RequestStore({ dataDir: dir });
    await store.open();
    try {
      expect(await store.get(old.id)).toMatchObject({ prompt: 'from before', status: 'active' });
      expect((await store.claimInterrupted()).map((r) => r.id)).toEqual([old.id]);
      expect(await store.claimInterrupted()).toEqual([]);
      expect(await store.get(ended.id)).toMatchObject({ status: 'ended' });
    } finally {
      store.close();
    }
  });
});
